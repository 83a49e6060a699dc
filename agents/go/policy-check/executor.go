// The refund.policy skill on a2a-go's AgentExecutor: every status is built as wire JSON by
// the contract package's helpers (status metadata, errors, envelope) and read into a2a-go's
// types. A damage claim without evidence ends its turn waiting for input; the caller's
// answer continues the SAME task, as the Python agent (accord.agents.policy) does.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"

	c "accord.dev/contract"
	g "accord.dev/contract/generated"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"
)

// principalKey is where the call interceptor puts the verified caller in a2a-go's User.
const principalKey = "accord.principal"

// taskMemory is what a task keeps between its turns (in memory, as the task store is).
type taskMemory struct {
	request  *Request              // the first turn's input, kept for the answer
	envelope *g.DelegationEnvelope // the first turn's: a continuation may come without one
	turns    int64                 // turns admitted so far (a turn costs one unit of the budget)
}

// PolicyExecutor answers refund.policy.
type PolicyExecutor struct {
	// Input is the skill's input schema, which a first turn's DataPart must fit.
	Input    *InputSchema
	Commerce *Commerce
	Version  string
	// Made tells the gate which task a caller's message made (idempotent sends, owners).
	Made func(caller, messageID string, taskID a2a.TaskID)

	mu    sync.Mutex
	tasks map[a2a.TaskID]*taskMemory
}

func (x *PolicyExecutor) memory(id a2a.TaskID) *taskMemory {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.tasks == nil {
		x.tasks = map[a2a.TaskID]*taskMemory{}
	}
	if x.tasks[id] == nil {
		x.tasks[id] = &taskMemory{}
	}
	return x.tasks[id]
}

func (x *PolicyExecutor) forget(id a2a.TaskID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.tasks, id)
}

func messageID() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

// statusEvent is a status update (wire JSON from the helpers) that also names the contract
// version the agent speaks.
func (x *PolicyExecutor) statusEvent(execCtx *a2asrv.ExecutorContext, state c.State, words c.StatusWords, taskMeta ...c.Object) *a2a.TaskStatusUpdateEvent {
	words.TaskID, words.ContextID, words.MessageID = string(execCtx.TaskID), execCtx.ContextID, messageID()
	status, err := c.TaskStatus(state, words)
	if err != nil {
		panic(err) // a state the contract cannot report is a bug here, not the caller's
	}
	metadata := c.StatusMetadata(state, words.StatusSaid)
	metadata[g.ContractVersionMetaKey] = x.Version
	for _, extra := range taskMeta {
		for k, v := range extra {
			metadata[k] = v
		}
	}
	var event a2a.TaskStatusUpdateEvent
	wire := c.Object{"taskId": words.TaskID, "contextId": words.ContextID, "status": status, "metadata": metadata}
	mustRoundTrip(wire, &event)
	return &event
}

func mustRoundTrip(from any, into any) {
	raw, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(raw, into)
	}
	if err != nil {
		panic(err)
	}
}

// Execute runs one turn of a task.
func (x *PolicyExecutor) Execute(ctx context.Context, execCtx *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		running := c.State{Status: g.StatusRunning}
		principal := principalOf(execCtx)
		if execCtx.StoredTask == nil {
			if principal != nil && x.Made != nil {
				x.Made(principal.Subject, execCtx.Message.ID, execCtx.TaskID)
			}
			var task a2a.Task
			status, _ := c.TaskStatus(running, c.StatusWords{})
			metadata := c.StatusMetadata(running, c.StatusSaid{})
			metadata[g.ContractVersionMetaKey] = x.Version
			mustRoundTrip(c.Object{
				"id": string(execCtx.TaskID), "contextId": execCtx.ContextID, "status": status, "metadata": metadata,
			}, &task)
			task.History = []*a2a.Message{execCtx.Message}
			if !yield(&task, nil) {
				return
			}
		}
		// Once the turn is admitted: RUNNING, with what the task keeps in its metadata (the
		// budget spent, the skill, the caller's envelope), as Python's executor writes it.
		stopped := false
		admitted := func(taskMeta c.Object) bool {
			stopped = !yield(x.statusEvent(execCtx, running, c.StatusWords{}, taskMeta), nil)
			return !stopped
		}
		events := x.turn(ctx, execCtx, principal, admitted)
		if stopped {
			return
		}
		last := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
		if last.Status.State.Terminal() {
			x.forget(execCtx.TaskID)
		}
		for _, event := range events {
			if !yield(event, nil) {
				return
			}
		}
	}
}

