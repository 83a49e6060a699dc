// Hand-written: reading, checking and writing the delegation envelope, as Python's
// accord.contracts.envelope (parse_envelope, to_metadata) and the budget guard
// (accord.protocol.a2a.budget_guard) do. The schema (generated.EnvelopeSchema) says the shape
// and every limit; this file checks it with the rule names Python's errors carry and adds what
// a schema cannot say: the size limit, a deadline with a time zone, the budget left for a turn.
//
// Two differences, on purpose: Python's pydantic coerces lax values ("3" or true for a
// number), this reads JSON as the schema types it, so such an envelope is refused here; and a
// Go map has no order, so where several keys are wrong the first in sorted order is named
// (Python names the first the sender wrote).

package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	g "accord.dev/contract/generated"
)

// MaxEnvelopeBytes: an envelope over this many bytes of JSON is refused (ENV-003).
const MaxEnvelopeBytes = 16 * 1024

var envelopeSchema = func() Object {
	var doc Object
	if err := json.Unmarshal([]byte(g.EnvelopeSchema), &doc); err != nil {
		panic("generated EnvelopeSchema is not JSON: " + err.Error())
	}
	return doc
}()

// schemaAt walks the envelope schema by keys.
func schemaAt(path ...string) Object {
	node := envelopeSchema
	for _, key := range path {
		node, _ = asObject(node[key])
	}
	return node
}

func schemaInt(node Object, key string) (int64, bool) {
	f, ok := node[key].(float64)
	return int64(f), ok
}

// broken is where an envelope broke which rule (the field dotted, the rule as pydantic names it).
type broken struct{ field, rule, message string }

func (b *broken) Error() string { return b.field + ": " + b.message }

// ParseEnvelope reads and checks the envelope in A2A message metadata; nil when absent and
// not required. Its error is INVALID_INPUT as Python's: missing (ENV-001), oversized
// (ENV-003), malformed (ENV-002, details {field, rule, requirement}). The envelope returned is
// the one Python's model holds: defaults filled in, the deadline as Python writes it.
func ParseEnvelope(metadata Object, required bool) (*g.DelegationEnvelope, error) {
	raw, present := metadata[g.DelegationExtensionURI]
	if !present || raw == nil {
		if required {
			return nil, NewError(g.ErrorCodeInvalidInput,
				fmt.Sprintf("delegation envelope missing from message metadata['%s']", g.DelegationExtensionURI),
				Object{"field": "metadata", "requirement": "ENV-001"})
		}
		return nil, nil
	}
	text, err := PythonJSONDumps(raw)
	if err != nil {
		return nil, NewError(g.ErrorCodeInvalidInput, "delegation envelope is not JSON", Object{"field": "envelope", "requirement": "ENV-002"})
	}
	if size := len(text); size > MaxEnvelopeBytes {
		return nil, NewError(g.ErrorCodeInvalidInput,
			fmt.Sprintf("delegation envelope is %d bytes; the limit is %d", size, MaxEnvelopeBytes),
			Object{"field": "envelope", "limit": MaxEnvelopeBytes, "requirement": "ENV-003"})
	}
	envelope, err := readEnvelope(raw)
	if b, ok := err.(*broken); ok {
		return nil, NewError(g.ErrorCodeInvalidInput,
			fmt.Sprintf("delegation envelope field '%s': %s", b.field, b.message),
			Object{"field": b.field, "rule": b.rule, "requirement": "ENV-002"})
	}
	return envelope, err
}

