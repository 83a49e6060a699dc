// Hand-written: what an Accord agent writes on the A2A wire beside the A2A state, and reading
// it back, exactly as Python's accord.protocol.a2a.wire does (docs/a2a-server.md, "Status
// metadata"). The `dev.accord/status` entry goes in the metadata of the TaskStatusUpdateEvent
// (an A2A server merges it into the Task's); a status has a message only when it says
// something to a person, and that message repeats the entry in its own metadata.

import { AccordError, type ErrorDict } from "./error.js";
import {
  type A2AState,
  type Status,
  isA2AState,
  type WaitingReason,
} from "./generated/status.js";
import {
  ERROR_DATA_KIND,
  STATUS_META_KEY,
  WAITING_REASON_KEY,
  WAITING_REASON_KEY_DEPRECATED,
} from "./generated/keys.js";
import { type JsonObject, type JsonValue, isJsonObject } from "./json.js";
import { type ContractStateOf, fromA2AState, toA2AState } from "./lifecycle.js";

/** The value under `dev.accord/status`: camelCase keys only (mesh contract 2.0). */
export interface StatusMeta {
  status: Status;
  waitingReason: WaitingReason | null;
  error: ErrorDict | null;
  node: string | null;
}

/** What qualifies a status on the wire: its error (a failure's, a decline's) and the node. */
export interface StatusSaid {
  readonly error?: AccordError;
  readonly node?: string;
}

/** A part of an A2A 1.0 message, as wire JSON. */
export type WirePart = JsonObject;

/** An agent's status message (A2A 1.0 wire JSON). */
export interface StatusMessage {
  messageId: string;
  contextId: string;
  taskId: string;
  role: "ROLE_AGENT";
  parts: WirePart[];
  metadata: { [STATUS_META_KEY]: StatusMeta };
}

/** A TaskStatus (wire JSON): the A2A state and, when it says something, a message. */
export interface WireTaskStatus {
  state: A2AState;
  message?: StatusMessage;
}

/** The value stored under `dev.accord/status` for a contract state. */
export function statusMeta(state: ContractStateOf, said: StatusSaid = {}): StatusMeta {
  return {
    status: state.status,
    waitingReason: state.waitingReason ?? null,
    error: said.error !== undefined ? said.error.toDict() : null,
    node: said.node ?? null,
  };
}

/** The metadata of a status update (and of its task) that carries its contract status. */
export function statusMetadata(
  state: ContractStateOf,
  said: StatusSaid = {},
): { [STATUS_META_KEY]: StatusMeta } {
  return { [STATUS_META_KEY]: statusMeta(state, said) };
}

/** The DataPart body that repeats a failed task's error (for clients that skip metadata). */
export function errorData(error: AccordError): JsonObject {
  return { kind: ERROR_DATA_KIND, ...error.toDict() };
}

/** A DataPart of JSON data (wire JSON). */
export function dataPart(data: JsonObject): WirePart {
  return { data, mediaType: "application/json" };
}

/** What a status message says, besides the state it reports. */
export interface StatusWords extends StatusSaid {
  readonly taskId: string;
  readonly contextId: string;
  /** The message's id: a fresh one per message (Python writes `uuid4().hex`). */
  readonly messageId: string;
  readonly text?: string;
  readonly data?: JsonObject;
  readonly parts?: readonly WirePart[];
}

/**
 * The agent message of a status update: `parts`, the text, the data, then the error DataPart
 * (which a failure always has); undefined when there is nothing to say (A2A 1.0 requires a
 * message to have a part, and a filler part would be shown as the agent's words).
 */
export function statusMessage(
  state: ContractStateOf,
  words: StatusWords,
): StatusMessage | undefined {
  const parts: WirePart[] = [...(words.parts ?? [])];
  if (words.text) parts.push({ text: words.text });
  if (words.data !== undefined) parts.push(dataPart(words.data));
  if (words.error !== undefined) parts.push(dataPart(errorData(words.error)));
  if (parts.length === 0) return undefined;
  return {
    messageId: words.messageId,
    contextId: words.contextId,
    taskId: words.taskId,
    role: "ROLE_AGENT",
    parts,
    metadata: statusMetadata(state, words),
  };
}

