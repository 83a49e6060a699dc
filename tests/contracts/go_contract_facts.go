// Answers the Python test's questions with the Go contract package (accord.dev/contract,
// contracts/go; the questions are JSON on stdin) and prints every answer as one JSON document,
// which tests/contracts/test_go_contract.py compares with the Python contract's own answers.
// With the argument "helpers" it answers with the hand-written wire helpers instead (status
// metadata, error forms, envelope), compared with what Accord's Python server writes.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	c "accord.dev/contract"
	"accord.dev/contract/auth"
	g "accord.dev/contract/generated"
)

type object = map[string]any

func main() {
	var ask object
	decoder := json.NewDecoder(os.Stdin)
	decoder.UseNumber()
	if err := decoder.Decode(&ask); err != nil {
		panic(err)
	}
	var answer any
	if len(os.Args) > 1 && os.Args[1] == "helpers" {
		answer = helpers(ask)
	} else if len(os.Args) > 1 && os.Args[1] == "auth" {
		answer = verify(ask)
	} else if len(os.Args) > 1 && os.Args[1] == "sign" {
		answer = sign(ask)
	} else {
		answer = facts(ask)
	}
	out, err := json.Marshal(answer)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
}

func num(v any) int {
	n, err := v.(json.Number).Int64()
	if err != nil {
		panic(err)
	}
	return int(n)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func state(s object) c.State {
	declined, _ := s["declined"].(bool)
	return c.State{
		Status: g.Status(str(s["status"])), WaitingReason: g.WaitingReason(str(s["waiting_reason"])),
		ErrorCode: g.ErrorCode(str(s["error_code"])), Declined: declined,
	}
}

func snake(s c.State) object {
	out := object{"status": s.Status, "waiting_reason": nil, "error_code": nil, "declined": s.Declined}
	if s.WaitingReason != "" {
		out["waiting_reason"] = s.WaitingReason
	}
	if s.ErrorCode != "" {
		out["error_code"] = s.ErrorCode
	}
	return out
}

func facts(ask object) object {
	statuses := object{}
	for _, s := range g.StatusValues {
		next := []string{}
		for _, t := range g.StatusValues {
			if c.CanTransition(s, t) {
				next = append(next, string(t))
			}
		}
		sort.Strings(next)
		statuses[string(s)] = object{"terminal": c.IsTerminal(s), "transitions": next}
	}
	codes := object{}
	for _, code := range g.ErrorCodeValues {
		spec := c.SpecOf(code)
		raw, _ := json.Marshal(spec)
		var row object
		_ = json.Unmarshal(raw, &row)
		row["retry_class"] = c.RetryClassOf(code)
		row["parsed"] = c.ParseCode(string(code))
		codes[string(code)] = row
	}
	reasons := object{}
	for n, reason := range g.A2AReasons {
		reasons[fmt.Sprint(n)] = reason
	}
	var toA2A []any
	for _, s := range ask["to_a2a"].([]any) {
		a2a, err := c.ToA2AState(state(s.(object)))
		if err != nil {
			panic(err)
		}
		toA2A = append(toA2A, a2a)
	}
	var fromA2A []any
	for _, q := range ask["from_a2a"].([]any) {
		row := q.([]any)
		got, err := c.FromA2AState(g.A2AState(str(row[0])), row[1], row[2])
		if err != nil {
			panic(err)
		}
		fromA2A = append(fromA2A, snake(got))
	}
	var parse, jsonrpc, http []any
	for _, v := range ask["parse"].([]any) {
		parse = append(parse, c.ParseCode(v))
	}
	for _, n := range ask["jsonrpc"].([]any) {
		if code, ok := c.CodeForJSONRPC(num(n)); ok {
			jsonrpc = append(jsonrpc, code)
		} else {
			jsonrpc = append(jsonrpc, nil)
		}
	}
	for _, n := range ask["http"].([]any) {
		http = append(http, c.CodeForHTTPStatus(num(n)))
	}
	// Every string constant of keys.go, by its name in the export (STATUS_META_KEY), and
	// every schema document, by the name the TypeScript package gives it (ENVELOPE_SCHEMA).
	schemas := object{}
	for name, text := range schemaDocuments {
		var doc any
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			panic(err)
		}
		schemas[name] = doc
	}
	return object{
		"statuses":        statuses,
		"waiting_reasons": g.WaitingReasonValues,
		"a2a_states":      g.A2AStateValues,
		"retry_classes":   g.RetryClassValues,
		"codes":           codes,
		"error_domains":   []string{g.ErrorDomain, g.A2AErrorDomain},
		"a2a_reasons":     reasons,
		"to_a2a":          toA2A,
		"from_a2a":        fromA2A,
		"parse":           parse,
		"jsonrpc":         jsonrpc,
		"http":            http,
		"keys":            keyConstants,
		"schemas":         schemas,
		"rejectable":      g.RejectableCodes,
		"foreign_jsonrpc": intKeys(g.ForeignJSONRPCCodes),
		"http_codes":      intKeys(g.HTTPStatusCodes),
	}
}