// EnvelopeMetadata is the message metadata entry of an envelope: {extension URI: envelope},
// nulls left out, as Python's DelegationEnvelope.to_metadata writes it.
func EnvelopeMetadata(envelope *g.DelegationEnvelope) Object {
	constraints := Object{}
	for k, v := range envelope.Constraints {
		constraints[k] = v
	}
	refs := []any{}
	for _, r := range envelope.ContextRefs {
		refs = append(refs, r)
	}
	out := Object{
		"goal":        envelope.Goal,
		"constraints": constraints,
		"budget": Object{
			"units": envelope.Budget.Units, "tool_calls": envelope.Budget.ToolCalls,
			"deadline": envelope.Budget.Deadline,
		},
		"context_refs": refs,
		"tenant": Object{
			"app": envelope.Tenant.App, "user": envelope.Tenant.User, "session": envelope.Tenant.Session,
		},
	}
	if envelope.ParentTask != nil {
		out["parent_task"] = *envelope.ParentTask
	}
	if envelope.Traceparent != nil {
		out["traceparent"] = *envelope.Traceparent
	}
	return Object{g.DelegationExtensionURI: out}
}

// Child is what an outgoing call made on behalf of an incoming envelope says of its own.
type Child struct {
	Goal           string
	SpentUnits     int64
	SpentToolCalls int64
	ParentTask     string         // "" for none
	Constraints    map[string]any // only what the skill's contract forwards (ENV-008)
	ContextRefs    []string
}

// ChildEnvelope is the envelope of an outgoing call made on behalf of incoming: the same
// tenant, trace and deadline, the budget less what this agent spent (BUDGET_EXHAUSTED when
// it spent more than it had), this task as parent. Goal, constraints and context refs are
// the child's own: a child gets only what the skill's contract forwards (ENV-008).
func ChildEnvelope(incoming *g.DelegationEnvelope, child Child) (*g.DelegationEnvelope, error) {
	units := incoming.Budget.Units - child.SpentUnits
	toolCalls := incoming.Budget.ToolCalls - child.SpentToolCalls
	if units < 0 || toolCalls < 0 {
		return nil, NewError(g.ErrorCodeBudgetExhausted,
			fmt.Sprintf("spent more than the envelope holds (%d units, %d tool calls left)", units, toolCalls),
			Object{"units": incoming.Budget.Units, "tool_calls": incoming.Budget.ToolCalls})
	}
	out := &g.DelegationEnvelope{
		Goal:        child.Goal,
		Constraints: map[string]any{},
		Budget:      g.Budget{Units: units, ToolCalls: toolCalls, Deadline: incoming.Budget.Deadline},
		ContextRefs: append([]string{}, child.ContextRefs...),
		Tenant:      incoming.Tenant,
		Traceparent: incoming.Traceparent,
	}
	for k, v := range child.Constraints {
		out.Constraints[k] = v
	}
	if child.ParentTask != "" {
		parent := child.ParentTask
		out.ParentTask = &parent
	}
	// The child's envelope obeys the schema too.
	if _, err := readEnvelope(EnvelopeMetadata(out)[g.DelegationExtensionURI]); err != nil {
		if b, ok := err.(*broken); ok {
			return nil, NewError(g.ErrorCodeInvalidInput, fmt.Sprintf("child envelope field '%s': %s", b.field, b.message),
				Object{"field": b.field, "rule": b.rule, "requirement": "ENV-002"})
		}
		return nil, err
	}
	return out, nil
}

// Turn is what a budget check of one more turn needs (BudgetGuard): the totals of earlier
// turns and what a turn costs.
type Turn struct {
	Spent            int64
	ToolCallsSpent   int64
	UnitsPerTurn     int64 // Python's default is 1
	ToolCallsPerTurn int64
	Now              time.Time // zero: now
}

// Allowance is what the budget grants a turn: the time it may take, the totals once it runs.
type Allowance struct {
	Remaining      time.Duration
	Spent          int64
	ToolCallsSpent int64
}

