// Hand-written: the contract error and the wire forms a server writes it in, each as Python's
// accord.contracts.errors.AccordError writes it (to_dict, error_info, to_jsonrpc_error,
// to_rest, to_http, to_mcp_result, from_mcp_result). Every code, number and reason is data in
// generated/errors.go; nothing here names a code but the fallback, as in codes.go.

package contract

import (
	"encoding/json"
	"errors"
	"strings"

	g "accord.dev/contract/generated"
)

// ErrorInfoType is the `@type` of a google.rpc.ErrorInfo (protobuf's Any type URL).
const ErrorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// AccordError is the one error type of the contract: a code from the registry, a message safe
// to show a remote caller (the code's meaning when none is given), and small JSON details.
type AccordError struct {
	Code    g.ErrorCode
	Message string
	Details Object
}

// NewError is an AccordError of code; message "" means the code's meaning; details may be nil.
func NewError(code g.ErrorCode, message string, details Object) *AccordError {
	if message == "" {
		message = g.Registry[code].Meaning
	}
	copied := Object{}
	for k, v := range details {
		copied[k] = v
	}
	return &AccordError{Code: code, Message: message, Details: copied}
}

func (e *AccordError) Error() string { return string(e.Code) + ": " + e.Message }

// Retry is what a caller does with this error: retry, replan or stop.
func (e *AccordError) Retry() g.RetryClass { return g.Registry[e.Code].Retry }

// AsAccordError finds the AccordError in err's chain.
func AsAccordError(err error) (*AccordError, bool) {
	var found *AccordError
	ok := errors.As(err, &found)
	return found, ok
}

// ToDict is the neutral form: status metadata, the error DataPart, MCP `_meta`, HTTP bodies.
func (e *AccordError) ToDict() Object {
	details := e.Details
	if details == nil {
		details = Object{}
	}
	return Object{"code": string(e.Code), "retry": string(e.Retry()), "message": e.Message, "details": details}
}

// ErrorFromDict reads the neutral form; an unknown code reads as INTERNAL, never a crash.
func ErrorFromDict(data any) *AccordError {
	d, _ := asObject(data)
	message, _ := d["message"].(string)
	details, _ := asObject(d["details"])
	return NewError(ParseCode(d["code"]), message, details)
}

// ErrorInfo is the one google.rpc.ErrorInfo of an error on an A2A wire: an error A2A names
// gets A2A's domain and reason with the contract code in metadata.accordCode; any other gets
// ours, reason = the code. jsonrpcCode, when not nil, is the JSON-RPC code actually sent where
// it is not the registry's (a parse failure is answered with -32700).
func (e *AccordError) ErrorInfo(jsonrpcCode *int) Object {
	metadata := Object{"message": e.Message}
	if len(e.Details) > 0 {
		text, err := PythonJSONDumps(e.Details)
		if err != nil {
			text = "{}" // details are JSON by contract; a value without a JSON form is dropped
		}
		metadata["details"] = text
	}
	number := g.Registry[e.Code].JSONRPCCode
	if jsonrpcCode != nil {
		number = *jsonrpcCode
	}
	reason, named := g.A2AReasons[number]
	if !named {
		return Object{"@type": ErrorInfoType, "reason": string(e.Code), "domain": g.ErrorDomain, "metadata": metadata}
	}
	metadata[g.ErrorInfoCodeKey] = string(e.Code)
	return Object{"@type": ErrorInfoType, "reason": reason, "domain": g.A2AErrorDomain, "metadata": metadata}
}

// ToJSONRPCError is the JSON-RPC `error` object (A2A 1.0: data is a list of one ErrorInfo).
func (e *AccordError) ToJSONRPCError() Object {
	return Object{"code": g.Registry[e.Code].JSONRPCCode, "message": e.Message, "data": []any{e.ErrorInfo(nil)}}
}

// ToRest is A2A's HTTP+JSON (REST) answer: the registry's status and a google.rpc.Status body.
func (e *AccordError) ToRest() (int, Object) {
	spec := g.Registry[e.Code]
	return spec.RestStatus, Object{"error": Object{
		"code": spec.RestStatus, "status": spec.RestReason, "message": e.Message,
		"details": []any{e.ErrorInfo(nil)},
	}}
}

// ToHTTP is a plain HTTP endpoint's answer (health, admin): the registry's status, the
// neutral form.
func (e *AccordError) ToHTTP() (int, Object) {
	return g.Registry[e.Code].HTTPStatus, Object{"error": e.ToDict()}
}