func intKeys(m map[int]g.ErrorCode) object {
	out := object{}
	for k, v := range m {
		out[fmt.Sprint(k)] = v
	}
	return out
}

// attempt answers a helper's result, or {error: its dict} when it failed with an AccordError.
func attempt(f func() (any, error)) any {
	got, err := f()
	if err != nil {
		e, ok := c.AsAccordError(err)
		if !ok {
			panic(err)
		}
		return object{"error": e.ToDict()}
	}
	return got
}

func helpers(ask object) object {
	var status []any
	for _, k := range ask["status"].([]any) {
		k := k.(object)
		st := state(k["state"].(object))
		said := c.StatusSaid{Node: str(k["node"])}
		if k["error"] != nil {
			said.Error = c.ErrorFromDict(k["error"])
		}
		words := c.StatusWords{StatusSaid: said, TaskID: "t-1", ContextID: "c-1", MessageID: "m-1", Text: str(k["text"])}
		if data, ok := k["data"].(object); ok {
			words.Data = data
		}
		metadata := c.StatusMetadata(st, said)
		var message any
		if m := c.StatusMessage(st, words); m != nil {
			message = m
		}
		taskStatus, err := c.TaskStatus(st, words)
		if err != nil {
			panic(err)
		}
		// As a peer reads them: through JSON, the way they travel.
		read := []any{}
		for _, md := range []c.Object{roundTrip(metadata), nil} {
			s, e := c.ReadContractState(roundTrip(taskStatus), md)
			var ed any
			if e != nil {
				ed = e.ToDict()
			}
			read = append(read, []any{snake(s), ed})
		}
		status = append(status, object{"metadata": metadata, "message": message, "read": read})
	}
	var errs []any
	parseFailure := -32700
	for _, d := range ask["errors"].([]any) {
		e := c.ErrorFromDict(d)
		restStatus, rest := e.ToRest()
		httpStatus, httpBody := e.ToHTTP()
		mcp := e.ToMCPResult()
		errs = append(errs, object{
			"dict": e.ToDict(), "jsonrpc": e.ToJSONRPCError(), "mcp": mcp,
			"mcp_read":           c.ErrorFromMCPResult(roundTrip(mcp)).ToDict(),
			"jsonrpc_read":       c.ErrorFromJSONRPCError(roundTrip(e.ToJSONRPCError())).ToDict(),
			"info_parse_failure": e.ErrorInfo(&parseFailure),
			"rest":               []any{restStatus, rest}, "http": []any{httpStatus, httpBody},
		})
	}
	var jsonrpcForeign []any
	for _, e := range ask["jsonrpc_foreign"].([]any) {
		jsonrpcForeign = append(jsonrpcForeign, c.ErrorFromJSONRPCError(roundTrip(e.(object))).ToDict())
	}
	var foreign []any
	for _, r := range ask["mcp_foreign"].([]any) {
		foreign = append(foreign, c.ErrorFromMCPResult(r.(object)).ToDict())
	}
	parse := func(m any) any {
		return attempt(func() (any, error) {
			env, err := c.ParseEnvelope(m.(object), true)
			if err != nil {
				return nil, err
			}
			return c.EnvelopeMetadata(env), nil
		})
	}
	var envelopes, badDates []any
	for _, m := range ask["envelopes"].([]any) {
		envelopes = append(envelopes, parse(m))
	}
	for _, m := range ask["bad_dates"].([]any) {
		badDates = append(badDates, parse(m))
	}
	optional, err := c.ParseEnvelope(object{}, false)
	if err != nil || optional != nil {
		panic("an absent optional envelope reads as none")
	}
	incoming, err := c.ParseEnvelope(ask["child_of"].(object), true)
	if err != nil {
		panic(err)
	}
	child, err := c.ChildEnvelope(incoming, c.Child{Goal: "check risk", SpentUnits: 10, SpentToolCalls: 2, ParentTask: "task-9"})
	if err != nil {
		panic(err)
	}
	overspent := attempt(func() (any, error) { return c.ChildEnvelope(incoming, c.Child{Goal: "check risk", SpentUnits: 41}) })
	var admits []any
	for _, k := range ask["admit"].([]any) {
		k := k.(object)
		admits = append(admits, attempt(func() (any, error) {
			env, err := c.ParseEnvelope(object{g.DelegationExtensionURI: k["envelope"]}, true)
			if err != nil {
				return nil, err
			}
			got, err := c.AdmitTurn(env, c.Turn{
				Spent: int64(num(k["spent"])), ToolCallsSpent: int64(num(k["toolCallsSpent"])),
				UnitsPerTurn: int64(num(k["unitsPerTurn"])), ToolCallsPerTurn: int64(num(k["toolCallsPerTurn"])),
				Now: time.UnixMilli(int64(num(k["now"]))),
			})
			if err != nil {
				return nil, err
			}
			return object{"remainingMs": got.Remaining.Round(time.Millisecond).Milliseconds(), "spent": got.Spent, "toolCallsSpent": got.ToolCallsSpent}, nil
		}))
	}
	return object{
		"status": status, "errors": errs, "mcp_foreign": foreign, "jsonrpc_foreign": jsonrpcForeign,
		"envelopes": envelopes,
		"bad_dates": badDates, "envelope_optional": nil, "child": c.EnvelopeMetadata(child),
		"child_overspent": overspent.(object)["error"], "admit": admits,
	}
}

