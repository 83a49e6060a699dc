// Answers the Python test's questions with the compiled @accord/contract (its dist directory is
// argv[2]; the questions are JSON on stdin) and prints every answer as one JSON document, which
// tests/contracts/test_ts_contract.py compares with the Python contract's own answers.
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

console.log(
  JSON.stringify({
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
  }),
);
