// Package auth verifies the bearer tokens Accord services send each other, as Accord's Python
// verifier does (accord.protocol.auth.verify, docs/service-keys.md): a token `svc:NAME` must be
// ES256-signed by the key of NAME's JWKS its `kid` names, with the issuer and audience
// expected, `iss`, `aud`, `sub`, `iat`, `exp` and `jti` present, not expired (5 s of leeway),
// not issued in the future. The trust table names each service's JWKS (a URL or a file) and,
// optionally, its grants: a token's `scope` may ask for fewer, never more.
//
// It is a package of its own so that accord.dev/contract stays free of dependencies; it uses
// go-jose v4 for the JOSE parts.
package auth

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

// Leeway is the clock skew allowed on `exp` and `iat` (Python's LEEWAY_S).
const Leeway = 5 * time.Second

// DefaultMaxTTL is the longest lifetime (`exp - iat`) of a service's token, as
// ACCORD_SERVICE_TOKEN_MAX_TTL_S's default.
const DefaultMaxTTL = time.Hour

// Principal is who called: the token's subject, roles, app, and its grants.
type Principal struct {
	Subject string
	Roles   []string
	App     string
	// Scopes are the grants the call may use: the token's `scope` claim (space-separated)
	// within the service's grants, the service's grants when it asks for none, or nil when
	// neither says (every grant the trust table would give).
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

// HasScope reports whether the principal may use grant (nil Scopes: every grant).
func (p *Principal) HasScope(grant string) bool {
	if p.Scopes == nil {
		return true
	}
	for _, s := range p.Scopes {
		if s == grant {
			return true
		}
	}
	return false
}

// Service is one trusted service: where its JWKS is, and the grants it holds (nil: the
// token's own `scope` decides).
type Service struct {
	JWKS   string
	Grants []string

	mu      sync.Mutex
	fetched time.Time
	cached  *jose.JSONWebKeySet
}

// keys is the service's JWKS: a file read on each verification (a rotation needs no restart,
// as Python reads it), or a URL fetched again after five minutes.
func (s *Service) keys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	if !strings.HasPrefix(s.JWKS, "http://") && !strings.HasPrefix(s.JWKS, "https://") {
		raw, err := os.ReadFile(s.JWKS)
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.JWKS, nil)
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

// TrustTable reads `NAME=JWKS` entries, comma-separated (each JWKS a URL or a file path).
func TrustTable(spec string) (map[string]*Service, error) {
	table := map[string]*Service{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, where, ok := strings.Cut(entry, "=")
		if !ok || name == "" || where == "" {
			return nil, fmt.Errorf("trust entry %q is not NAME=JWKS", entry)
		}
		table[name] = &Service{JWKS: where}
	}
	return table, nil
}

// Verifier checks bearer tokens against its trust table.
type Verifier struct {
	Trust    map[string]*Service
	Issuer   string // "accord" when empty
	Audience string // "accord" when empty
	// MaxTTL is the longest lifetime a token may have (DefaultMaxTTL when zero).
	MaxTTL time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

var bearer = regexp.MustCompile(`(?i)^Bearer\s+(\S+)$`)

type claims struct {
	jwt.Claims
	Roles any     `json:"roles"`
	App   *string `json:"app"`
	Scope *string `json:"scope"`
}

func unauthenticated(message string) *c.AccordError {
	return c.NewError(g.ErrorCodeUnauthenticated, message, nil)
}

func orDefault(value, fallback string) string {
	if value == "" {
		return fallback
	}
	return value
}

// Request is the caller of an HTTP request (its Authorization header); UNAUTHENTICATED when
// it sent no valid token.
func (v *Verifier) Request(r *http.Request) (*Principal, error) {
	found := bearer.FindStringSubmatch(r.Header.Get("Authorization"))
	if found == nil {
		return nil, unauthenticated("missing credential: send 'Authorization: Bearer <token>'")
	}
	return v.Token(r.Context(), found[1])
}

// Token is the principal of a bearer token; UNAUTHENTICATED when it is not valid.
func (v *Verifier) Token(ctx context.Context, token string) (*Principal, error) {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return nil, unauthenticated("bearer token is invalid")
	}
	var unverified claims
	if err := parsed.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return nil, unauthenticated("bearer token is invalid")
	}
	name, isService := strings.CutPrefix(unverified.Subject, "svc:")
	service := v.Trust[name]
	if !isService || service == nil {
		return nil, unauthenticated("the token's subject is not a trusted service")
	}
	set, err := service.keys(ctx)
	if err != nil || len(parsed.Headers) == 0 || parsed.Headers[0].KeyID == "" {
		return nil, unauthenticated("bearer token is invalid")
	}
	keys := set.Key(parsed.Headers[0].KeyID)
	if len(keys) == 0 {
		return nil, unauthenticated("bearer token is signed by a key its service does not hold")
	}
	var got claims
	if parsed.Claims(keys[0].Key, &got) != nil {
		return nil, unauthenticated("bearer token is invalid")
	}
	return v.check(got, service)
}

func (v *Verifier) check(got claims, service *Service) (*Principal, error) {
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	if got.Issuer == "" || len(got.Audience) == 0 || got.Subject == "" || got.IssuedAt == nil ||
		got.Expiry == nil || strings.TrimSpace(got.ID) == "" {
		return nil, unauthenticated("bearer token lacks a required claim (iss, aud, sub, iat, exp, jti)")
	}
	if got.Issuer != orDefault(v.Issuer, "accord") {
		return nil, unauthenticated("bearer token's 'iss' is not an accepted issuer")
	}
	if !got.Audience.Contains(orDefault(v.Audience, "accord")) {
		return nil, unauthenticated("bearer token's 'aud' does not name this audience")
	}
	if now.After(got.Expiry.Time().Add(Leeway)) {
		return nil, unauthenticated("bearer token has expired")
	}
	if got.IssuedAt.Time().After(now.Add(Leeway)) {
		return nil, unauthenticated("bearer token's 'iat' is in the future")
	}
	limit := v.MaxTTL
	if limit == 0 {
		limit = DefaultMaxTTL
	}
	if got.Expiry.Time().Sub(got.IssuedAt.Time()) > limit {
		return nil, unauthenticated(fmt.Sprintf("bearer token's 'exp' is more than %d s after 'iat'", int(limit.Seconds())))
	}
	principal := &Principal{Subject: got.Subject, App: "accord", Roles: roles(got.Roles)}
	// Only a token that asks to be a service is checked against a service's key (a person's
	// token with a service's subject is no service's).
	if !principal.HasRole("service") {
		return nil, unauthenticated("bearer token of a service lacks the 'service' role")
	}
	if got.App != nil {
		principal.App = *got.App
	}
	// The verifier's table decides what the service may do; the token may only ask for less.
	if got.Scope != nil {
		principal.Scopes = strings.Fields(*got.Scope)
		if service.Grants != nil {
			principal.Scopes = within(principal.Scopes, service.Grants)
		}
	} else if service.Grants != nil {
		principal.Scopes = append([]string{}, service.Grants...)
	}
	return principal, nil
}

// roles reads the `roles` claim: a list of names, or one space-separated string.
func roles(value any) []string {
	switch v := value.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := []string{}
		for _, r := range v {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return []string{}
}

func within(asked, granted []string) []string {
	out := []string{}
	for _, a := range asked {
		for _, g := range granted {
			if a == g {
				out = append(out, a)
				break
			}
		}
	}
	return out
}