func roundTrip(o c.Object) c.Object {
	raw, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	var back c.Object
	if err := json.Unmarshal(raw, &back); err != nil {
		panic(err)
	}
	return back
}

// verify answers each token of ask["tokens"] with the principal auth.Verifier reads from it,
// or the error it refuses it with, against the trust table ask["trust"] (NAME=JWKS entries).
func verify(ask object) []any {
	trust, err := auth.TrustTable(str(ask["trust"]))
	if err != nil {
		panic(err)
	}
	if grants, ok := ask["grants"].(object); ok {
		for name, list := range grants {
			for _, grant := range list.([]any) {
				trust[name].Grants = append(trust[name].Grants, str(grant))
			}
		}
	}
	verifier := &auth.Verifier{Trust: trust}
	answers := []any{}
	for _, token := range ask["tokens"].([]any) {
		principal, err := verifier.Token(context.Background(), str(token))
		if err != nil {
			e, _ := c.AsAccordError(err)
			answers = append(answers, object{"error": e.ToDict()})
			continue
		}
		answers = append(answers, object{
			"subject": principal.Subject, "roles": principal.Roles, "app": principal.App,
			"scopes": principal.Scopes,
		})
	}
	return answers
}

// sign answers with a token signed by the service key of ask["file"] (made there when absent)
// for ask["service"], asking for ask["scopes"], and the key set that verifies it.
func sign(ask object) object {
	key, err := auth.LoadServiceKey(str(ask["service"]), str(ask["file"]))
	if err != nil {
		panic(err)
	}
	scopes := []string{}
	for _, s := range ask["scopes"].([]any) {
		scopes = append(scopes, str(s))
	}
	credential := &auth.Credential{Key: key, Scopes: scopes}
	token, err := credential.Bearer()
	if err != nil {
		panic(err)
	}
	again, _ := credential.Bearer()
	return object{"token": token, "jwks": key.JWKS(), "kid": key.KeyID(), "renewed": again != token}
}
