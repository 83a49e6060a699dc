// risk-check in TypeScript: the card, the skill schema document, token checks, and the
// JSON-RPC binding of @a2a-js/sdk. Settings (README.md): PORT, RISK_CONTRACT (the contract
// file `make ts-member` writes), RISK_TRUST, COMMERCE_URL, RISK_KEY_FILE.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import express, { type NextFunction, type Request, type Response } from "express";
import { AgentCard } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore, type RequestContext } from "@a2a-js/sdk/server";
import { jsonRpcHandler } from "@a2a-js/sdk/server/express";
import { AccordError, bodyFailureAnswer, toJsonRpcError } from "@accord/contract";
import {
  JWKS_PATH, type Principal, ServiceCredential, ServiceKey, TokenVerifier, trustTable,
} from "@accord/contract/service-keys";
import { buildCard } from "./card.js";
import { RiskExecutor } from "./executor.js";
import { Gate } from "./gate.js";
import { Commerce } from "./tools.js";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required (agents/ts/risk-check/README.md)`);
  return value;
}

const port = Number(process.env["PORT"] ?? "8712");
const base = process.env["RISK_PUBLIC_URL"] ?? `http://127.0.0.1:${port}`;
const exported = JSON.parse(readFileSync(required("RISK_CONTRACT"), "utf8"));
const schemaBody = JSON.stringify(exported.schemas);
const schemaTag = createHash("sha256").update(schemaBody).digest("hex");
const card = buildCard(exported.contract, base, schemaTag);
const verifier = new TokenVerifier(trustTable(required("RISK_TRUST")));
// Its own key (made on first start), its public half at /.well-known/jwks.json: commerce trusts
// `svc:risk` by that key set, so no other service can sign for it (docs/service-keys.md).
const key = await ServiceKey.load("risk", required("RISK_KEY_FILE"));
const TOOL_GRANTS = ["orders.customer_history", "orders.lookup"];
const commerce = new Commerce(
  new URL(required("COMMERCE_URL")), new ServiceCredential(key, TOOL_GRANTS),
);
const threshold = Number(process.env["ACCORD_APPROVAL_THRESHOLD_CENTS"] ?? "50000");

class Caller {
  constructor(readonly principal: Principal) {}
  get isAuthenticated(): boolean { return true; }
  get userName(): string { return this.principal.subject; }
}
const principalOf = (ctx: RequestContext): Principal | undefined =>
  ctx.context.user instanceof Caller ? ctx.context.user.principal : undefined;

const callers = new WeakMap<Request, Principal>();
const declared = exported.schemas.skills["refund.risk"]?.envelope?.constraints ?? {};
// The grant a service must hold to ask for the skill: its contract's access rule says it.
const SKILL_GRANT: string = exported.contract.skills
  .find((skill: { id: string }) => skill.id === "refund.risk")
  ?.access.allow.find((rule: { role: string }) => rule.role === "service")?.scope;
if (!SKILL_GRANT) throw new Error("risk-check's contract grants refund.risk to no service");
const gate = new Gate(
  (req) => callers.get(req), SKILL_GRANT, new Set(Object.keys(declared)),
);
const handler = new DefaultRequestHandler(
  AgentCard.fromJSON(card), new InMemoryTaskStore(),
  new RiskExecutor(
    commerce, threshold, principalOf, exported.contract.version,
    (caller, messageId, taskId) => { gate.made(caller, messageId, taskId); },
  ),
);
const app = express();
app.get("/.well-known/agent-card.json", (_req, res) => { res.json(card); });
app.get("/accord/skill-schemas.json", (_req, res) => {
  res.set({ "cache-control": "public, max-age=60", etag: `"${schemaTag}"` });
  res.type("application/json").send(schemaBody);
});
app.get("/healthz", (_req, res) => { res.json({ status: "ok" }); });
app.get(JWKS_PATH, (_req, res) => {
  res.set({ "cache-control": "public, max-age=30" }).json(key.jwks());
});

// Every A2A call carries a valid bearer token: else 401 with a challenge (AGENT-003).
app.use(async (req: Request, res: Response, next: NextFunction) => {
  try {
    callers.set(req, await verifier.principal(req.header("authorization")));
    next();
  } catch (caught) {
    const error = caught instanceof AccordError ? caught : new AccordError("UNAUTHENTICATED");
    res.status(401).set("www-authenticate", 'Bearer realm="accord"')
      .json({ jsonrpc: "2.0", id: null, error: toJsonRpcError(error) });
  }
});
app.use(express.json({ limit: "1mb" }));
app.use(gate.handle);
app.use(jsonRpcHandler({
  requestHandler: handler,
  userBuilder: async (req) => {
    const principal = callers.get(req);
    if (principal === undefined) throw new AccordError("UNAUTHENTICATED");
    return new Caller(principal);
  },
}));
// A body that cannot be read is a typed answer (400 parse error, 413), never express's HTML.
app.use((failure: unknown, _req: Request, res: Response, next: NextFunction) => {
  if (res.headersSent) { next(failure); return; }
  const [status, body] = bodyFailureAnswer(failure);
  res.status(status).json(body);
});
app.listen(port, "127.0.0.1", () => { console.log(`risk-check (ts) on ${base}`); });