// AdmitTurn is whether the envelope leaves room for one more turn (BudgetGuard.admit):
// BUDGET_EXHAUSTED (ENV-004), or RETRYABLE_TIMEOUT when the deadline has passed (ENV-005),
// with Python's words.
func AdmitTurn(envelope *g.DelegationEnvelope, turn Turn) (Allowance, error) {
	budget := envelope.Budget
	if budget.Units-turn.Spent < turn.UnitsPerTurn {
		return Allowance{}, NewError(g.ErrorCodeBudgetExhausted,
			fmt.Sprintf("budget has %d units left; a turn costs %d", budget.Units-turn.Spent, turn.UnitsPerTurn),
			Object{"units": budget.Units, "spent": turn.Spent, "per_turn": turn.UnitsPerTurn})
	}
	if budget.ToolCalls-turn.ToolCallsSpent < turn.ToolCallsPerTurn {
		return Allowance{}, NewError(g.ErrorCodeBudgetExhausted,
			fmt.Sprintf("budget has %d tool calls left; a turn needs %d", budget.ToolCalls-turn.ToolCallsSpent, turn.ToolCallsPerTurn),
			Object{"tool_calls": budget.ToolCalls, "tool_calls_spent": turn.ToolCallsSpent})
	}
	deadline, err := readDeadline(budget.Deadline)
	if err != nil {
		return Allowance{}, NewError(g.ErrorCodeInvalidInput, "budget.deadline: "+err.Error(), nil)
	}
	now := turn.Now
	if now.IsZero() {
		now = time.Now()
	}
	remaining := deadline.at.Sub(now)
	if remaining <= 0 {
		return Allowance{}, NewError(g.ErrorCodeRetryableTimeout, "the delegation deadline has already passed",
			Object{"deadline": deadline.isoformat})
	}
	return Allowance{Remaining: remaining, Spent: turn.Spent + turn.UnitsPerTurn, ToolCallsSpent: turn.ToolCallsSpent + turn.ToolCallsPerTurn}, nil
}

// -- checking ------------------------------------------------------------------------------

func readEnvelope(raw any) (*g.DelegationEnvelope, error) {
	props := schemaAt("properties")
	o, err := object(raw, "envelope", envelopeSchema["title"].(string))
	if err != nil {
		return nil, err
	}
	env := &g.DelegationEnvelope{}
	if env.Goal, err = str(o, "goal", "", schemaAt("properties", "goal")); err != nil {
		return nil, err
	}
	if env.Constraints, err = readConstraints(o["constraints"], props); err != nil {
		return nil, err
	}
	if env.Budget, err = readBudget(o["budget"]); err != nil {
		return nil, err
	}
	if env.ContextRefs, err = readContextRefs(o["context_refs"]); err != nil {
		return nil, err
	}
	if env.Tenant, err = readTenant(o["tenant"]); err != nil {
		return nil, err
	}
	for _, key := range []string{"parent_task", "traceparent"} {
		value, err := nullable(o, key)
		if err != nil {
			return nil, err
		}
		if key == "parent_task" {
			env.ParentTask = value
		} else {
			env.Traceparent = value
		}
	}
	if err := noExtra(o, props, ""); err != nil {
		return nil, err
	}
	return env, nil
}

func object(value any, field, model string) (Object, error) {
	if value == nil {
		if field != "envelope" {
			return nil, &broken{field, "missing", "Field required"}
		}
	}
	o, ok := value.(map[string]any)
	if !ok {
		if model == "" {
			return nil, &broken{field, "dict_type", "Input should be a valid dictionary"}
		}
		return nil, &broken{field, "model_type", "Input should be a valid dictionary or instance of " + model}
	}
	return o, nil
}

func str(o Object, key, prefix string, rule Object) (string, error) {
	value, present := o[key]
	if !present {
		return "", &broken{prefix + key, "missing", "Field required"}
	}
	return checkString(value, prefix+key, rule)
}

// patterns are the schema's patterns, compiled once (requests check envelopes concurrently).
var patterns sync.Map

func pattern(text string) *regexp.Regexp {
	if re, ok := patterns.Load(text); ok {
		return re.(*regexp.Regexp)
	}
	re, _ := patterns.LoadOrStore(text, regexp.MustCompile(text))
	return re.(*regexp.Regexp)
}

