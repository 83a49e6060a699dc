// Hand-written: reading, checking and writing the delegation envelope, as Python's
// accord.contracts.envelope (parse_envelope, to_metadata) and the budget guard
// (accord.protocol.a2a.budget_guard) do. The schema (ENVELOPE_SCHEMA) says the shape; this
// file checks it with the rule names Python's errors carry and adds what a schema cannot say:
// the size limit, a deadline with a time zone, the budget left for a turn, the deadline passed.
//
// One difference, on purpose: Python's pydantic coerces lax values ("3" or true for a number);
// this reads JSON as the schema types it, so such an envelope is refused here.

import { AccordError } from "./error.js";
import {
  DELEGATION_EXTENSION_URI, TOOL_DELEGATION_META_KEY, TRACEPARENT_KEY,
} from "./generated/keys.js";
import {
  ENVELOPE_SCHEMA, type DelegationEnvelope, type ToolDelegation,
} from "./generated/schemas.js";
import { type JsonObject, type JsonValue, isJsonObject, pythonJsonDumps } from "./json.js";

/** An envelope over this many bytes of JSON is refused (ENV-003). */
export const MAX_ENVELOPE_BYTES = 16 * 1024;

const DEFS = ENVELOPE_SCHEMA.$defs;
const PROPS = ENVELOPE_SCHEMA.properties;

/** Where an envelope broke which rule (the field dotted, the rule as pydantic names it). */
class Broken {
  constructor(
    readonly field: string,
    readonly rule: string,
    readonly message: string,
  ) {}
}

/**
 * Read and check the envelope in A2A message metadata; undefined when absent and not
 * `required`. Throws INVALID_INPUT as Python does: missing (ENV-001), oversized (ENV-003),
 * malformed (ENV-002, details {field, rule, requirement}). The envelope returned is the one
 * Python's model holds: defaults filled in, the deadline written as Python writes it.
 */
export function parseEnvelope(
  metadata: unknown,
  options: { readonly required?: boolean } = {},
): DelegationEnvelope | undefined {
  const raw = isJsonObject(metadata) ? metadata[DELEGATION_EXTENSION_URI] : undefined;
  if (raw === undefined || raw === null) {
    if (options.required ?? true) {
      throw new AccordError(
        "INVALID_INPUT",
        `delegation envelope missing from message metadata['${DELEGATION_EXTENSION_URI}']`,
        { field: "metadata", requirement: "ENV-001" },
      );
    }
    return undefined;
  }
  const size = utf8Length(pythonJsonDumps(raw));
  if (size > MAX_ENVELOPE_BYTES) {
    throw new AccordError(
      "INVALID_INPUT",
      `delegation envelope is ${size} bytes; the limit is ${MAX_ENVELOPE_BYTES}`,
      { field: "envelope", limit: MAX_ENVELOPE_BYTES, requirement: "ENV-003" },
    );
  }
  try {
    return readEnvelope(raw);
  } catch (exc) {
    if (!(exc instanceof Broken)) throw exc;
    throw new AccordError(
      "INVALID_INPUT",
      `delegation envelope field '${exc.field}': ${exc.message}`,
      { field: exc.field, rule: exc.rule, requirement: "ENV-002" },
    );
  }
}

/** The message metadata entry of an envelope: {extension URI: envelope, nulls left out}. */
export function envelopeMetadata(envelope: DelegationEnvelope): {
  [DELEGATION_EXTENSION_URI]: DelegationEnvelope;
} {
  const out: DelegationEnvelope = {
    goal: envelope.goal,
    constraints: { ...(envelope.constraints ?? {}) },
    budget: { ...envelope.budget },
    context_refs: [...(envelope.context_refs ?? [])],
    tenant: { ...envelope.tenant },
  };
  if (envelope.parent_task != null) out.parent_task = envelope.parent_task;
  if (envelope.traceparent != null) out.traceparent = envelope.traceparent;
  return { [DELEGATION_EXTENSION_URI]: out };
}

/** What a caller spent of its envelope before it delegates. */
export interface Spent {
  readonly units?: number;
  readonly toolCalls?: number;
}

/**
 * The envelope of an outgoing call made on behalf of `incoming`: the same tenant, trace and
 * deadline, the budget less what this agent `spent` (BUDGET_EXHAUSTED when it spent more than
 * it had), this task as parent. Goal, constraints and context refs are the child's own:
 * a child gets only what the skill's contract forwards to it (ENV-008), none by default.
 */
