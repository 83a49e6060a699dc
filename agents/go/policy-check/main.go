// policy-check in Go: the card, the skill schema document, token checks, and the JSON-RPC
// binding of a2a-go v2 (A2A 1.0). Settings (README.md): PORT, POLICY_CONTRACT (the contract
// file `make go-member` writes), POLICY_TRUST, COMMERCE_URL, POLICY_KEY_FILE (or
// POLICY_SERVICE_TOKEN).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"

	"accord.dev/contract/auth"
	g "accord.dev/contract/generated"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

const skillID = "refund.policy"

func required(name string) string {
	value := os.Getenv(name)
	if value == "" {
		log.Fatalf("%s is required (agents/go/policy-check/README.md)", name)
	}
	return value
}

func getenv(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// exported is what scripts/export_contract.py writes: the agent contract and its skill
// schema document, the member's one source for its card and /accord/skill-schemas.json.
type exported struct {
	Contract json.RawMessage `json:"contract"`
	Schemas  json.RawMessage `json:"schemas"`
}

func main() {
	port := getenv("PORT", "8721")
	base := getenv("POLICY_PUBLIC_URL", "http://127.0.0.1:"+port)
	raw, err := os.ReadFile(required("POLICY_CONTRACT"))
	if err != nil {
		log.Fatal(err)
	}
	var doc exported
	var contract AgentContract
	if err := json.Unmarshal(raw, &doc); err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(doc.Contract, &contract); err != nil {
		log.Fatal(err)
	}
	schemaBody := []byte(doc.Schemas)
	sum := sha256.Sum256(schemaBody)
	schemaTag := hex.EncodeToString(sum[:])
	card, err := json.Marshal(BuildCard(contract, base, schemaTag))
	if err != nil {
		log.Fatal(err)
	}
	// The grant a service must hold to ask for the skill: its contract's access rule says it.
	grant := ""
	for _, skill := range contract.Skills {
		if skill.ID == skillID && skill.Access != nil {
			for _, rule := range skill.Access.Allow {
				if rule.Role == "service" && rule.Scope != nil {
					grant = *rule.Scope
				}
			}
		}
	}
	if grant == "" {
		log.Fatalf("policy-check's contract grants %s to no service", skillID)
	}
	// The envelope constraints the skill declares (its skill schema document's).
	var schemas struct {
		Skills map[string]struct {
			Envelope struct {
				Constraints map[string]any `json:"constraints"`
			} `json:"envelope"`
		} `json:"skills"`
	}
	_ = json.Unmarshal(schemaBody, &schemas)
	declared := map[string]bool{}
	for name := range schemas.Skills[skillID].Envelope.Constraints {
		declared[name] = true
	}
	trust, err := auth.TrustTable(required("POLICY_TRUST"))
	if err != nil {
		log.Fatal(err)
	}
	gate := &Gate{
		Verifier: &auth.Verifier{Trust: trust, Issuer: "accord", Audience: "accord"},
		Grant:    grant, Constraints: declared, Skill: skillID,
	}
	input, err := SkillInputSchema(doc.Contract, skillID)
	if err != nil {
		log.Fatal(err)
	}
	// Its calls to commerce are signed by its own key (POLICY_KEY_FILE, made on first start;
	// its JWKS served below, which commerce's trust table names), or carry a minted token.
	var key *auth.ServiceKey
	bearer := func() (string, error) { return os.Getenv("POLICY_SERVICE_TOKEN"), nil }
	if file := os.Getenv("POLICY_KEY_FILE"); file != "" {
		if key, err = auth.LoadServiceKey(getenv("POLICY_SERVICE_NAME", "policy"), file); err != nil {
			log.Fatal(err)
		}
		credential := &auth.Credential{Key: key, Scopes: []string{LookupTool}}
		bearer = credential.Bearer
	}
	executor := &PolicyExecutor{
		Input:    input,
		Commerce: &Commerce{URL: os.Getenv("COMMERCE_URL"), Bearer: bearer},
		Version:  contract.Version,
		Made:     gate.Made,
	}
	store := taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: a2asrv.NewTaskStoreAuthenticator()})
	handler := a2asrv.NewHandler(executor, a2asrv.WithTaskStore(store), a2asrv.WithCallInterceptors(authenticate{}))
	gate.Next = a2asrv.NewJSONRPCHandler(handler)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(card)
	})
	mux.HandleFunc("GET /accord/skill-schemas.json", func(w http.ResponseWriter, r *http.Request) {
		etag := `"` + schemaTag + `"`
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(schemaBody)
	})
	mux.HandleFunc("GET "+auth.JWKSPath, func(w http.ResponseWriter, r *http.Request) {
		if key == nil {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, http.StatusOK, key.JWKS())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "contract": g.ContractVersion})
	})
	mux.Handle("POST /", gate)
	fmt.Printf("policy-check (go) on %s\n", base)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, mux))
}
