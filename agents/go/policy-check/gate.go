// What the JSON-RPC binding answers before a2a-go sees a request, and how its errors are
// written: the bearer token (AGENT-003), refusals that must come before any task is made
// (AGENT-009, ENV-007), a task another caller made (AGENT-004: NOT_FOUND), the idempotent send
// (IDEM-002, IDEM-003), and A2A's own errors carrying the contract code (ERR-003).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	c "accord.dev/contract"
	"accord.dev/contract/auth"
	g "accord.dev/contract/generated"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// keptSends bounds the message ids kept (the oldest forgotten first).
const keptSends = 10_000

type contextKey struct{}

type sent struct {
	fingerprint string
	taskID      a2a.TaskID
}

// Gate wraps the JSON-RPC handler.
type Gate struct {
	Verifier *auth.Verifier
	Next     http.Handler
	// Grant is the grant a service caller's token must carry (the skill's access).
	Grant string
	// Constraints are the envelope constraints the skill declares.
	Constraints map[string]bool
	Skill       string

	mu     sync.Mutex
	sends  map[string]*sent
	order  []string
	owners map[a2a.TaskID]string
}

// Made records the task a caller's message made (the executor tells, whatever carried it).
func (gt *Gate) Made(caller, messageID string, taskID a2a.TaskID) {
	gt.mu.Lock()
	defer gt.mu.Unlock()
	if gt.owners == nil {
		gt.owners = map[a2a.TaskID]string{}
	}
	gt.owners[taskID] = caller
	if claim := gt.sends[caller+"\x00"+messageID]; claim != nil && claim.taskID == "" {
		claim.taskID = taskID
	}
}

func objectOr(value any) map[string]any {
	o, _ := value.(map[string]any)
	if o == nil {
		return map[string]any{}
	}
	return o
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func refuse(w http.ResponseWriter, id any, err *c.AccordError) {
	writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": id, "error": err.ToJSONRPCError()})
}

// canonical is JSON with sorted keys, so that a resend that orders its keys otherwise is the
// same message (encoding/json sorts map keys).
func canonical(value any) string {
	raw, _ := json.Marshal(value)
	return string(raw)
}

// fingerprint is what makes a resend the same message: its parts, its skill, its task.
func fingerprint(message map[string]any) string {
	metadata := objectOr(message["metadata"])
	parts := message["parts"]
	if parts == nil {
		parts = []any{}
	}
	taskID := message["taskId"]
	if taskID == nil {
		taskID = ""
	}
	sum := sha256.Sum256([]byte(canonical(map[string]any{"parts": parts, "skill": metadata[g.SkillMetaKey], "taskId": taskID})))
	return hex.EncodeToString(sum[:])
}

// taskIDOf is the task a request names (GetTask, CancelTask, SubscribeToTask, push configs,
// or the message a send continues).
func taskIDOf(method string, params map[string]any) string {
	if strings.HasPrefix(method, "Send") {
		id, _ := objectOr(params["message"])["taskId"].(string)
		return id
	}
	for _, key := range []string{"id", "taskId"} {
		if id, ok := params[key].(string); ok {
			return id
		}
	}
	return ""
}

func (gt *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	principal, err := gt.Verifier.Request(r)
	if err != nil {
		accordErr, _ := c.AsAccordError(err)
		w.Header().Set("WWW-Authenticate", `Bearer realm="accord"`)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"jsonrpc": "2.0", "id": nil, "error": accordErr.ToJSONRPCError()})
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil || len(raw) > 1<<20 {
		refuse(w, nil, c.NewError(g.ErrorCodePayloadTooLarge, "", nil))
		return
	}
	var body map[string]any
	_ = json.Unmarshal(raw, &body) // a body that is no JSON object is a2a-go's to refuse
	method, _ := body["method"].(string)
	params := objectOr(body["params"])
	id := body["id"]
	wrapResult := false

	// Another caller's task does not exist for this one (AGENT-004).
	if taskID := taskIDOf(method, params); taskID != "" {
		gt.mu.Lock()
		owner, known := gt.owners[a2a.TaskID(taskID)]
		gt.mu.Unlock()
		if known && owner != principal.Subject {
			refuse(w, id, c.NewError(g.ErrorCodeNotFound, "no such task", nil))
			return
		}
	}
	if method == "SendMessage" || method == "SendStreamingMessage" {
		// A service without the skill's grant is refused before any task is made, as the
		// Python agents' skill gate refuses it (AGENT-009): being trusted says who it is, not
		// what it may.
		if principal.HasRole("service") && !principal.HasScope(gt.Grant) {
			refuse(w, id, c.NewError(g.ErrorCodePermissionDenied,
				principal.Subject+" holds no grant "+gt.Grant, c.Object{"grant": gt.Grant}))
			return
		}
		message := objectOr(params["message"])
		envelope := objectOr(objectOr(message["metadata"])[g.DelegationExtensionURI])
		// A constraint the skill does not declare is refused before work (ENV-007).
		undeclared := []string{}
		for name := range objectOr(envelope["constraints"]) {
			if !gt.Constraints[name] {
				undeclared = append(undeclared, name)
			}
		}
		sort.Strings(undeclared)
		if len(undeclared) > 0 {
			refuse(w, id, c.NewError(g.ErrorCodeInvalidInput,
				gt.Skill+" honours no envelope constraint "+strings.Join(undeclared, ", "),
				c.Object{"field": "constraints." + undeclared[0], "requirement": "ENV-007"}))
			return
		}
		messageID, _ := message["messageId"].(string)
		key := principal.Subject + "\x00" + messageID
		print := fingerprint(message)
		gt.mu.Lock()
		seen := gt.sends[key]
		if seen == nil {
			if gt.sends == nil {
				gt.sends = map[string]*sent{}
			}
			gt.sends[key] = &sent{fingerprint: print}
			gt.order = append(gt.order, key)
			if len(gt.order) > keptSends {
				delete(gt.sends, gt.order[0])
				gt.order = gt.order[1:]
			}
		}
		gt.mu.Unlock()
		if seen != nil && seen.fingerprint != print {
			refuse(w, id, c.NewError(g.ErrorCodeIdempotencyConflict, "another message was sent under this messageId", nil))
			return
		}
		if seen != nil && seen.taskID != "" && method == "SendMessage" {
			// The copy is answered with the first one's task as it is now: a2a-go's GetTask,
			// its result written as SendMessage's.
			raw, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "GetTask",
				"params": map[string]any{"id": string(seen.taskID)}})
			wrapResult = true
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), contextKey{}, principal))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	out := &rewriter{ResponseWriter: w, wrapResult: wrapResult}
	gt.Next.ServeHTTP(out, r)
	out.flush()
}

