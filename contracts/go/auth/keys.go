// A service's own key, as docs/service-keys.md fixes it and as @accord/contract/service-keys
// does in TypeScript: an ES256 key made on first use and kept in a file (0600, a JWK with its
// private part), its public key set to serve at /.well-known/jwks.json, and tokens with
// Python's claims (accord.protocol.auth.tokens.token_claims): iss and aud `accord`, sub
// `svc:NAME`, roles [service], app, jti, iat, exp, and `scope` when the token asks for fewer
// grants than the verifier's table gives.
package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// JWKSPath is where a service publishes its public keys.
const JWKSPath = "/.well-known/jwks.json"

// ServiceKey is a service's own signing key.
type ServiceKey struct {
	Service string
	private jose.JSONWebKey
	signer  jose.Signer
}

// LoadServiceKey reads the service's key from file, or makes one there (0600, in a 0700
// folder) when there is none. A key file others may read is refused.
func LoadServiceKey(service, file string) (*ServiceKey, error) {
	var jwk jose.JSONWebKey
	raw, err := os.ReadFile(file)
	switch {
	case err == nil:
		info, statErr := os.Stat(file)
		if statErr != nil {
			return nil, statErr
		}
		if info.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("%s is readable by others: chmod 600 it (docs/service-keys.md)", file)
		}
		if err := json.Unmarshal(raw, &jwk); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	case errors.Is(err, os.ErrNotExist):
		if jwk, err = newKey(); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return nil, err
		}
		text, err := json.Marshal(jwk)
		if err != nil {
			return nil, err
		}
		out, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		if _, err := out.Write(text); err != nil {
			out.Close()
			return nil, err
		}
		if err := out.Close(); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	if _, private := jwk.Key.(*ecdsa.PrivateKey); !private || jwk.KeyID == "" {
		return nil, fmt.Errorf("%s holds no private key with a kid", file)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jwk},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	return &ServiceKey{Service: service, private: jwk, signer: signer}, nil
}

// newKey is a fresh P-256 key whose kid is its thumbprint behind a prefix (a kid never starts
// with '-', which a command line would read as an option).
func newKey() (jose.JSONWebKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	jwk := jose.JSONWebKey{Key: key, Algorithm: string(jose.ES256), Use: "sig"}
	public := jwk.Public()
	thumb, err := public.Thumbprint(crypto.SHA256)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	jwk.KeyID = "es256-" + base64.RawURLEncoding.EncodeToString(thumb)[:22]
	return jwk, nil
}

// KeyID is the key's `kid`.
func (k *ServiceKey) KeyID() string { return k.private.KeyID }

// JWKS is what the service publishes at JWKSPath: its public key.
func (k *ServiceKey) JWKS() jose.JSONWebKeySet {
	public := k.private.Public()
	public.Use = "sig"
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{public}}
}

// Token is a token of `svc:SERVICE` living ttl, asking for scopes only (none: all its grants).
func (k *ServiceKey) Token(scopes []string, ttl time.Duration) (string, error) {
	now := time.Now()
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", err
	}
	claims := struct {
		jwt.Claims
		Roles []string `json:"roles"`
		App   string   `json:"app"`
		Scope string   `json:"scope,omitempty"`
	}{
		Claims: jwt.Claims{
			Issuer: "accord", Audience: jwt.Audience{"accord"}, Subject: "svc:" + k.Service,
			IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(ttl)),
			ID: hex.EncodeToString(id),
		},
		Roles: []string{"service"},
		App:   "accord",
		Scope: strings.Join(sortedUnique(scopes), " "),
	}
	return jwt.Signed(k.signer).Claims(claims).Serialize()
}

func sortedUnique(items []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// Credential is a bearer token that signs itself again a minute before it runs out.
type Credential struct {
	Key    *ServiceKey
	Scopes []string
	TTL    time.Duration // five minutes when zero

	mu      sync.Mutex
	token   string
	expires time.Time
}

// Bearer is a valid token for the next call.
func (c *Credential) Bearer() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ttl := c.TTL
	if ttl == 0 {
		ttl = 5 * time.Minute
	}
	if c.token == "" || time.Until(c.expires) < time.Minute {
		token, err := c.Key.Token(c.Scopes, ttl)
		if err != nil {
			return "", err
		}
		c.token, c.expires = token, time.Now().Add(ttl)
	}
	return c.token, nil
}
