// Answers the Python test's questions with the compiled @accord/contract (its dist directory is
// argv[2]; the questions are JSON on stdin) and prints every answer as one JSON document, which
// tests/contracts/test_ts_contract.py compares with the Python contract's own answers. With
// argv[3] = "helpers" it answers with the hand-written wire helpers instead (status metadata,
// error forms, envelope), compared with what Accord's Python server writes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dist = process.argv[2];
const load = (name) => import(pathToFileURL(join(dist, name)).href);
const c = await load("index.js");
const keys = await load("generated/keys.js");
const schemas = await load("generated/schemas.js");
const ask = JSON.parse(readFileSync(0, "utf8"));

const statuses = {};
for (const s of c.STATUS_VALUES) {
  statuses[s] = {
    terminal: c.isTerminal(s),
    transitions: c.STATUS_VALUES.filter((t) => c.canTransition(s, t)).sort(),
  };
}
const codes = {};
for (const code of c.ERROR_CODE_VALUES) {
  codes[code] = { ...c.specOf(code), retry_class: c.retryClassOf(code), parsed: c.parseCode(code) };
}
const state = (s) => ({
  status: s.status,
  ...(s.waiting_reason != null ? { waitingReason: s.waiting_reason } : {}),
  ...(s.error_code != null ? { errorCode: s.error_code } : {}),
  ...(s.declined ? { declined: true } : {}),
});
const snake = (s) => ({
  status: s.status,
  waiting_reason: s.waitingReason ?? null,
  error_code: s.errorCode ?? null,
  declined: s.declined ?? false,
});
const stringConstants = Object.fromEntries(
  Object.entries(keys).filter(([, v]) => typeof v === "string"),
);
const schemaConstants = Object.fromEntries(
  Object.entries(schemas).filter(([k]) => k.endsWith("_SCHEMA")),
);

const answers = process.argv[3] === "helpers" ? () => helpers(ask) : () => ({
    statuses,
    waiting_reasons: [...c.WAITING_REASON_VALUES],
    a2a_states: [...c.A2A_STATE_VALUES],
    retry_classes: [...c.RETRY_CLASS_VALUES],
    codes,
    error_domains: [c.ERROR_DOMAIN, c.A2A_ERROR_DOMAIN],
    a2a_reasons: Object.fromEntries(c.A2A_REASONS),
    to_a2a: ask.to_a2a.map((s) => c.toA2AState(state(s))),
    from_a2a: ask.from_a2a.map(([a2a, reason, code]) =>
      snake(c.fromA2AState(a2a, { waitingReason: reason, errorCode: code })),
    ),
    parse: ask.parse.map((v) => c.parseCode(v)),
    jsonrpc: ask.jsonrpc.map((n) => c.codeForJsonRpc(n) ?? null),
    http: ask.http.map((n) => c.codeForHttpStatus(n)),
    keys: stringConstants,
    schemas: schemaConstants,
  });
console.log(JSON.stringify(answers()));

// The helpers' answers; a thrown AccordError is answered as {error: its dict}.
function helpers(ask) {
  const attempt = (f) => {
    try {
      return f();
    } catch (e) {
      if (e instanceof c.AccordError) return { error: e.toDict() };
      throw e;
    }
  };
  const status = ask.status.map((k) => {
    const st = state(k.state);
    const said = {
      ...(k.error ? { error: c.AccordError.fromDict(k.error) } : {}),
      ...(k.node !== null ? { node: k.node } : {}),
    };
    const words = {
      ...said,
      taskId: "t-1",
      contextId: "c-1",
      messageId: "m-1",
      text: k.text,
      ...(k.data !== null ? { data: k.data } : {}),
    };
    const metadata = c.statusMetadata(st, said);
    const message = c.statusMessage(st, words) ?? null;
    const taskStatus = c.taskStatus(st, words);
    const read = [c.readContractState(taskStatus, metadata), c.readContractState(taskStatus)];
    return {
      metadata,
      message,
      read: read.map((r) => [snake(r.state), r.error ? r.error.toDict() : null]),
    };
  });
  const errors = ask.errors.map((d) => {
    const e = c.AccordError.fromDict(d);
    return {
      dict: e.toDict(),
      jsonrpc: c.toJsonRpcError(e),
      mcp: c.toMcpResult(e),
      mcp_read: c.fromMcpResult(c.toMcpResult(e)).toDict(),
      info_parse_failure: c.errorInfo(e, -32700),
      rest: c.toRestError(e),
      http: c.toHttpError(e),
    };
  });
  const envelopes = ask.envelopes.map((m) =>
    attempt(() => c.envelopeMetadata(c.parseEnvelope(m))),
  );
  const badDates = ask.bad_dates.map((m) => attempt(() => c.envelopeMetadata(c.parseEnvelope(m))));
  const incoming = c.parseEnvelope(ask.child_of);
  const goal = "check risk";
  return {
    status,
    errors,
    mcp_foreign: ask.mcp_foreign.map((r) => c.fromMcpResult(r).toDict()),
    envelopes,
    bad_dates: badDates,
    envelope_optional: c.parseEnvelope({}, { required: false }) ?? null,
    child: c.envelopeMetadata(
      c.childEnvelope(incoming, { goal, spent: { units: 10, toolCalls: 2 }, parentTask: "task-9" }),
    ),
    child_overspent: attempt(() => c.childEnvelope(incoming, { goal, spent: { units: 41 } })).error,
    tool_meta: ask.tool_meta.map((k) => c.toolCallMeta(k.delegation, k.traceparent)),
    admit: ask.admit.map((k) =>
      attempt(() => {
        const got = c.admitTurn(c.parseEnvelope({ [c.DELEGATION_EXTENSION_URI]: k.envelope }), k);
        return { ...got, remainingMs: Math.round(got.remainingMs) };
      }),
    ),
  };
}