// ToMCPResult is the MCP CallToolResult (wire JSON) of the error: isError, a JSON text block,
// the error under `_meta["dev.accord/error"]`. Never in structuredContent: MCP clients
// validate that against the tool's outputSchema even when isError is true.
func (e *AccordError) ToMCPResult() Object {
	payload := e.ToDict()
	return Object{
		"isError": true,
		"content": []any{Object{"type": "text", "text": e.mcpText()}},
		"_meta":   Object{g.MCPErrorMetaKey: payload},
	}
}

// mcpText is `json.dumps({"error": to_dict()})`: the payload's keys in Python's order, the
// details' sorted (PythonJSONDumps).
func (e *AccordError) mcpText() string {
	details, err := PythonJSONDumps(e.ToDict()["details"])
	if err != nil {
		details = "{}"
	}
	var b strings.Builder
	b.WriteString(`{"error": {"code": `)
	writeString(&b, string(e.Code))
	b.WriteString(`, "retry": `)
	writeString(&b, string(e.Retry()))
	b.WriteString(`, "message": `)
	writeString(&b, e.Message)
	b.WriteString(`, "details": ` + details + "}}")
	return b.String()
}

// ErrorFromMCPResult is the contract error of an MCP tool result (wire JSON). A server that
// is not Accord gives no code: its text proves nothing about retry, so it reads as INTERNAL
// (stop), never guessed from words.
func ErrorFromMCPResult(result Object) *AccordError {
	meta := result["_meta"]
	if !truthy(meta) {
		meta = result["meta"] // Python's `result.get("_meta") or result.get("meta")`
	}
	if m, ok := asObject(meta); ok {
		if payload, ok := asObject(m[g.MCPErrorMetaKey]); ok {
			return ErrorFromDict(payload)
		}
	}
	text := firstText(result["content"])
	var details Object
	if text != "" {
		runes := []rune(text)
		if len(runes) > 500 {
			runes = runes[:500]
		}
		details = Object{"text": string(runes)}
	}
	return NewError(FallbackCode, "tool returned an error without a contract code", details)
}

func truthy(value any) bool {
	switch v := value.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	case float64:
		return v != 0
	}
	return true
}

func firstText(content any) string {
	blocks, _ := content.([]any)
	for _, block := range blocks {
		if b, ok := asObject(block); ok && b["type"] == "text" {
			if text, ok := b["text"].(string); ok {
				return text
			}
		}
	}
	return ""
}

// ErrorInfoCode is the contract code an ErrorInfo carries: ours by its reason, A2A's by the
// code in its metadata; "" when it names none (a peer that is not Accord).
func ErrorInfoCode(info any) g.ErrorCode {
	i, ok := asObject(info)
	if !ok {
		return ""
	}
	var raw any
	switch i["domain"] {
	case g.ErrorDomain:
		raw = i["reason"]
	case g.A2AErrorDomain:
		if meta, ok := asObject(i["metadata"]); ok {
			raw = meta[g.ErrorInfoCodeKey]
		}
	}
	if code, ok := raw.(string); ok && g.ErrorCode(code).Valid() {
		return g.ErrorCode(code)
	}
	return ""
}

// ErrorFromJSONRPCError reads the JSON-RPC `error` a peer answered a call with (wire JSON), as
// AccordError.from_jsonrpc_error does: the first ErrorInfo naming a contract code (its details
// and, when the error has none, its message), else the code the JSON-RPC number maps to, else
// INTERNAL.
func ErrorFromJSONRPCError(e Object) *AccordError {
	message, hasMessage := e["message"].(string)
	infos, _ := e["data"].([]any)
	for _, info := range infos {
		code := ErrorInfoCode(info)
		if code == "" {
			continue
		}
		var details Object
		if meta, ok := asObject(info.(map[string]any)["metadata"]); ok {
			if raw, ok := meta["details"].(string); ok {
				var loaded any
				if json.Unmarshal([]byte(raw), &loaded) == nil {
					details, _ = asObject(loaded)
				}
			}
			if text, ok := meta["message"].(string); ok && !hasMessage {
				message, hasMessage = text, true
			}
		}
		return NewError(code, message, details)
	}
	if number, ok := e["code"].(float64); ok && number == float64(int(number)) {
		if code, known := CodeForJSONRPC(int(number)); known {
			return NewError(code, message, nil)
		}
	}
	return NewError(FallbackCode, message, nil)
}