// turn is the end of a turn: the result artifact and completed, waiting for input, or
// failed (the last event is always the status update).
func (x *PolicyExecutor) turn(ctx context.Context, execCtx *a2asrv.ExecutorContext, principal *Principal, admitted func(c.Object) bool) (events []a2a.Event) {
	defer func() {
		if r := recover(); r != nil {
			events = []a2a.Event{x.failed(execCtx, c.NewError(g.ErrorCodeInternal, "policy-check failed", nil))}
		}
	}()
	decision, question, err := x.decide(ctx, execCtx, principal, admitted)
	if err != nil {
		accordErr, ok := c.AsAccordError(err)
		if !ok {
			accordErr = c.NewError(g.ErrorCodeInternal, "policy-check failed", nil)
		}
		return []a2a.Event{x.failed(execCtx, accordErr)}
	}
	if question != "" {
		waiting := c.State{Status: g.StatusWaiting, WaitingReason: g.WaitingReasonInput}
		return []a2a.Event{x.statusEvent(execCtx, waiting, c.StatusWords{Text: question})}
	}
	var data c.Object
	mustRoundTrip(decision, &data)
	// The answer is the artifact named `result` that every Accord client reads; the words
	// go in the completed status's message.
	artifact := &a2a.TaskArtifactUpdateEvent{
		TaskID: execCtx.TaskID, ContextID: execCtx.ContextID, LastChunk: true,
		Artifact: &a2a.Artifact{
			ID: a2a.NewArtifactID(), Name: g.ResultArtifactName,
			Parts: a2a.ContentParts{{Content: a2a.Data{Value: data}, MediaType: "application/json"}},
		},
	}
	done := c.State{Status: g.StatusCompleted}
	return []a2a.Event{artifact, x.statusEvent(execCtx, done, c.StatusWords{Text: decision.Explanation})}
}

func (x *PolicyExecutor) failed(execCtx *a2asrv.ExecutorContext, err *c.AccordError) *a2a.TaskStatusUpdateEvent {
	state := c.State{Status: g.StatusFailed, ErrorCode: err.Code}
	return x.statusEvent(execCtx, state, c.StatusWords{StatusSaid: c.StatusSaid{Error: err}, Text: err.Message})
}

// Cancel ends a task that waits for its answer (or runs) as CANCELED: failed, with the code.
func (x *PolicyExecutor) Cancel(ctx context.Context, execCtx *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		x.forget(execCtx.TaskID)
		canceled := c.NewError(g.ErrorCodeCanceled, "the task was canceled", nil)
		yield(x.failed(execCtx, canceled), nil)
	}
}

func principalOf(execCtx *a2asrv.ExecutorContext) *Principal {
	if execCtx.User == nil || execCtx.User.Attributes == nil {
		return nil
	}
	p, _ := execCtx.User.Attributes[principalKey].(*Principal)
	return p
}

