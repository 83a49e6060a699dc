// The agent card, from the agent contract as `accord.contracts` exports it (POLICY_CONTRACT,
// which `make go-member` writes): the skills, and the contract, delegation and idempotent-send
// extensions with the params Accord's own cards carry. JSON-RPC is its one binding.
package main

import (
	g "accord.dev/contract/generated"
)

// AgentContract is the part of the exported agent contract the card and the gate read.
type AgentContract struct {
	Name           string   `json:"name"`
	Version        string   `json:"version"`
	Description    string   `json:"description"`
	Errors         []string `json:"errors"`
	WaitingReasons []string `json:"waiting_reasons"`
	InputModes     []string `json:"input_modes"`
	OutputModes    []string `json:"output_modes"`
	Skills         []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
		Examples    []string `json:"examples"`
		Access      *struct {
			Allow []struct {
				Role  string  `json:"role"`
				Scope *string `json:"scope"`
			} `json:"allow"`
		} `json:"access"`
	} `json:"skills"`
}

// BuildCard is the card of the contract at url; schemaTag is the skill schema document's
// sha256 (its ETag).
func BuildCard(contract AgentContract, url, schemaTag string) map[string]any {
	skills := []any{}
	for _, s := range contract.Skills {
		skills = append(skills, map[string]any{
			"id": s.ID, "name": s.Name, "description": s.Description, "tags": s.Tags,
			"examples": s.Examples, "inputModes": contract.InputModes, "outputModes": contract.OutputModes,
		})
	}
	return map[string]any{
		"name":                contract.Name,
		"description":         contract.Description,
		"version":             contract.Version,
		"supportedInterfaces": []any{map[string]any{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		"provider":            map[string]any{"url": "https://accord.dev", "organization": "Accord"},
		"capabilities": map[string]any{
			"streaming":         true,
			"pushNotifications": false,
			"extensions": []any{
				map[string]any{
					"uri": g.ContractExtensionURI,
					"description": "Accord contract: statuses, error registry, the status metadata under " +
						"'dev.accord/status', and each skill's input and output JSON Schema at skillSchemas.url.",
					"params": map[string]any{
						"contractVersion":       g.ContractVersion,
						"agentContractVersion":  contract.Version,
						"agentContractVersions": []string{contract.Version},
						"waitingReasons":        contract.WaitingReasons,
						"errors":                contract.Errors,
						"skillSchemas":          map[string]any{"url": url + "/accord/skill-schemas.json", "sha256": schemaTag},
					},
				},
				map[string]any{
					"uri": g.DelegationExtensionURI,
					"description": "Delegation envelope (goal, budget, deadline, tenant) in message " +
						"metadata under this URI; required for service callers.",
					"params": map[string]any{"metadataKey": g.DelegationExtensionURI, "contractVersion": g.ContractVersion},
				},
				map[string]any{
					"uri": g.IdempotentSendExtensionURI,
					"description": "A send is keyed by (principal, messageId): the same message again " +
						"(same parts, skill and task) returns the task the first made, in its current " +
						"state; another message under the same messageId is IDEMPOTENCY_CONFLICT.",
					"params": map[string]any{"contractVersion": g.ContractVersion},
				},
			},
		},
		"securitySchemes": map[string]any{
			"bearer": map[string]any{"httpAuthSecurityScheme": map[string]any{
				"description": "ES256 JWT of a trusted service (docs/service-keys.md)",
				"scheme":      "Bearer", "bearerFormat": "JWT",
			}},
		},
		"securityRequirements": []any{map[string]any{"schemes": map[string]any{"bearer": map[string]any{}}}},
		"defaultInputModes":    contract.InputModes,
		"defaultOutputModes":   contract.OutputModes,
		"skills":               skills,
	}
}
