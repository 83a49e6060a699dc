// Bearer tokens, verified with go-jose against the keys of the services this agent trusts: a
// token `svc:NAME` must be signed (ES256) by a key of NAME's JWKS, found by its `kid`
// (docs/service-keys.md). The trust table is POLICY_TRUST: `NAME=JWKS` entries,
// comma-separated, each JWKS a URL or a file path.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	c "accord.dev/contract"
	g "accord.dev/contract/generated"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Principal is who called: the token's subject, roles, app, and the grants it asks for.
type Principal struct {
	Subject string
	Roles   []string
	App     string
	// Scopes are the grants the token asks for (its `scope` claim), or nil when it asks for
	// all its service holds: a token may narrow the trust table's grants, never widen them,
	// and POLICY_TRUST lists only services granted refund.policy.
	Scopes []string
}

// HasRole reports whether the principal holds role.
func (p *Principal) HasRole(role string) bool {
	for _, r := range p.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// keySource gives a service's JWKS: a file read on each verification (a rotation needs no
// restart, as Python reads it), or a URL fetched again after five minutes.
type keySource struct {
	where   string
	mu      sync.Mutex
	fetched time.Time
	cached  *jose.JSONWebKeySet
}

func (s *keySource) keys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	if !strings.HasPrefix(s.where, "http://") && !strings.HasPrefix(s.where, "https://") {
		raw, err := os.ReadFile(s.where)
		if err != nil {
			return nil, err
		}
		var set jose.JSONWebKeySet
		return &set, json.Unmarshal(raw, &set)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached != nil && time.Since(s.fetched) < 5*time.Minute {
		return s.cached, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.where, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, err
	}
	s.cached, s.fetched = &set, time.Now()
	return &set, nil
}

// TrustTable reads POLICY_TRUST.
func TrustTable(spec string) (map[string]*keySource, error) {
	table := map[string]*keySource{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, where, ok := strings.Cut(entry, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("POLICY_TRUST entry %q is not NAME=JWKS", entry)
		}
		table[name] = &keySource{where: where}
	}
	return table, nil
}

// Verifier checks bearer tokens against the trust table.
type Verifier struct {
	Trust    map[string]*keySource
	Issuer   string
	Audience string
}

var bearer = regexp.MustCompile(`(?i)^Bearer\s+(\S+)$`)

type claims struct {
	jwt.Claims
	Roles []string `json:"roles"`
	App   *string  `json:"app"`
	Scope *string  `json:"scope"`
}

func unauthenticated(message string) *c.AccordError {
	return c.NewError(g.ErrorCodeUnauthenticated, message, nil)
}

// Principal is the caller of a request; UNAUTHENTICATED when it sent no valid token.
func (v *Verifier) Principal(r *http.Request) (*Principal, error) {
	found := bearer.FindStringSubmatch(r.Header.Get("Authorization"))
	if found == nil {
		return nil, unauthenticated("missing credential: send 'Authorization: Bearer <token>'")
	}
	token, err := jwt.ParseSigned(found[1], []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return nil, unauthenticated("the bearer token is not a JWT")
	}
	var unverified jwt.Claims
	if err := token.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return nil, unauthenticated("the bearer token is not a JWT")
	}
	source, trusted := (*keySource)(nil), false
	if name, ok := strings.CutPrefix(unverified.Subject, "svc:"); ok {
		source, trusted = v.Trust[name]
	}
	if !trusted {
		return nil, unauthenticated("the token's subject is not a trusted service")
	}
	invalid := unauthenticated("the bearer token is invalid or expired")
	set, err := source.keys(r.Context())
	if err != nil || len(token.Headers) == 0 {
		return nil, invalid
	}
	for _, key := range set.Key(token.Headers[0].KeyID) {
		var got claims
		if token.Claims(key.Key, &got) != nil {
			continue
		}
		expected := jwt.Expected{Issuer: v.Issuer, AnyAudience: jwt.Audience{v.Audience}, Time: time.Now()}
		if got.Claims.ValidateWithLeeway(expected, 30*time.Second) != nil ||
			got.Expiry == nil || got.IssuedAt == nil || got.ID == "" || got.Subject == "" {
			return nil, invalid
		}
		principal := &Principal{Subject: got.Subject, Roles: got.Roles, App: "accord"}
		if got.App != nil {
			principal.App = *got.App
		}
		if got.Scope != nil {
			principal.Scopes = strings.Fields(*got.Scope)
		}
		return principal, nil
	}
	return nil, invalid
}