export function childEnvelope(
  incoming: DelegationEnvelope,
  child: {
    readonly goal: string;
    readonly spent?: Spent;
    readonly parentTask?: string;
    readonly constraints?: Readonly<Record<string, string | number | boolean>>;
    readonly contextRefs?: readonly string[];
  },
): DelegationEnvelope {
  const units = incoming.budget.units - (child.spent?.units ?? 0);
  const toolCalls = incoming.budget.tool_calls - (child.spent?.toolCalls ?? 0);
  if (units < 0 || toolCalls < 0) {
    throw new AccordError(
      "BUDGET_EXHAUSTED",
      `spent more than the envelope holds (${units} units, ${toolCalls} tool calls left)`,
      { units: incoming.budget.units, tool_calls: incoming.budget.tool_calls },
    );
  }
  const out: DelegationEnvelope = {
    goal: child.goal,
    constraints: { ...(child.constraints ?? {}) },
    budget: { units, tool_calls: toolCalls, deadline: incoming.budget.deadline },
    context_refs: [...(child.contextRefs ?? [])],
    tenant: { ...incoming.tenant },
  };
  if (child.parentTask !== undefined) out.parent_task = child.parentTask;
  if (incoming.traceparent != null) out.traceparent = incoming.traceparent;
  return readEnvelope(out as unknown as JsonValue); // the child's envelope obeys the schema too
}

/** What the budget grants a turn: the time it may take, the totals spent once it runs. */
export interface Allowance {
  readonly remainingMs: number;
  readonly spent: number;
  readonly toolCallsSpent: number;
}

/**
 * Whether the envelope leaves room for one more turn after `spent` units and
 * `toolCallsSpent` tool calls of earlier turns (BudgetGuard.admit): BUDGET_EXHAUSTED (ENV-004)
 * or RETRYABLE_TIMEOUT when the deadline has passed (ENV-005), with Python's words.
 */
export function admitTurn(
  envelope: DelegationEnvelope,
  turn: {
    readonly spent?: number;
    readonly toolCallsSpent?: number;
    readonly unitsPerTurn?: number;
    readonly toolCallsPerTurn?: number;
    /** Milliseconds since the epoch; now by default. */
    readonly now?: number;
  } = {},
): Allowance {
  const budget = envelope.budget;
  const spent = turn.spent ?? 0;
  const toolCallsSpent = turn.toolCallsSpent ?? 0;
  const perTurn = turn.unitsPerTurn ?? 1;
  const toolCallsPerTurn = turn.toolCallsPerTurn ?? 0;
  if (budget.units - spent < perTurn) {
    throw new AccordError(
      "BUDGET_EXHAUSTED",
      `budget has ${budget.units - spent} units left; a turn costs ${perTurn}`,
      { units: budget.units, spent, per_turn: perTurn },
    );
  }
  if (budget.tool_calls - toolCallsSpent < toolCallsPerTurn) {
    throw new AccordError(
      "BUDGET_EXHAUSTED",
      `budget has ${budget.tool_calls - toolCallsSpent} tool calls left; a turn ` +
        `needs ${toolCallsPerTurn}`,
      { tool_calls: budget.tool_calls, tool_calls_spent: toolCallsSpent },
    );
  }
  const deadline = readDeadline(budget.deadline);
  const remainingMs = deadline.epochMs - (turn.now ?? Date.now());
  if (remainingMs <= 0) {
    throw new AccordError("RETRYABLE_TIMEOUT", "the delegation deadline has already passed", {
      deadline: deadline.isoformat,
    });
  }
  return {
    remainingMs,
    spent: spent + perTurn,
    toolCallsSpent: toolCallsSpent + toolCallsPerTurn,
  };
}

// -- checking ------------------------------------------------------------------------------

function readEnvelope(raw: JsonValue): DelegationEnvelope {
  const o = object(raw, "envelope", ENVELOPE_SCHEMA.title);
  const goal = str(o, "goal", "", PROPS.goal);
  const constraints = readConstraints(o["constraints"]);
  const budget = readBudget(o["budget"]);
  const contextRefs = readContextRefs(o["context_refs"]);
  const tenant = readTenant(o["tenant"]);
  const parent = nullable(o, "parent_task", PROPS.parent_task.anyOf[0]);
  const trace = nullable(o, "traceparent", PROPS.traceparent.anyOf[0]);
  noExtra(o, Object.keys(PROPS), "");
  const out: DelegationEnvelope = {
    goal,
    constraints,
    budget,
    context_refs: contextRefs,
    tenant,
  };
  if (parent !== null) out.parent_task = parent;
  if (trace !== null) out.traceparent = trace;
  return out;
}

