// The skill input checked as its schema states (the contract's refund.policy input_schema,
// which Python's PolicyRequest model is held to): INVALID_INPUT naming the field and the rule,
// never echoing the caller's values back.
package main

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"

	c "accord.dev/contract"
	g "accord.dev/contract/generated"
)

// MaxEvidence is the longest evidence kept (the input schema's maxLength).
const MaxEvidence = 2000

var (
	orderIDPattern    = regexp.MustCompile(`^O-[0-9]{4,10}$`)
	customerIDPattern = regexp.MustCompile(`^C-[0-9]{2,10}$`)
	reasons           = []string{"wrong_size", "damaged", "not_as_described", "changed_mind", "late_delivery", "other"}
)

func invalid(field, rule, message string) *c.AccordError {
	return c.NewError(g.ErrorCodeInvalidInput, fmt.Sprintf("input field '%s': %s", field, message),
		c.Object{"field": field, "rule": rule})
}

// trimSpace is Python's str.strip(): Unicode white space, and the separators \x1c-\x1f.
func trimSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

func integer(value any) (int64, bool) {
	f, ok := value.(float64)
	if !ok || f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return int64(f), true
}

// intAt reads an integer (or, when nullable, null) of at least min.
func intAt(o map[string]any, key, field string, min int64, nullable bool) (*int64, error) {
	value := o[key]
	if value == nil && nullable {
		return nil, nil
	}
	n, ok := integer(value)
	if !ok {
		return nil, invalid(field, "int_type", "Input should be a valid integer")
	}
	if n < min {
		return nil, invalid(field, "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min))
	}
	return &n, nil
}

func optionalString(o map[string]any, key string, pattern *regexp.Regexp, maxLength int) (*string, error) {
	value, present := o[key]
	if !present || value == nil {
		return nil, nil
	}
	s, ok := value.(string)
	if !ok {
		return nil, invalid(key, "string_type", "Input should be a valid string")
	}
	if pattern != nil && !pattern.MatchString(s) {
		return nil, invalid(key, "string_pattern_mismatch", fmt.Sprintf("String should match pattern '%s'", pattern))
	}
	if maxLength > 0 && len([]rune(s)) > maxLength {
		return nil, invalid(key, "string_too_long", fmt.Sprintf("String should have at most %d characters", maxLength))
	}
	return &s, nil
}

// ParseInput reads the first turn's DataPart as the skill input.
func ParseInput(data any) (Request, error) {
	o, ok := data.(map[string]any)
	if !ok {
		return Request{}, c.NewError(g.ErrorCodeInvalidInput,
			"refund.policy takes a JSON object (a DataPart with the skill input)", c.Object{"field": "", "rule": "model_type"})
	}
	known := map[string]bool{"order": true, "order_id": true, "customer_id": true, "reason": true, "requested_cents": true, "evidence": true}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return Request{}, invalid(k, "extra_forbidden", "Extra inputs are not permitted")
		}
	}
	var request Request
	var err error
	if raw, present := o["order"]; present && raw != nil {
		if request.Order, err = parseOrder(raw); err != nil {
			return Request{}, err
		}
	}
	if request.OrderID, err = optionalString(o, "order_id", orderIDPattern, 0); err != nil {
		return Request{}, err
	}
	if request.CustomerID, err = optionalString(o, "customer_id", customerIDPattern, 0); err != nil {
		return Request{}, err
	}
	reason, present := o["reason"]
	if !present {
		return Request{}, invalid("reason", "missing", "Field required")
	}
	text, _ := reason.(string)
	if !contains(reasons, text) {
		return Request{}, invalid("reason", "enum", "Input should be "+quotedList(reasons))
	}
	request.Reason = text
	if request.RequestedCents, err = intAt(o, "requested_cents", "requested_cents", 1, true); err != nil {
		return Request{}, err
	}
	if request.Evidence, err = optionalString(o, "evidence", nil, MaxEvidence); err != nil {
		return Request{}, err
	}
	if request.Order == nil && (request.OrderID == nil || request.CustomerID == nil) {
		return Request{}, c.NewError(g.ErrorCodeInvalidInput,
			"input field '': Value error, give either order facts or order_id and customer_id",
			c.Object{"field": "", "rule": "value_error"})
	}
	return request, nil
}

func parseOrder(raw any) (*Order, error) {
	o, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("order", "model_type", "Input should be a valid dictionary or instance of PolicyOrder")
	}
	for _, key := range []string{"order_id", "total_cents", "refunded_cents", "refundable_cents", "final_sale", "status"} {
		if _, present := o[key]; !present {
			return nil, invalid("order."+key, "missing", "Field required")
		}
	}
	var order Order
	var ok2 bool
	if order.OrderID, ok2 = o["order_id"].(string); !ok2 {
		return nil, invalid("order.order_id", "string_type", "Input should be a valid string")
	}
	for _, f := range []struct {
		key  string
		into *int64
	}{{"total_cents", &order.TotalCents}, {"refunded_cents", &order.RefundedCents}, {"refundable_cents", &order.RefundableCents}} {
		n, err := intAt(o, f.key, "order."+f.key, 0, false)
		if err != nil {
			return nil, err
		}
		*f.into = *n
	}
	if order.FinalSale, ok2 = o["final_sale"].(bool); !ok2 {
		return nil, invalid("order.final_sale", "bool_type", "Input should be a valid boolean")
	}
	days, err := intAt(o, "days_since_delivery", "order.days_since_delivery", 0, true)
	if err != nil {
		return nil, err
	}
	order.DaysSinceDelivery = days
	if order.Status, ok2 = o["status"].(string); !ok2 {
		return nil, invalid("order.status", "string_type", "Input should be a valid string")
	}
	return &order, nil
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

// quotedList is pydantic's "'a', 'b' or 'c'".
func quotedList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "'" + s + "'"
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}