/** The TaskStatus of a contract state: its A2A state, and its message when it has one. */
export function taskStatus(state: ContractStateOf, words: StatusWords): WireTaskStatus {
  const message = statusMessage(state, words);
  const a2a = toA2AState(state);
  return message === undefined ? { state: a2a } : { state: a2a, message };
}

/** A TaskStatusUpdateEvent (wire JSON): the status, and the entry in its metadata. */
export function statusUpdate(
  state: ContractStateOf,
  words: StatusWords,
): {
  taskId: string;
  contextId: string;
  status: WireTaskStatus;
  metadata: { [STATUS_META_KEY]: StatusMeta };
} {
  return {
    taskId: words.taskId,
    contextId: words.contextId,
    status: taskStatus(state, words),
    metadata: statusMetadata(state, words),
  };
}

// -- reading -----------------------------------------------------------------------------

function entry(metadata: unknown): JsonObject | undefined {
  const found = isJsonObject(metadata) ? metadata[STATUS_META_KEY] : undefined;
  return isJsonObject(found) ? found : undefined;
}

/**
 * The `dev.accord/status` entry of a status: from `metadata` (the task's or the status
 * update's, where an agent of 0.3 writes it), else from its message's (agents of 0.1 and 0.2
 * wrote it there only).
 */
export function readStatusMeta(message: unknown, metadata?: unknown): JsonObject | undefined {
  return entry(metadata) ?? entry(isJsonObject(message) ? message["metadata"] : undefined);
}

/** The waiting reason an entry names (the snake_case key of contract 1.0 when it has no other). */
export function metaWaitingReason(meta: JsonObject): JsonValue | undefined {
  return meta[WAITING_REASON_KEY] ?? meta[WAITING_REASON_KEY_DEPRECATED];
}

/** The contract error of a status: metadata first, then its message's error DataPart. */
export function readError(message: unknown, metadata?: unknown): AccordError | undefined {
  const meta = readStatusMeta(message, metadata);
  if (meta !== undefined && isJsonObject(meta["error"])) return AccordError.fromDict(meta["error"]);
  const parts = isJsonObject(message) ? message["parts"] : undefined;
  for (const part of Array.isArray(parts) ? parts : []) {
    const data = isJsonObject(part) ? part["data"] : undefined;
    if (isJsonObject(data) && data["kind"] === ERROR_DATA_KIND) return AccordError.fromDict(data);
  }
  return undefined;
}

/**
 * The contract state of an A2A TaskStatus (wire JSON) with the metadata of its task or status
 * update, and its error when it failed (a decline too: TASK_STATE_REJECTED reads as failed and
 * declined). A peer that is not Accord gets the contract's defaults; an unknown A2A state
 * reads as failed with CONTRACT_VIOLATION; a failure without a readable error gets one of its
 * code.
 */
export function readContractState(
  status: unknown,
  metadata?: unknown,
): { state: ContractStateOf; error?: AccordError } {
  const s = isJsonObject(status) ? status : {};
  const raw = "state" in s ? s["state"] : "TASK_STATE_SUBMITTED";
  const message = isJsonObject(s["message"]) ? s["message"] : undefined;
  const meta = readStatusMeta(message, metadata) ?? {};
  let error = readError(message, metadata);
  const state: ContractStateOf =
    !isA2AState(raw)
      ? // TASK_STATE_UNSPECIFIED or a name a foreign peer made up, as Python reads it.
        { status: "failed", errorCode: "CONTRACT_VIOLATION" }
      : fromA2AState(raw, { waitingReason: metaWaitingReason(meta), errorCode: error?.code });
  // Only a status an error qualifies (failed) has a code: FROM_A2A gives it its default.
  if (state.errorCode === undefined) return { state };
  if (error === undefined || error.code !== state.errorCode) {
    error = new AccordError(state.errorCode);
  }
  return { state, error };
}