// decide reads the turn and applies the rules: a decision, or the question of a turn that
// waits for input, or the contract error that refuses it.
func (x *PolicyExecutor) decide(ctx context.Context, execCtx *a2asrv.ExecutorContext, principal *Principal, admitted func(c.Object) bool) (*Decision, string, error) {
	message := execCtx.Message
	if err := x.checkVersion(message.Metadata[g.ContractVersionMetaKey]); err != nil {
		return nil, "", err
	}
	if principal == nil {
		return nil, "", c.NewError(g.ErrorCodeUnauthenticated, "", nil)
	}
	if execCtx.StoredTask == nil {
		// The skill a first message names (the contract's first, refund.policy, when none).
		if asked, named := message.Metadata[g.SkillMetaKey]; named && asked != nil && asked != "" && asked != skillID {
			return nil, "", c.NewError(g.ErrorCodeInvalidInput, "unknown skill "+pyRepr(asked),
				c.Object{"field": "metadata." + g.SkillMetaKey, "skills": []any{skillID}})
		}
	}
	isService := principal.HasRole("service")
	// A service must send the delegation envelope (ENV-001); the turn must fit its budget.
	memory := x.memory(execCtx.TaskID)
	envelope, err := c.ParseEnvelope(message.Metadata, isService && memory.envelope == nil)
	if err != nil {
		return nil, "", err
	}
	if envelope == nil {
		envelope = memory.envelope
	}
	memory.envelope = envelope
	data, text := dataOf(message), textOf(message)
	if _, isObject := data.(map[string]any); data != nil && !isObject {
		return nil, "", c.NewError(g.ErrorCodeInvalidInput, "the DataPart must be an object",
			c.Object{"field": "parts.data"})
	}
	if execCtx.StoredTask == nil {
		if data == nil {
			data = map[string]any{} // no DataPart: the input is {} (its required fields missing)
		}
		// The input fits the skill's schema before the turn is admitted, as Python reads a turn.
		if err := x.Input.Check(data); err != nil {
			return nil, "", err
		}
	}
	taskMeta := c.Object{g.SkillTaskMetaKey: skillID, g.SpentMetaKey: memory.turns + 1, g.ToolCallsSpentMetaKey: 0}
	if envelope != nil {
		allowance, err := c.AdmitTurn(envelope, c.Turn{Spent: memory.turns, UnitsPerTurn: 1})
		if err != nil {
			return nil, "", err
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, allowance.Remaining)
		defer cancel()
		taskMeta[g.EnvelopeMetaKey] = c.EnvelopeMetadata(envelope)[g.DelegationExtensionURI]
	}
	memory.turns++
	if !admitted(taskMeta) {
		return nil, "", c.NewError(g.ErrorCodeCanceled, "", nil)
	}
	if err := checkCaller(principal); err != nil {
		return nil, "", err
	}
	var request Request
	if execCtx.StoredTask == nil {
		if request, err = ParseInput(data); err != nil {
			return nil, "", err
		}
		if refs := referencedEvidence(envelope); refs != "" && request.Evidence == nil {
			request.Evidence = &refs
		}
	} else {
		if memory.request == nil {
			return nil, "", c.NewError(g.ErrorCodeInvalidInput, "this task has no refund request to "+
				"continue; start a new task with the skill input", nil)
		}
		request = *memory.request
		if evidence := answeredEvidence(data, text); evidence != "" {
			request.Evidence = &evidence
		}
	}
	if request.Order == nil {
		if request, err = x.withOrder(ctx, request, principal, envelope, execCtx.ContextID); err != nil {
			return nil, "", err
		}
	}
	kept := request
	memory.request = &kept
	decision, needsEvidence := Evaluate(request)
	if needsEvidence {
		return nil, EvidenceQuestion, nil
	}
	return decision, "", nil
}

