// The orchestrator's public API from the browser: A2A 1.0 JSON-RPC (with SSE for streaming
// sends) and GET /approvals, with the signed-in user's bearer token. Nothing else is called.
import { token } from "./session.js";

const A2A_VERSION = "1.0"; // without this header the server speaks protocol 0.3
const STATUS_KEY = "dev.accord/status";
const CODE_KEY = "accordCode";
const base = document.body.dataset.orchestrator;
let nextId = 1;

export class ApiError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function headers(accept) {
  return {
    Authorization: `Bearer ${token()}`,
    "A2A-Version": A2A_VERSION,
    "Content-Type": "application/json",
    Accept: accept,
  };
}

// A contract error from any answer shape: JSON-RPC errors carry google.rpc.ErrorInfo in data
// (the contract code in metadata.accordCode, or as reason for domain accord.dev); HTTP errors
// are {"error": {"code": "PERMISSION_DENIED", "message": ...}}.
export function toError(error, status) {
  if (!error) return new ApiError("UNAVAILABLE", `HTTP ${status}`);
  if (typeof error.code === "string") return new ApiError(error.code, error.message || "");
  for (const info of Array.isArray(error.data) ? error.data : []) {
    const code = info?.metadata?.[CODE_KEY] || (info?.domain === "accord.dev" ? info.reason : null);
    if (code) return new ApiError(code, error.message || "");
  }
  return new ApiError(String(error.code ?? "INTERNAL"), error.message || "");
}

async function post(body, accept) {
  try {
    return await fetch(`${base}/`, { method: "POST", headers: headers(accept), body: JSON.stringify(body) });
  } catch (cause) {
    throw new ApiError("UNAVAILABLE", String(cause));
  }
}

export async function rpc(method, params) {
  const response = await post({ jsonrpc: "2.0", id: nextId++, method, params }, "application/json");
  const body = await response.json().catch(() => null);
  if (!body || body.error) throw toError(body?.error, response.status);
  return body.result;
}

// A streaming method over SSE: onResult(result) for every event, until the server ends it.
export async function stream(method, params, onResult) {
  const response = await post({ jsonrpc: "2.0", id: nextId++, method, params }, "text/event-stream");
  if (!(response.headers.get("content-type") || "").startsWith("text/event-stream")) {
    const body = await response.json().catch(() => null);
    throw toError(body?.error, response.status);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue; // a keep-alive comment
      const body = JSON.parse(data);
      if (body.error) throw toError(body.error, response.status);
      onResult(body.result);
    }
  }
}

export async function getJson(path) {
  let response;
  try {
    response = await fetch(`${base}${path}`, { headers: headers("application/json") });
  } catch (cause) {
    throw new ApiError("UNAVAILABLE", String(cause));
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) throw toError(body?.error, response.status);
  return body;
}

export function accordStatus(status) {
  return status?.message?.metadata?.[STATUS_KEY] || {};
}

export function textOf(parts) {
  return (parts || []).filter((p) => typeof p.text === "string").map((p) => p.text).join(" ");
}

// The skill's answer: the data part of the artifact named "result" (an Accord agent's; the
// orchestrator's "receipt" text artifact sits beside it), else of the last artifact with one.
export function resultOf(task) {
  const artifacts = [...(task?.artifacts || [])].reverse();
  const named = artifacts.filter((a) => a.name === "result");
  for (const artifact of [...named, ...artifacts]) {
    const part = (artifact.parts || []).find((p) => p.data && typeof p.data === "object");
    if (part) return part.data;
  }
  return null;
}

export const TERMINAL = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);
