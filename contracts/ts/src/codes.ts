// Hand-written: reading and classifying error codes over the generated registry
// (src/generated/errors.ts). Every code and wire form is data there.

import {
  type ErrorCode,
  type ErrorSpec,
  FOREIGN_JSONRPC_CODES,
  HTTP_STATUS_CLASS_CODES,
  HTTP_STATUS_CODES,
  REGISTRY,
  type RetryClass,
  isErrorCode,
} from "./generated/errors.js";

/** The code an unreadable or unknown value reads as (accord.contracts.errors.parse_code). */
export const FALLBACK_CODE: ErrorCode = "INTERNAL";

const JSONRPC_CODES: ReadonlyMap<number, ErrorCode> = new Map(
  Object.values(REGISTRY).map((spec: ErrorSpec) => [spec.jsonrpc_code, spec.code]),
);

/** The registry row of a code: its retry class and wire forms. */
export function specOf(code: ErrorCode): ErrorSpec {
  return REGISTRY[code];
}

/** What a caller does with an error of this code: retry, replan or stop. */
export function retryClassOf(code: ErrorCode): RetryClass {
  return REGISTRY[code].retry;
}

/** Read a code from a wire value; an unknown value becomes ``fallback``, never a crash. */
export function parseCode(value: unknown, fallback: ErrorCode = FALLBACK_CODE): ErrorCode {
  return isErrorCode(value) ? value : fallback;
}

/** The contract code of a JSON-RPC error code (ours, A2A's or JSON-RPC's), if it has one. */
export function codeForJsonRpc(code: number): ErrorCode | undefined {
  return JSONRPC_CODES.get(code) ?? FOREIGN_JSONRPC_CODES.get(code);
}

/** The contract code of an HTTP error status that came without a contract body. */
export function codeForHttpStatus(status: number): ErrorCode {
  return (
    HTTP_STATUS_CODES.get(status) ??
    HTTP_STATUS_CLASS_CODES.get(`${Math.floor(status / 100)}xx`) ??
    FALLBACK_CODE
  );
}