// withOrder looks the order up (orders.lookup) for the customer the request names, which the
// caller must be allowed to ask about.
func (x *PolicyExecutor) withOrder(ctx context.Context, request Request, principal *Principal, envelope *g.DelegationEnvelope, contextID string) (Request, error) {
	customer := *request.CustomerID
	if err := checkSubject(principal, customer, envelope); err != nil {
		return request, err
	}
	tenant := g.Tenant{App: principal.App, User: customer, Session: contextID}
	if envelope != nil {
		tenant.App, tenant.Session = envelope.Tenant.App, envelope.Tenant.Session
	}
	found, err := x.Commerce.Call(ctx, LookupTool,
		map[string]any{"order_id": *request.OrderID, "customer_id": customer}, &g.ToolDelegation{Tenant: tenant})
	if err != nil {
		return request, err
	}
	// orders.lookup's answer, read as the input's order facts (a part of it).
	facts := map[string]any{}
	for _, key := range []string{"order_id", "total_cents", "refunded_cents", "refundable_cents", "final_sale", "days_since_delivery", "status"} {
		facts[key] = found[key]
	}
	order, err := parseOrder(facts)
	if err != nil {
		return request, c.NewError(g.ErrorCodeContractViolation, LookupTool+" answered outside its contract", nil)
	}
	request.Order = order
	return request, nil
}

// checkVersion: a task may name the contract version it speaks; this agent serves one major
// (AGENT-008).
func (x *PolicyExecutor) checkVersion(asked any) error {
	if asked == nil {
		return nil
	}
	major := func(v string) string { head, _, _ := strings.Cut(v, "."); return head }
	text, ok := asked.(string)
	if !ok || major(text) != major(x.Version) {
		return c.NewError(g.ErrorCodeVersionUnsupported,
			fmt.Sprintf("policy-check serves contract %s, not %v", x.Version, asked),
			c.Object{"requested": fmt.Sprint(asked), "served": []any{x.Version}})
	}
	return nil
}

// checkCaller: any check needs a grant (a customer, a service acting for one).
func checkCaller(p *Principal) error {
	if p.HasRole("customer") || p.HasRole("service") {
		return nil
	}
	return c.NewError(g.ErrorCodePermissionDenied,
		"only a customer (for their own orders) or a service acting for one may check a refund",
		c.Object{"operation": "check.order", "requires_role": []any{"customer", "service"}})
}

// checkSubject: a customer their own orders; a service only the customer its envelope names
// (anyone else's is NOT_FOUND: it learns nothing about what exists).
func checkSubject(p *Principal, customer string, envelope *g.DelegationEnvelope) error {
	if p.HasRole("customer") && p.Subject == customer {
		return nil
	}
	if p.HasRole("service") {
		if envelope != nil && envelope.Tenant.User == customer {
			return nil
		}
		return c.NewError(g.ErrorCodeNotFound, "no such order for the customer this request acts for",
			c.Object{"field": "customer_id"})
	}
	return c.NewError(g.ErrorCodePermissionDenied, "a customer may check only their own orders",
		c.Object{"field": "customer_id"})
}

func dataOf(m *a2a.Message) any {
	for _, part := range m.Parts {
		if data, ok := part.Content.(a2a.Data); ok {
			return data.Value
		}
	}
	return nil
}

func textOf(m *a2a.Message) string {
	texts := []string{}
	for _, part := range m.Parts {
		if text, ok := part.Content.(a2a.Text); ok {
			texts = append(texts, string(text))
		}
	}
	return strings.Join(texts, "\n")
}

func clip(s string) string {
	runes := []rune(s)
	if len(runes) > MaxEvidence {
		return string(runes[:MaxEvidence])
	}
	return s
}

// answeredEvidence is the answer to the evidence question: data.evidence if given, else the
// text.
func answeredEvidence(data any, text string) string {
	answer := text
	if o, ok := data.(map[string]any); ok {
		if given, ok := o["evidence"].(string); ok && trimSpace(given) != "" {
			answer = given
		}
	}
	return clip(trimSpace(answer))
}

// referencedEvidence: the envelope's context refs, read as evidence references (this skill's
// contract says so, ENV-008), when the input names no evidence.
func referencedEvidence(envelope *g.DelegationEnvelope) string {
	if envelope == nil {
		return ""
	}
	refs := []string{}
	for _, r := range envelope.ContextRefs {
		if r = trimSpace(r); r != "" {
			refs = append(refs, r)
		}
	}
	return clip(strings.Join(refs, "; "))
}
