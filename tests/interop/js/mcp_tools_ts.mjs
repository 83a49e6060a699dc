// Interop: the official TypeScript MCP SDK (v1) lists and calls every Accord tool.
//
//   ACCORD_TOKEN=<service token> node mcp_tools_ts.mjs COMMERCE_MCP_URL PAYMENTS_MCP_URL
//
// Tool servers need a credential: ACCORD_TOKEN is sent as a bearer token, and each call names
// the customer it is made for in _meta["dev.accord/delegation"] (a service acting for them).
//
// The TS client validates structuredContent against each tool's outputSchema itself, so a
// success here also proves the Python server's outputs fit the schemas it advertises. Errors
// must arrive as isError with the contract code in _meta["dev.accord/error"] and nothing in
// structuredContent. Prints one JSON summary line; exits non-zero on the first mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const META_KEY = "dev.accord/error";
const DELEGATION_KEY = "dev.accord/delegation";
const TOKEN = process.env.ACCORD_TOKEN;
const [commerceUrl, paymentsUrl] = process.argv.slice(2);
const summary = { tools: [], calls: 0 };

function check(condition, message) {
  if (!condition) {
    console.error(`FAIL: ${message}`);
    process.exit(1);
  }
}

async function connect(url) {
  const client = new Client({ name: "accord-interop-ts", version: "1.0.0" });
  const requestInit = { headers: { Authorization: `Bearer ${TOKEN}` } };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  return client;
}

function acting(args) {
  const user = typeof args.customer_id === "string" ? args.customer_id : "C-01";
  return { [DELEGATION_KEY]: { tenant: { app: "accord", user, session: "interop-ts" } } };
}

async function ok(client, name, args) {
  const result = await client.callTool({ name, arguments: args, _meta: acting(args) });
  summary.calls += 1;
  check(!result.isError, `${name} failed: ${JSON.stringify(result)}`);
  check(typeof result.structuredContent === "object", `${name} has no structuredContent`);
  const text = JSON.parse(result.content[0].text);
  check(JSON.stringify(text) === JSON.stringify(result.structuredContent),
    `${name}: text block and structuredContent differ`);
  return result.structuredContent;
}

async function fails(client, name, args, code) {
  const result = await client.callTool({ name, arguments: args, _meta: acting(args) });
  summary.calls += 1;
  check(result.isError === true, `${name} should fail with ${code}`);
  check(result.structuredContent === undefined, `${name}: error in structuredContent`);
  const error = result._meta?.[META_KEY];
  check(error?.code === code, `${name}: expected ${code}, got ${JSON.stringify(result._meta)}`);
  check(typeof error.retry === "string", `${name}: error has no retry class`);
  return error;
}

const commerce = await connect(commerceUrl);
const commerceTools = (await commerce.listTools()).tools;
for (const tool of commerceTools) {
  check(tool.inputSchema?.type === "object" && tool.outputSchema?.type === "object",
    `${tool.name} lacks schemas`);
  check(tool.annotations?.readOnlyHint === true, `${tool.name} should be read-only`);
  summary.tools.push(tool.name);
}
const order = await ok(commerce, "orders.lookup", { order_id: "O-1001", customer_id: "C-01" });
check(order.total_cents === 5999, "O-1001 total");
const history = await ok(commerce, "customers.history", { customer_id: "C-04" });
// The seeded five at least: the ledger is shared with the payments tests of the same session.
check(history.refunds_90d >= 5, "C-04 refunds");
const ofOrder = await ok(commerce, "orders.customer_history", { order_id: "O-1006", customer_id: "C-04" });
check(ofOrder.order_id === "O-1006" && ofOrder.refunds_90d === history.refunds_90d, "C-04 history of O-1006");
await fails(commerce, "orders.customer_history", { order_id: "O-1001", customer_id: "C-04" }, "NOT_FOUND");
await fails(commerce, "orders.lookup", { order_id: "O-1004", customer_id: "C-01" }, "NOT_FOUND");
await fails(commerce, "orders.lookup", { order_id: 7 }, "INVALID_INPUT");
await commerce.close();

const payments = await connect(paymentsUrl);
const paymentTools = (await payments.listTools()).tools;
const issue = paymentTools.find((t) => t.name === "refunds.issue");
check(issue?.annotations?.destructiveHint === true, "refunds.issue should be destructive");
check(issue?.annotations?.idempotentHint === true, "refunds.issue should be idempotent");
summary.tools.push(...paymentTools.map((t) => t.name));
const key = `ts:${Date.now()}:${Math.random().toString(16).slice(2)}`;
const args = { idempotency_key: key, order_id: "O-9001", customer_id: "C-90",
  amount_cents: 25, reason: "interop" };
const first = await ok(payments, "refunds.issue", args);
const again = await ok(payments, "refunds.issue", args);
check(first.replayed === false && again.replayed === true, "replay flags");
check(first.receipt.receipt_id === again.receipt.receipt_id, "same receipt");
const found = await ok(payments, "refunds.get", { idempotency_key: key, customer_id: "C-90" });
check(found.found === true && found.receipt.receipt_id === first.receipt.receipt_id, "get");
const none = await ok(payments, "refunds.get", { idempotency_key: key, customer_id: "C-01" });
check(none.found === false && none.receipt === null, "other tenant sees nothing");
await fails(payments, "refunds.issue", { ...args, amount_cents: 26 }, "IDEMPOTENCY_CONFLICT");
const { idempotency_key: _dropped, ...noKey } = args;
await fails(payments, "refunds.issue", noKey, "INVALID_INPUT");
await payments.close();

console.log(JSON.stringify(summary));
