// The tool contracts this server keeps (contracts/*.yaml, the files `accord contract-test
// --contract` reads): what it lists (name, schemas, annotations derived from the side effect,
// the versions it serves) and how it checks a call's arguments and its own answers.
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { AccordError, CONTRACT_VERSIONS_META_KEY } from "@accord/contract";

export type SideEffect = "none" | "reversible_write" | "irreversible_write";

export interface ToolContract {
  readonly name: string;
  readonly version: string;
  readonly title: string;
  readonly description: string;
  readonly side_effect: SideEffect;
  readonly idempotency_key: "required" | "optional" | "none";
  readonly errors: readonly string[];
  readonly access: {
    readonly customer_field?: string;
    readonly allow: readonly { readonly role: string; readonly scope?: string }[];
  };
  readonly input_schema: Record<string, unknown>;
  readonly output_schema: Record<string, unknown>;
}

export interface Contracted {
  readonly contract: ToolContract;
  readonly checkInput: (args: unknown) => void;
  readonly checkOutput: (result: unknown) => void;
}

const ajv = new Ajv2020({ allErrors: false, strict: false });
addFormats.default(ajv);

function checker(validate: ValidateFunction, what: string, code: "INVALID_INPUT" | "INTERNAL") {
  return (value: unknown): void => {
    if (validate(value)) return;
    const first = validate.errors?.[0];
    const where = first?.instancePath || "/";
    throw new AccordError(code, `${what}: ${where} ${first?.message ?? "is invalid"}`, {
      field: where.replaceAll("/", ".").replace(/^\./, "") || "arguments",
    });
  };
}

export function loadContract(file: string): Contracted {
  const contract = parse(readFileSync(file, "utf8")) as ToolContract;
  return {
    contract,
    checkInput: checker(ajv.compile(contract.input_schema), "bad arguments", "INVALID_INPUT"),
    // An answer outside the output schema is this server's bug, never sent as a result.
    checkOutput: checker(ajv.compile(contract.output_schema), "bad answer", "INTERNAL"),
  };
}

/** The tools/list entry: MCP annotations derived from the contract, as Python derives them
 * (ToolContract.mcp_annotations), and the versions served in `_meta` (TOOL-013). */
export function listed(contract: ToolContract): Record<string, unknown> {
  const readOnly = contract.side_effect === "none";
  return {
    name: contract.name,
    title: contract.title,
    description: contract.description,
    inputSchema: contract.input_schema,
    outputSchema: contract.output_schema,
    annotations: {
      title: contract.title,
      readOnlyHint: readOnly,
      destructiveHint: contract.side_effect === "irreversible_write",
      idempotentHint: readOnly || contract.idempotency_key === "required",
      openWorldHint: false,
    },
    _meta: { [CONTRACT_VERSIONS_META_KEY]: [contract.version] },
  };
}
