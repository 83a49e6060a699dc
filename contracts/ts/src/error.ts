// Hand-written: the contract error and the wire forms a server writes it in, each exactly as
// Python's accord.contracts.errors.AccordError writes it (to_dict, error_info,
// to_jsonrpc_error, to_mcp_result). Every code, number and reason is data in
// src/generated/errors.ts; nothing here names a code but the fallback, as in codes.ts.

import { FALLBACK_CODE, parseCode } from "./codes.js";
import {
  A2A_ERROR_DOMAIN,
  A2A_REASONS,
  ERROR_DOMAIN,
  type ErrorCode,
  REGISTRY,
  type RetryClass,
} from "./generated/errors.js";
import { ERROR_INFO_CODE_KEY, MCP_ERROR_META_KEY } from "./generated/keys.js";
import { type JsonObject, type JsonValue, isJsonObject, pythonJsonDumps } from "./json.js";

/** `@type` of a google.rpc.ErrorInfo (protobuf's Any type URL, fixed by Google). */
export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";

/** The neutral form of an error: status metadata, the error DataPart, MCP `_meta`, HTTP. */
export interface ErrorDict {
  code: ErrorCode;
  retry: RetryClass;
  message: string;
  details: JsonObject;
}

/** A google.rpc.ErrorInfo as A2A's JSON-RPC `data` and REST `details` carry it. */
export interface ErrorInfo {
  "@type": string;
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** The `error` member of a JSON-RPC answer. */
export interface JsonRpcError {
  code: number;
  message: string;
  data: ErrorInfo[];
}

/** An MCP `CallToolResult` (wire JSON) that reports a contract error. */
export interface McpErrorResult {
  isError: true;
  content: { type: "text"; text: string }[];
  _meta: { [MCP_ERROR_META_KEY]: ErrorDict };
}

/**
 * The one error type of the contract: a code from the registry, a message safe to show a
 * remote caller (the code's meaning when none is given), and small JSON details for machines.
 */
export class AccordError extends Error {
  readonly code: ErrorCode;
  readonly details: JsonObject;

  constructor(code: ErrorCode, message?: string, details?: JsonObject) {
    super(message || REGISTRY[code].meaning);
    this.name = "AccordError";
    this.code = code;
    this.details = { ...(details ?? {}) };
  }

  /** What a caller does with this error: retry, replan or stop. */
  get retry(): RetryClass {
    return REGISTRY[this.code].retry;
  }

  toDict(): ErrorDict {
    return { code: this.code, retry: this.retry, message: this.message, details: this.details };
  }

