// The tickets tool server: MCP over streamable HTTP (@modelcontextprotocol/sdk's server, one
// stateless transport per request), behind a credential gate that answers 401 naming its
// protected-resource metadata (TOOL-010). Settings (README.md): PORT, TICKETS_TRUST (a trust
// table file, JSON), TICKETS_DB, TICKETS_PUBLIC_URL.
import { fileURLToPath } from "node:url";
import express, { type NextFunction, type Request, type Response } from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { AccordError, bodyFailureAnswer, toHttpError, toMcpResult } from "@accord/contract";
import { type Principal, TokenVerifier, readTrustFile } from "@accord/contract/service-keys";
import { listed, loadContract } from "./contracts.js";
import { TicketStore } from "./store.js";
import { Tools } from "./tools.js";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required (tools/ts/tickets/README.md)`);
  return value;
}

const port = Number(process.env["PORT"] ?? "8713");
const base = process.env["TICKETS_PUBLIC_URL"] ?? `http://127.0.0.1:${port}`;
const ENDPOINT = "/mcp";
const METADATA = "/.well-known/oauth-protected-resource";
const contractsDir = fileURLToPath(new URL("../contracts/", import.meta.url));
const contracts = ["tickets.open", "tickets.get"].map((n) => loadContract(`${contractsDir}${n}.yaml`));
const tools = new Tools(contracts, new TicketStore(required("TICKETS_DB")));
const verifier = new TokenVerifier(readTrustFile(required("TICKETS_TRUST")));

/** One MCP server per request (stateless): it knows the verified caller of that request. */
function mcpServer(principal: Principal): Server {
  const server = new Server(
    { name: "tickets-ts", version: "0.1.0" }, { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: contracts.map((c) => listed(c.contract)),
  }) as never);
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    try {
      const { name, arguments: args, _meta: meta } = request.params;
      const structured = tools.call(name, args ?? {}, meta, principal);
      return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (caught) {
      const error = caught instanceof AccordError
        ? caught : new AccordError("INTERNAL", "the tool failed");
      if (!(caught instanceof AccordError)) console.error(caught);
      return toMcpResult(error) as never;
    }
  });
  return server;
}

const app = express();
app.get("/healthz", (_req, res) => { res.json({ status: "ok", service: "tickets-ts" }); });
// RFC 9728 metadata, public, at the endpoint's path and at the bare path.
const metadata = (_req: Request, res: Response): void => {
  res.json({
    resource: `${base}${ENDPOINT}`,
    authorization_servers: [base],
    scopes_supported: contracts.map((c) => c.contract.name),
    resource_name: "tickets-ts",
    bearer_methods_supported: ["header"],
  });
};
app.get(METADATA + ENDPOINT, metadata);
app.get(METADATA, metadata);

const principals = new WeakMap<Request, Principal>();
// Every MCP request carries a valid service token: else 401 naming the metadata (TOOL-010).
app.use(ENDPOINT, async (req: Request, res: Response, next: NextFunction) => {
  try {
    principals.set(req, await verifier.principal(req.header("authorization")));
    next();
  } catch (caught) {
    const error = caught instanceof AccordError ? caught : new AccordError("UNAUTHENTICATED");
    const [status, body] = toHttpError(error);
    res.status(status).set(
      "www-authenticate",
      `Bearer realm="accord", resource_metadata="${base}${METADATA}${ENDPOINT}"`,
    ).json(body);
  }
});
app.use(express.json({ limit: "1mb" }));
app.post(ENDPOINT, async (req: Request, res: Response) => {
  const principal = principals.get(req);
  if (principal === undefined) throw new AccordError("UNAUTHENTICATED");
  const server = mcpServer(principal);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    enableDnsRebindingProtection: true,
    allowedHosts: [`127.0.0.1:${port}`, `localhost:${port}`, new URL(base).host],
  });
  res.on("close", () => { void transport.close(); void server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
// Stateless: no session to resume or end (the MCP spec's answer is 405).
app.all(ENDPOINT, (_req, res) => { res.status(405).set("allow", "POST").end(); });
// A body that cannot be read is a typed answer (400 parse error, 413), never express's HTML.
app.use((failure: unknown, _req: Request, res: Response, next: NextFunction) => {
  if (res.headersSent) { next(failure); return; }
  const [status, body] = bodyFailureAnswer(failure);
  res.status(status).json(body);
});
app.listen(port, "127.0.0.1", () => { console.log(`tickets (ts) on ${base}${ENDPOINT}`); });