type StringRule = {
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
};

/** An object: a model (`model` names it, as pydantic's message does) or a plain dict. */
function object(value: JsonValue | undefined, field: string, model?: string): JsonObject {
  if (value === undefined) throw new Broken(field, "missing", "Field required");
  if (!isJsonObject(value)) {
    const [rule, what] =
      model === undefined ? ["dict_type", ""] : ["model_type", ` or instance of ${model}`];
    throw new Broken(field, rule, `Input should be a valid dictionary${what}`);
  }
  return value;
}

function str(o: JsonObject, key: string, prefix: string, rule: StringRule): string {
  const field = prefix + key;
  const value = o[key];
  if (value === undefined) throw new Broken(field, "missing", "Field required");
  return checkString(value, field, rule);
}

function checkString(value: JsonValue, field: string, rule: StringRule): string {
  if (typeof value !== "string") {
    throw new Broken(field, "string_type", "Input should be a valid string");
  }
  const length = [...value].length; // code points, as Python counts
  if (rule.minLength !== undefined && length < rule.minLength) {
    const words = `String should have at least ${rule.minLength} character`;
    throw new Broken(field, "string_too_short", words);
  }
  if (rule.maxLength !== undefined && length > rule.maxLength) {
    const words = `String should have at most ${rule.maxLength} characters`;
    throw new Broken(field, "string_too_long", words);
  }
  if (rule.pattern !== undefined && !new RegExp(rule.pattern, "u").test(value)) {
    const words = `String should match pattern '${rule.pattern}'`;
    throw new Broken(field, "string_pattern_mismatch", words);
  }
  return value;
}

function nullable(o: JsonObject, key: string, rule: StringRule): string | null {
  const value = o[key];
  return value === undefined || value === null ? null : checkString(value, key, rule);
}

function int(
  o: JsonObject,
  key: string,
  prefix: string,
  rule: { readonly minimum: number; readonly maximum: number },
): number {
  const field = prefix + key;
  const value = o[key];
  if (value === undefined) throw new Broken(field, "missing", "Field required");
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new Broken(field, "int_type", "Input should be a valid integer");
  }
  if (value < rule.minimum) {
    const words = `Input should be greater than or equal to ${rule.minimum}`;
    throw new Broken(field, "greater_than_equal", words);
  }
  if (value > rule.maximum) {
    const words = `Input should be less than or equal to ${rule.maximum}`;
    throw new Broken(field, "less_than_equal", words);
  }
  return value;
}

function noExtra(o: JsonObject, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(o)) {
    if (!known.includes(key)) {
      throw new Broken(prefix + key, "extra_forbidden", "Extra inputs are not permitted");
    }
  }
}

function readConstraints(value: JsonValue | undefined): Record<string, string | number | boolean> {
  if (value === undefined) return {};
  const o = object(value, "constraints");
  const out: Record<string, string | number | boolean> = {};
  for (const [key, item] of Object.entries(o)) {
    const ok =
      typeof item === "string" ||
      typeof item === "boolean" ||
      (typeof item === "number" && Number.isInteger(item));
    // Python tries str, int, bool in turn and reports the first: `constraints.KEY.str`.
    if (!ok) {
      throw new Broken(`constraints.${key}.str`, "string_type", "Input should be a valid string");
    }
    out[key] = item;
  }
  // Counted after the items are read, as pydantic does (so a bad item is named first).
  const max = PROPS.constraints.maxProperties;
  if (Object.keys(out).length > max) {
    const words = `Dictionary should have at most ${max} items after validation, not more`;
    throw new Broken("constraints", "too_long", words);
  }
  return out;
}

function readContextRefs(value: JsonValue | undefined): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new Broken("context_refs", "list_type", "Input should be a valid list");
  }
  const rule = PROPS.context_refs.items;
  const refs = value.map((item, i) => checkString(item, `context_refs.${i}`, rule));
  const max = PROPS.context_refs.maxItems; // counted after the items, as for constraints
  if (refs.length > max) {
    const words = `List should have at most ${max} items after validation, not ${refs.length}`;
    throw new Broken("context_refs", "too_long", words);
  }
  return refs;
}