  /** Read the neutral form; an unknown code reads as INTERNAL, never a crash. */
  static fromDict(data: unknown): AccordError {
    const d = isJsonObject(data) ? data : {};
    const message = d["message"];
    const details = d["details"];
    return new AccordError(
      parseCode(d["code"], FALLBACK_CODE),
      typeof message === "string" ? message : undefined,
      isJsonObject(details) ? details : undefined,
    );
  }
}

/**
 * The one google.rpc.ErrorInfo of an error on an A2A wire: an error A2A names gets A2A's
 * domain and reason with the contract code in `metadata.accordCode`; any other gets ours,
 * reason = the code. `jsonrpcCode` is the JSON-RPC code sent where it is not the registry's.
 */
export function errorInfo(error: AccordError, jsonrpcCode?: number): ErrorInfo {
  const metadata: Record<string, string> = { message: error.message };
  if (Object.keys(error.details).length > 0) {
    metadata["details"] = pythonJsonDumps(error.details, true);
  }
  const a2aReason = A2A_REASONS.get(jsonrpcCode ?? REGISTRY[error.code].jsonrpc_code);
  if (a2aReason === undefined) {
    return { "@type": ERROR_INFO_TYPE, reason: error.code, domain: ERROR_DOMAIN, metadata };
  }
  return {
    "@type": ERROR_INFO_TYPE,
    reason: a2aReason,
    domain: A2A_ERROR_DOMAIN,
    metadata: { [ERROR_INFO_CODE_KEY]: error.code, ...metadata },
  };
}

/** The JSON-RPC `error` object of a contract error (A2A 1.0: data is one ErrorInfo). */
export function toJsonRpcError(error: AccordError): JsonRpcError {
  return {
    code: REGISTRY[error.code].jsonrpc_code,
    message: error.message,
    data: [errorInfo(error)],
  };
}

/** A2A's HTTP+JSON (REST) answer: the registry's status and a google.rpc.Status body. */
export function toRestError(error: AccordError): [number, JsonObject] {
  const spec = REGISTRY[error.code];
  const details: JsonValue = [{ ...errorInfo(error) }];
  return [
    spec.rest_status,
    {
      error: {
        code: spec.rest_status,
        status: spec.rest_reason,
        message: error.message,
        details,
      },
    },
  ];
}

/** A plain HTTP endpoint's answer (health, admin): the registry's status, the neutral form. */
export function toHttpError(error: AccordError): [number, JsonObject] {
  return [REGISTRY[error.code].http_status, { error: { ...error.toDict() } }];
}

/**
 * The MCP tool result of a contract error: isError, a JSON text block, the error under
 * `_meta["dev.accord/error"]`. Never in structuredContent: MCP clients validate that against
 * the tool's outputSchema even when isError is true.
 */
export function toMcpResult(error: AccordError): McpErrorResult {
  const payload = error.toDict();
  const body: JsonValue = { error: { ...payload } };
  return {
    isError: true,
    content: [{ type: "text", text: pythonJsonDumps(body) }],
    _meta: { [MCP_ERROR_META_KEY]: payload },
  };
}

/**
 * The contract error of an MCP tool result. A server that is not Accord gives no code: its
 * text proves nothing about retry, so it reads as INTERNAL (stop), never guessed from words.
 */
export function fromMcpResult(result: unknown): AccordError {
  const r = isJsonObject(result) ? result : {};
  const given = r["_meta"];
  // Python's `result.get("_meta") or result.get("meta")`: an empty `_meta` counts as none.
  const meta = pythonTruthy(given) ? given : r["meta"];
  const payload = isJsonObject(meta) ? meta[MCP_ERROR_META_KEY] : undefined;
  if (isJsonObject(payload)) return AccordError.fromDict(payload);
  const text = firstText(r["content"]);
  return new AccordError(
    FALLBACK_CODE,
    "tool returned an error without a contract code",
    text ? { text: text.slice(0, 500) } : undefined,
  );
}

function pythonTruthy(value: JsonValue | undefined): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isJsonObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

function firstText(content: JsonValue | undefined): string {
  if (!Array.isArray(content)) return "";
  for (const block of content) {
    if (isJsonObject(block) && block["type"] === "text" && typeof block["text"] === "string") {
      return block["text"];
    }
  }
  return "";
}

/**
 * The answer to a request whose body could not be read, as Accord's Python servers give it:
 * a body that is not JSON is HTTP 400 with JSON-RPC's parse error (-32700), one over the size
 * limit HTTP 413, anything else HTTP 500 INTERNAL; the contract code is in the one ErrorInfo,
 * never a framework's HTML page or stack trace. `failure` is what the body parser threw
 * (body-parser's `type`: `entity.parse.failed`, `entity.too.large`, ...).
 */
export function bodyFailureAnswer(failure: unknown): [number, JsonObject] {
  const type = (failure as { type?: unknown } | null)?.type;
  if (type === "entity.too.large") {
    const error = new AccordError("INVALID_INPUT", "the request body is over the size limit");
    return [413, { jsonrpc: "2.0", id: null, error: toJsonRpcError(error) as unknown as JsonObject }];
  }
  if (typeof type === "string" && type.startsWith("entity.") || failure instanceof SyntaxError) {
    const error = new AccordError("INVALID_INPUT", "the request body is not JSON");
    const parse = { code: -32700, message: error.message, data: [errorInfo(error, -32700)] };
    return [400, { jsonrpc: "2.0", id: null, error: parse as unknown as JsonObject }];
  }
  return toHttpError(failure instanceof AccordError ? failure : new AccordError("INTERNAL"));
}