func checkString(value any, field string, rule Object) (string, error) {
	s, ok := value.(string)
	if !ok {
		return "", &broken{field, "string_type", "Input should be a valid string"}
	}
	length := int64(utf8.RuneCountInString(s)) // code points, as Python counts
	if min, ok := schemaInt(rule, "minLength"); ok && length < min {
		return "", &broken{field, "string_too_short", fmt.Sprintf("String should have at least %d character", min)}
	}
	if max, ok := schemaInt(rule, "maxLength"); ok && length > max {
		return "", &broken{field, "string_too_long", fmt.Sprintf("String should have at most %d characters", max)}
	}
	if text, ok := rule["pattern"].(string); ok && !pattern(text).MatchString(s) {
		return "", &broken{field, "string_pattern_mismatch", fmt.Sprintf("String should match pattern '%s'", text)}
	}
	return s, nil
}

// nullable reads an optional string: the non-null branch of its anyOf holds the rule.
func nullable(o Object, key string) (*string, error) {
	value := o[key]
	if value == nil {
		return nil, nil
	}
	any0, _ := schemaAt("properties", key)["anyOf"].([]any)
	rule, _ := asObject(any0[0])
	s, err := checkString(value, key, rule)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// integer is a JSON number with no fraction (encoding/json reads every number as float64).
func integer(value any) (int64, bool) {
	switch v := value.(type) {
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return int64(v), true
		}
	case json.Number:
		n, err := strconv.ParseInt(v.String(), 10, 64)
		return n, err == nil
	case int:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

func intField(o Object, key, prefix string, rule Object) (int64, error) {
	field := prefix + key
	value, present := o[key]
	if !present {
		return 0, &broken{field, "missing", "Field required"}
	}
	n, ok := integer(value)
	if _, isBool := value.(bool); !ok || isBool {
		return 0, &broken{field, "int_type", "Input should be a valid integer"}
	}
	if min, ok := schemaInt(rule, "minimum"); ok && n < min {
		return 0, &broken{field, "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min)}
	}
	if max, ok := schemaInt(rule, "maximum"); ok && n > max {
		return 0, &broken{field, "less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", max)}
	}
	return n, nil
}

func sortedKeys(o Object) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func noExtra(o Object, props Object, prefix string) error {
	for _, key := range sortedKeys(o) {
		if _, known := props[key]; !known {
			return &broken{prefix + key, "extra_forbidden", "Extra inputs are not permitted"}
		}
	}
	return nil
}

func readConstraints(value any, props Object) (map[string]any, error) {
	out := map[string]any{}
	if value == nil {
		return out, nil
	}
	o, err := object(value, "constraints", "")
	if err != nil {
		return nil, err
	}
	for _, key := range sortedKeys(o) {
		item := o[key]
		switch v := item.(type) {
		case string, bool:
			out[key] = v
		default:
			n, ok := integer(v)
			if !ok {
				// Python tries str, int, bool in turn and reports the first: `constraints.KEY.str`.
				return nil, &broken{"constraints." + key + ".str", "string_type", "Input should be a valid string"}
			}
			out[key] = n
		}
	}
	// Counted after the items are read, as pydantic does (so a bad item is named first).
	if max, ok := schemaInt(schemaAt("properties", "constraints"), "maxProperties"); ok && int64(len(out)) > max {
		return nil, &broken{"constraints", "too_long", fmt.Sprintf("Dictionary should have at most %d items after validation, not more", max)}
	}
	return out, nil
}

func readContextRefs(value any) ([]string, error) {
	refs := []string{}
	if value == nil {
		return refs, nil
	}
	items, ok := value.([]any)
	if !ok {
		return nil, &broken{"context_refs", "list_type", "Input should be a valid list"}
	}
	rule := schemaAt("properties", "context_refs")
	itemRule, _ := asObject(rule["items"])
	for i, item := range items {
		ref, err := checkString(item, fmt.Sprintf("context_refs.%d", i), itemRule)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	if max, ok := schemaInt(rule, "maxItems"); ok && int64(len(refs)) > max {
		return nil, &broken{"context_refs", "too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", max, len(refs))}
	}
	return refs, nil
}

func readBudget(value any) (g.Budget, error) {
	def := schemaAt("$defs", "Budget")
	p, _ := asObject(def["properties"])
	if value == nil {
		return g.Budget{}, &broken{"budget", "missing", "Field required"}
	}
	o, err := object(value, "budget", def["title"].(string))
	if err != nil {
		return g.Budget{}, err
	}
	var budget g.Budget
	units, _ := asObject(p["units"])
	if budget.Units, err = intField(o, "units", "budget.", units); err != nil {
		return budget, err
	}
	calls, _ := asObject(p["tool_calls"])
	if budget.ToolCalls, err = intField(o, "tool_calls", "budget.", calls); err != nil {
		return budget, err
	}
	raw, present := o["deadline"]
	if !present {
		return budget, &broken{"budget.deadline", "missing", "Field required"}
	}
	text, ok := raw.(string)
	if !ok {
		return budget, &broken{"budget.deadline", "datetime_type", "Input should be a valid datetime"}
	}
	deadline, err := readDeadline(text)
	if err != nil {
		return budget, err
	}
	budget.Deadline = deadline.pydantic
	return budget, noExtra(o, p, "budget.")
}

func readTenant(value any) (g.Tenant, error) {
	def := schemaAt("$defs", "Tenant")
	p, _ := asObject(def["properties"])
	if value == nil {
		return g.Tenant{}, &broken{"tenant", "missing", "Field required"}
	}
	o, err := object(value, "tenant", def["title"].(string))
	if err != nil {
		return g.Tenant{}, err
	}
	var tenant g.Tenant
	for _, f := range []struct {
		key  string
		into *string
	}{{"app", &tenant.App}, {"user", &tenant.User}, {"session", &tenant.Session}} {
		rule, _ := asObject(p[f.key])
		if *f.into, err = str(o, f.key, "tenant.", rule); err != nil {
			return tenant, err
		}
	}
	return tenant, noExtra(o, p, "tenant.")
}

// RFC 3339 as pydantic reads it: a date, "T" or a space, hours and minutes, optional seconds
// and fraction, and a zone (required: AwareDatetime).
var dateTime = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[T t](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$`)

type deadline struct {
	at        time.Time
	pydantic  string // as Python's model writes it ("...Z" for UTC, microseconds when not zero)
	isoformat string // as datetime.isoformat() writes it ("+00:00" for UTC)
}

func readDeadline(value string) (deadline, error) {
	const field = "budget.deadline"
	m := dateTime.FindStringSubmatch(value)
	if m == nil {
		return deadline{}, &broken{field, "datetime_from_date_parsing", "Input should be a valid datetime"}
	}
	y, mo, d, h, mi, s, frac, z, sign, oh, om := m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11]
	if z == "" && sign == "" {
		return deadline{}, &broken{field, "timezone_aware", "Input should have timezone info"}
	}
	micro := frac
	if len(micro) > 6 {
		micro = micro[:6]
	}
	for len(micro) < 6 {
		micro += "0"
	}
	if s == "" {
		s = "00"
	}
	num := func(t string) int { n, _ := strconv.Atoi(t); return n }
	offset := 0
	if sign != "" {
		offset = num(oh)*60 + num(om)
		if sign == "-" {
			offset = -offset
		}
	}
	zone := time.FixedZone("", offset*60)
	at := time.Date(num(y), time.Month(num(mo)), num(d), num(h), num(mi), num(s), num(micro)*1000, zone)
	if at.Month() != time.Month(num(mo)) || at.Day() != num(d) || num(h) > 23 || num(mi) > 59 || num(s) > 59 {
		return deadline{}, &broken{field, "datetime_from_date_parsing", "Input should be a valid datetime"}
	}
	base := fmt.Sprintf("%s-%s-%sT%s:%s:%s", y, mo, d, h, mi, s)
	if micro != "000000" {
		base += "." + micro
	}
	offsetText := "+00:00"
	if offset != 0 {
		offsetText = sign + oh + ":" + om
	}
	pyd := base + "Z"
	if offset != 0 {
		pyd = base + offsetText
	}
	return deadline{at: at, pydantic: pyd, isoformat: base + offsetText}, nil
}
