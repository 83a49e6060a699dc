// Hand-written: reading and classifying error codes over the generated registry
// (generated/errors.go). Every code and wire form is data there.

package contract

import (
	"fmt"

	g "accord.dev/contract/generated"
)

// FallbackCode is the code an unreadable or unknown value reads as
// (accord.contracts.errors.parse_code).
const FallbackCode = g.ErrorCodeInternal

var jsonrpcCodes = func() map[int]g.ErrorCode {
	out := make(map[int]g.ErrorCode, len(g.Registry))
	for _, code := range g.ErrorCodeValues { // the registry's order: as in Python, the last wins
		out[g.Registry[code].JSONRPCCode] = code
	}
	return out
}()

// SpecOf is the registry row of a code: its retry class and wire forms.
func SpecOf(code g.ErrorCode) g.ErrorSpec { return g.Registry[code] }

// RetryClassOf is what a caller does with an error of this code: retry, replan or stop.
func RetryClassOf(code g.ErrorCode) g.RetryClass { return g.Registry[code].Retry }

// ParseCode reads a code from a wire value; an unknown value becomes FallbackCode.
func ParseCode(value any) g.ErrorCode {
	switch v := value.(type) {
	case string:
		if g.ErrorCode(v).Valid() {
			return g.ErrorCode(v)
		}
	case g.ErrorCode:
		if v.Valid() {
			return v
		}
	}
	return FallbackCode
}

// CodeForJSONRPC is the contract code of a JSON-RPC error code (ours, A2A's or JSON-RPC's).
func CodeForJSONRPC(number int) (g.ErrorCode, bool) {
	if code, ok := jsonrpcCodes[number]; ok {
		return code, true
	}
	code, ok := g.ForeignJSONRPCCodes[number]
	return code, ok
}

// CodeForHTTPStatus is the contract code of an HTTP error status that came without a
// contract body.
func CodeForHTTPStatus(status int) g.ErrorCode {
	if code, ok := g.HTTPStatusCodes[status]; ok {
		return code
	}
	if code, ok := g.HTTPStatusClassCodes[fmt.Sprintf("%dxx", status/100)]; ok {
		return code
	}
	return FallbackCode
}
