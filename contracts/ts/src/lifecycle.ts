// Hand-written: the lifecycle's rules over the generated tables (src/generated/status.ts).
// Every status, transition and mapping is data there; nothing here names a status.

import { type ErrorCode, isErrorCode } from "./generated/errors.js";
import {
  type A2AState,
  FROM_A2A,
  type Status,
  TERMINAL_STATUSES,
  TO_A2A,
  TRANSITIONS,
  type WaitingReason,
  isWaitingReason,
} from "./generated/status.js";

/** A contract status with what qualifies it: why it waits, or the code of why it ended. */
export interface ContractStateOf {
  readonly status: Status;
  readonly waitingReason?: WaitingReason;
  readonly errorCode?: ErrorCode;
  /** A failure that is the agent saying no (A2A REJECTED on the wire). */
  readonly declined?: boolean;
}

/** True for a status a task never leaves. */
export function isTerminal(status: Status): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** True when the lifecycle lets a task go from ``current`` to ``target`` (STATUS-003). */
export function canTransition(current: Status, target: Status): boolean {
  return TRANSITIONS[current].includes(target);
}

/** The A2A TaskState that reports a contract state: the first row of TO_A2A that fits it. */
export function toA2AState(state: ContractStateOf): A2AState {
  for (const row of TO_A2A) {
    if (row.status !== state.status) continue;
    if ((row.declined ?? false) !== (state.declined ?? false)) continue;
    if (row.waiting_reason !== undefined && row.waiting_reason !== state.waitingReason) continue;
    if (row.error_code !== undefined && row.error_code !== "*") {
      if (row.error_code !== state.errorCode) continue;
    }
    return row.a2a;
  }
  throw new RangeError(`no A2A state reports status ${state.status}`);
}

/**
 * Read a peer's A2A TaskState (with what its status metadata says, when it is an Accord agent)
 * as a contract state. A qualifier the state cannot carry, or an unknown one, reads as the
 * state's default, never as a crash.
 */
export function fromA2AState(
  a2a: A2AState,
  said: { readonly waitingReason?: unknown; readonly errorCode?: unknown } = {},
): ContractStateOf {
  const row = FROM_A2A[a2a];
  const state: {
    status: Status;
    waitingReason?: WaitingReason;
    errorCode?: ErrorCode;
    declined?: boolean;
  } = { status: row.status };
  if (row.declined === true) state.declined = true;
  if (row.default_waiting_reason !== undefined) {
    const reason = said.waitingReason;
    state.waitingReason =
      isWaitingReason(reason) && (row.kept_waiting_reasons ?? []).includes(reason)
        ? reason
        : row.default_waiting_reason;
  }
  if (row.default_error_code !== undefined) {
    const code = said.errorCode;
    state.errorCode =
      isErrorCode(code) && (row.kept_error_codes ?? []).includes(code)
        ? code
        : row.default_error_code;
  }
  return state;
}