function readBudget(value: JsonValue | undefined): DelegationEnvelope["budget"] {
  const o = object(value, "budget", DEFS.Budget.title);
  const p = DEFS.Budget.properties;
  const units = int(o, "units", "budget.", p.units);
  const toolCalls = int(o, "tool_calls", "budget.", p.tool_calls);
  const raw = o["deadline"];
  if (raw === undefined) throw new Broken("budget.deadline", "missing", "Field required");
  const deadline = readDeadline(raw).pydantic;
  noExtra(o, Object.keys(p), "budget.");
  return { units, tool_calls: toolCalls, deadline };
}

function readTenant(value: JsonValue | undefined): DelegationEnvelope["tenant"] {
  const o = object(value, "tenant", DEFS.Tenant.title);
  const p = DEFS.Tenant.properties;
  const tenant = {
    app: str(o, "app", "tenant.", p.app),
    user: str(o, "user", "tenant.", p.user),
    session: str(o, "session", "tenant.", p.session),
  };
  noExtra(o, Object.keys(p), "tenant.");
  return tenant;
}

// RFC 3339 as pydantic reads it: a date, "T" or a space, hours and minutes, optional seconds
// and fraction, and a zone (required: AwareDatetime).
const DATE_TIME = new RegExp(
  String.raw`^(\d{4})-(\d{2})-(\d{2})[T t](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?` +
    String.raw`(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$`,
);

interface Deadline {
  readonly epochMs: number;
  /** As Python's model writes it (`...Z` for UTC, microseconds only when not zero). */
  readonly pydantic: string;
  /** As Python's `datetime.isoformat()` writes it (`+00:00` for UTC). */
  readonly isoformat: string;
}

function readDeadline(value: JsonValue): Deadline {
  const field = "budget.deadline";
  if (typeof value !== "string") {
    throw new Broken(field, "datetime_type", "Input should be a valid datetime");
  }
  const m = DATE_TIME.exec(value);
  if (m === null) {
    throw new Broken(field, "datetime_from_date_parsing", "Input should be a valid datetime");
  }
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  if (z === undefined && sign === undefined) {
    throw new Broken(field, "timezone_aware", "Input should have timezone info");
  }
  const micro = (frac ?? "").slice(0, 6).padEnd(6, "0");
  const offsetMin =
    sign === undefined ? 0 : (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const [year, month, day, hour, minute] = [y, mo, d, h, mi].map(Number) as [
    number, number, number, number, number,
  ];
  const local = Date.UTC(year, month - 1, day, hour, minute, Number(s ?? 0));
  const check = new Date(local);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || minute > 59) {
    throw new Broken(field, "datetime_from_date_parsing", "Input should be a valid datetime");
  }
  const base = `${y}-${mo}-${d}T${h}:${mi}:${s ?? "00"}${micro === "000000" ? "" : `.${micro}`}`;
  const zone = offsetMin === 0 ? "+00:00" : `${sign ?? "+"}${oh}:${om}`;
  return {
    epochMs: local - offsetMin * 60_000 + Number(micro) / 1000,
    pydantic: base + (offsetMin === 0 ? "Z" : zone),
    isoformat: base + zone,
  };
}

function utf8Length(text: string): number {
  let n = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/**
 * A tool call's `params._meta`, as Accord's Python client writes it: the delegation (the
 * generated `ToolDelegation`: the tenant the call acts for, whose user is the customer, and for
 * a write a person approved, `approved_by`; set by the runtime from verified facts, never from
 * a model's words) under `dev.accord/delegation` (TOOL-012), and the caller's W3C trace context
 * under `traceparent` (SEP-414), so the tool's span joins the request's trace.
 */
export function toolCallMeta(delegation: ToolDelegation, traceparent?: string | null): JsonObject {
  const tenant: JsonObject = { app: delegation.tenant.app, user: delegation.tenant.user };
  if (delegation.tenant.session != null) tenant["session"] = delegation.tenant.session;
  const acting: JsonObject = { tenant };
  if (delegation.approved_by != null) acting["approved_by"] = delegation.approved_by;
  const meta: JsonObject = { [TOOL_DELEGATION_META_KEY]: acting };
  if (traceparent != null) meta[TRACEPARENT_KEY] = traceparent;
  return meta;
}