// rewriter holds a JSON answer back to write its error as the contract does (the SSE stream
// of a streaming call passes through as it is written).
type rewriter struct {
	http.ResponseWriter
	wrapResult bool
	status     int
	buffered   *bytes.Buffer
	streaming  bool
}

func (rw *rewriter) WriteHeader(status int) {
	if strings.HasPrefix(rw.Header().Get("Content-Type"), "text/event-stream") {
		rw.streaming = true
		rw.ResponseWriter.WriteHeader(status)
		return
	}
	rw.status = status
}

func (rw *rewriter) Write(p []byte) (int, error) {
	if rw.status == 0 && !rw.streaming {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.streaming {
		return rw.ResponseWriter.Write(p)
	}
	if rw.buffered == nil {
		rw.buffered = &bytes.Buffer{}
	}
	return rw.buffered.Write(p)
}

func (rw *rewriter) Flush() {
	if f, ok := rw.ResponseWriter.(http.Flusher); ok && rw.streaming {
		f.Flush()
	}
}

func (rw *rewriter) flush() {
	if rw.streaming {
		return
	}
	status := rw.status
	if status == 0 {
		status = http.StatusOK
	}
	var answer map[string]any
	if rw.buffered == nil || json.Unmarshal(rw.buffered.Bytes(), &answer) != nil {
		rw.ResponseWriter.WriteHeader(status)
		if rw.buffered != nil {
			_, _ = rw.ResponseWriter.Write(rw.buffered.Bytes())
		}
		return
	}
	if e, ok := answer["error"].(map[string]any); ok {
		answer["error"] = contractError(e)
	}
	if result, ok := answer["result"]; ok && rw.wrapResult {
		answer["result"] = map[string]any{"task": result}
	}
	rw.Header().Del("Content-Length")
	writeJSON(rw.ResponseWriter, status, answer)
}

// contractError is the JSON-RPC error of an A2A error a2a-go wrote, as the contract writes it:
// the code it maps to, its message kept, one ErrorInfo.
func contractError(e map[string]any) any {
	number, ok := e["code"].(float64)
	if !ok {
		return e
	}
	code, known := c.CodeForJSONRPC(int(number))
	if !known {
		return e
	}
	message, _ := e["message"].(string)
	return c.NewError(code, message, nil).ToJSONRPCError()
}

// authenticate is the call interceptor that names the verified caller to a2a-go (its task
// store's owner, ListTasks' filter) and to the executor.
type authenticate struct {
	a2asrv.PassthroughCallInterceptor
}

func (authenticate) Before(ctx context.Context, callCtx *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if p, ok := ctx.Value(contextKey{}).(*Principal); ok {
		callCtx.User = a2asrv.NewAuthenticatedUser(p.Subject, map[string]any{principalKey: p})
	}
	return ctx, nil, nil
}
