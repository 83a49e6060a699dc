// The refund conversation from Go, on the official A2A SDK (github.com/a2aproject/a2a-go/v2,
// A2A 1.0, JSON-RPC binding), against the Accord orchestrator of a running mesh:
//
//  1. a customer asks for a large refund (skill refund.request): the task waits for an approver;
//  2. the customer may not approve it: refund.approve is refused with PERMISSION_DENIED;
//  3. an approver approves it (a new message, skill refund.approve, {task_id, decision, note});
//  4. the customer reads the task again: completed, refunded, with a receipt;
//  5. another customer's damage claim waits for evidence; the answer continues the same task.
//
// Usage: refund-client URL CUSTOMER_TOKEN APPROVER_TOKEN MUG_TOKEN
// It prints one JSON object on its last line of standard output (what it saw at each step);
// tests/interop/test_refund_go.py asserts on it. Exit status 1 with a message on any failure.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	contract "accord.dev/contract"
	g "accord.dev/contract/generated"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// bearer puts a development token on every call the SDK makes (the Authorization header of
// the JSON-RPC binding).
type bearer struct {
	a2aclient.PassthroughInterceptor
	token string
}

func (b bearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams.Append("Authorization", "Bearer "+b.token)
	return ctx, nil, nil
}

// errorKeeper keeps the JSON-RPC error object of the last answer. Why: a2a-go v2.1.0 decodes
// `error.data` as an object, while A2A 1.0 (and Accord) send a list of google.rpc.ErrorInfo, so
// the SDK reports a decode failure instead of the error; the contract package reads the kept
// wire error (contract.ErrorFromJSONRPCError) into the typed Accord error.
type errorKeeper struct {
	next http.RoundTripper
	mu   sync.Mutex
	last map[string]any
}

