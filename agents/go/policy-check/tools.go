// commerce's orders.lookup over MCP (the official Go SDK's client, streamable HTTP), called
// with this service's own token and the delegation of the customer the request is about
// (`_meta["dev.accord/delegation"]`), as Python's check_requests.lookup_order calls it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	c "accord.dev/contract"
	g "accord.dev/contract/generated"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LookupTool is the one tool policy-check calls.
const LookupTool = "orders.lookup"

// Commerce calls commerce's tools.
type Commerce struct {
	URL string
	// Bearer gives the token of each call: this service's own key's (auth.Credential), or a
	// token minted for it.
	Bearer func() (string, error)
}

type bearerTransport struct {
	bearer func() (string, error)
	base   http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	token, err := t.bearer()
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return t.base.RoundTrip(r)
}

// Call makes one call in its own session: a failure to reach commerce is UNAVAILABLE, a tool
// error is the contract error its `_meta` carries (fromMCPResult).
func (cm *Commerce) Call(ctx context.Context, tool string, args map[string]any, delegation *g.ToolDelegation) (map[string]any, error) {
	if cm.URL == "" {
		return nil, c.NewError(g.ErrorCodeUnavailable, "no configured tool server offers "+tool, nil)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "policy-check-go", Version: "0.1.0"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:             cm.URL,
		HTTPClient:           &http.Client{Transport: bearerTransport{cm.Bearer, http.DefaultTransport}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, c.NewError(g.ErrorCodeUnavailable, fmt.Sprintf("commerce is unreachable: %v", err), nil)
	}
	defer session.Close()
	result, err := session.CallTool(ctx, &mcp.CallToolParams{
		Name: tool, Arguments: args, Meta: mcp.Meta{g.ToolDelegationMetaKey: delegation},
	})
	if err != nil {
		return nil, c.NewError(g.ErrorCodeUnavailable, fmt.Sprintf("%s failed on the wire: %v", tool, err), nil)
	}
	if result.IsError {
		raw, _ := json.Marshal(result)
		var wire c.Object
		_ = json.Unmarshal(raw, &wire)
		return nil, c.ErrorFromMCPResult(wire)
	}
	structured, ok := result.StructuredContent.(map[string]any)
	if !ok {
		raw, _ := json.Marshal(result.StructuredContent)
		if json.Unmarshal(raw, &structured) != nil || structured == nil {
			return nil, c.NewError(g.ErrorCodeContractViolation, tool+" answered no structured content", nil)
		}
	}
	return structured, nil
}
