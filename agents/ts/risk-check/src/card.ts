// The agent card, from the agent contract as `accord.contracts` exports it: the skills, and
// the contract and delegation extensions with the params Accord's own cards carry.
import {
  CONTRACT_EXTENSION_URI, CONTRACT_VERSION, DELEGATION_EXTENSION_URI,
  IDEMPOTENT_SEND_EXTENSION_URI,
} from "@accord/contract";

interface Skill { id: string; name: string; description: string; tags: string[];
  examples: string[] }
interface Contract { name: string; version: string; description: string; errors: string[];
  waiting_reasons: string[]; input_modes: string[]; output_modes: string[]; skills: Skill[] }

export function buildCard(contract: Contract, url: string, schemaTag: string): object {
  const modes = { inputModes: contract.input_modes, outputModes: contract.output_modes };
  return {
    name: contract.name,
    description: contract.description,
    version: contract.version,
    supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    provider: { url: "https://accord.dev", organization: "Accord" },
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [
        {
          uri: CONTRACT_EXTENSION_URI,
          description: "Accord contract: statuses, error registry, the status metadata under "
            + "'dev.accord/status', and each skill's input and output JSON Schema at "
            + "skillSchemas.url.",
          params: {
            contractVersion: CONTRACT_VERSION,
            agentContractVersion: contract.version,
            agentContractVersions: [contract.version],
            waitingReasons: contract.waiting_reasons,
            errors: contract.errors,
            skillSchemas: { url: `${url}/accord/skill-schemas.json`, sha256: schemaTag },
          },
        },
        {
          uri: DELEGATION_EXTENSION_URI,
          description: "Delegation envelope (goal, budget, deadline, tenant) in message "
            + "metadata under this URI; required for service callers.",
          params: { metadataKey: DELEGATION_EXTENSION_URI, contractVersion: CONTRACT_VERSION },
        },
        {
          uri: IDEMPOTENT_SEND_EXTENSION_URI,
          description: "A send is keyed by (principal, messageId): the same message again "
            + "(same parts, skill and task) returns the task the first made, in its current "
            + "state; another message under the same messageId is IDEMPOTENCY_CONFLICT.",
          params: { contractVersion: CONTRACT_VERSION },
        },
      ],
    },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: {
        description: "ES256 JWT of a trusted service (docs/service-keys.md)",
        scheme: "Bearer", bearerFormat: "JWT" } },
    },
    securityRequirements: [{ schemes: { bearer: {} } }],
    defaultInputModes: contract.input_modes,
    defaultOutputModes: contract.output_modes,
    skills: contract.skills.map((s) => ({
      id: s.id, name: s.name, description: s.description, tags: s.tags, examples: s.examples,
      ...modes,
    })),
  };
}