func (k *errorKeeper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := k.next.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var answer struct {
		Error map[string]any `json:"error"`
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.last = nil
	if json.Unmarshal(body, &answer) == nil && answer.Error != nil {
		k.last = answer.Error
	}
	return resp, nil
}

// accordError is the typed Accord error of a failed call: the kept wire error when the answer
// had one, else nil (a transport failure, not a contract error).
func (k *errorKeeper) accordError() *contract.AccordError {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.last == nil {
		return nil
	}
	return contract.ErrorFromJSONRPCError(k.last)
}

type caller struct {
	client *a2aclient.Client
	keeper *errorKeeper
}

// endpoints reads the A2A 1.0 interfaces of the Agent Card at base. Why not the SDK's
// agentcard.Resolver: a2a-go v2.1.0 reads a security requirement's scopes as a bare list
// ({"schemes": {"bearer": []}}) where the A2A 1.0 ProtoJSON the Python SDK serves wraps them
// ({"schemes": {"bearer": {"list": []}}}), so it rejects the whole card; the interfaces are all
// the client needs from it.
func endpoints(ctx context.Context, base string) (string, []*a2a.AgentInterface, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		strings.TrimRight(base, "/")+"/.well-known/agent-card.json", nil)
	if err != nil {
		return "", nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("agent card: HTTP %d", resp.StatusCode)
	}
	var card struct {
		Name       string                `json:"name"`
		Interfaces []*a2a.AgentInterface `json:"supportedInterfaces"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		return "", nil, fmt.Errorf("agent card: %w", err)
	}
	var current []*a2a.AgentInterface
	for _, iface := range card.Interfaces {
		if iface.ProtocolVersion == a2a.Version && iface.ProtocolBinding == a2a.TransportProtocolJSONRPC {
			current = append(current, iface)
		}
	}
	if len(current) == 0 {
		return "", nil, fmt.Errorf("agent card: no JSON-RPC interface of A2A %s", a2a.Version)
	}
	return card.Name, current, nil
}

func connect(ctx context.Context, interfaces []*a2a.AgentInterface, token string) (*caller, error) {
	keeper := &errorKeeper{next: http.DefaultTransport}
	httpClient := &http.Client{Timeout: 60 * time.Second, Transport: keeper}
	client, err := a2aclient.NewFromEndpoints(ctx, interfaces,
		a2aclient.WithJSONRPCTransport(httpClient),
		a2aclient.WithCallInterceptors(bearer{token: token}),
	)
	if err != nil {
		return nil, err
	}
	return &caller{client: client, keeper: keeper}, nil
}

// refused is a call the service answered with a JSON-RPC error: the typed Accord error read
// from the wire, and what the SDK itself made of the answer (kept to show the gap).
type refused struct {
	typed *contract.AccordError
	sdk   error
}

func (r *refused) Error() string { return r.typed.Error() }
func (r *refused) Unwrap() error { return r.typed }

// send sends one message and returns the task it started or continued; a refusal comes back
// as the typed Accord error.
func (c *caller) send(ctx context.Context, msg *a2a.Message) (*a2a.Task, error) {
	result, err := c.client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		if typed := c.keeper.accordError(); typed != nil {
			return nil, &refused{typed: typed, sdk: err}
		}
		return nil, err
	}
	task, ok := result.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("expected a task, got %T", result)
	}
	return task, nil
}

func message(skill string, parts ...*a2a.Part) *a2a.Message {
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	if skill != "" {
		msg.Metadata = map[string]any{g.SkillMetaKey: skill}
	}
	return msg
}

// view is what the test asserts of a task: its A2A state, the contract status of its
// metadata, the question of its status message, and its result artifact's data.
type view struct {
	ID       string         `json:"id"`
	State    string         `json:"state"`
	Meta     map[string]any `json:"meta"`
	Question string         `json:"question"`
	Answer   map[string]any `json:"answer"`
}

func viewOf(task *a2a.Task) view {
	v := view{ID: string(task.ID), State: string(task.Status.State)}
	v.Meta, _ = task.Metadata[g.StatusMetaKey].(map[string]any)
	if m := task.Status.Message; m != nil {
		var texts []string
		for _, p := range m.Parts {
			if t := p.Text(); t != "" {
				texts = append(texts, t)
			}
		}
		v.Question = strings.Join(texts, "\n")
	}
	for _, art := range task.Artifacts {
		if art.Name != g.ResultArtifactName {
			continue
		}
		for _, p := range art.Parts {
			if data, ok := p.Data().(map[string]any); ok {
				v.Answer = data
			}
		}
	}
	return v
}

type refusal struct {
	Code    string `json:"code"`
	Retry   string `json:"retry"`
	Message string `json:"message"`
	SDK     string `json:"sdk"` // the SDK's own error for the same answer
}

func run(ctx context.Context, url, customerToken, approverToken, mugToken string) (map[string]any, error) {
	name, card, err := endpoints(ctx, url)
	if err != nil {
		return nil, err
	}
	customer, err := connect(ctx, card, customerToken)
	if err != nil {
		return nil, err
	}
	approver, err := connect(ctx, card, approverToken)
	if err != nil {
		return nil, err
	}
	mug, err := connect(ctx, card, mugToken)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"card": name}

	// 1. The customer asks; a refund this large waits for an approver.
	asked, err := customer.send(ctx, message("refund.request",
		a2a.NewTextPart("I changed my mind about the laptop, refund order O-1004")))
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	out["ask"] = viewOf(asked)

	// 2. The customer's own approval is refused before any task exists: a typed error.
	_, err = customer.send(ctx, message("refund.approve",
		a2a.NewDataPart(map[string]any{"task_id": string(asked.ID), "decision": "approve"})))
	var own *refused
	if !errors.As(err, &own) {
		return nil, fmt.Errorf("own approval: expected an Accord error, got %v", err)
	}
	out["own"] = refusal{
		Code: string(own.typed.Code), Retry: string(own.typed.Retry()),
		Message: own.typed.Message, SDK: own.sdk.Error(),
	}

	// 3. An approver approves: a new message naming the waiting task.
	decided, err := approver.send(ctx, message("refund.approve", a2a.NewDataPart(map[string]any{
		"task_id": string(asked.ID), "decision": "approve", "note": "verified by phone",
	})))
	if err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	out["approve"] = viewOf(decided)

	// 4. The customer's task now holds the outcome and the receipt.
	final, err := customer.client.GetTask(ctx, &a2a.GetTaskRequest{ID: asked.ID})
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	out["final"] = viewOf(final)

	// 5. A damage claim asks for evidence; the answer continues the SAME task.
	claim, err := mug.send(ctx, message("refund.request",
		a2a.NewTextPart("my mug arrived broken, order O-1005")))
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	reply := message("", a2a.NewTextPart("the handle snapped off, photo IMG_2291.jpg"))
	reply.TaskID, reply.ContextID = claim.ID, claim.ContextID
	answered, err := mug.send(ctx, reply)
	if err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	out["evidence"] = map[string]any{
		"asked": viewOf(claim), "answered": viewOf(answered), "sameTask": answered.ID == claim.ID,
	}
	return out, nil
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: refund-client URL CUSTOMER_TOKEN APPROVER_TOKEN MUG_TOKEN")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := run(ctx, os.Args[1], os.Args[2], os.Args[3], os.Args[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, "refund-client:", err)
		os.Exit(1)
	}
	line, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refund-client:", err)
		os.Exit(1)
	}
	fmt.Println(string(line))
}
