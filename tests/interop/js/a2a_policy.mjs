// policy-check from JavaScript: @a2a-js/sdk 1.3.0 (A2A 1.0) against our a2a-sdk server.
// usage: node a2a_policy.mjs URL TOKEN BINDING   (BINDING: JSONRPC or HTTP+JSON)
// Sends, streams, continues an input-required task in the same task, gets and cancels; prints
// one JSON object with what it saw. Each answer is checked with ajv against the refund.policy
// output schema the card names (card_schemas.mjs), and each DataPart sent against its input
// schema. The Python test (tests/interop/test_a2a_js.py) asserts it.
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";
import { schemasFromCard } from "./card_schemas.mjs";

const [url, token, binding] = process.argv.slice(2);
const STATUS_KEY = "dev.accord/status";
const options = { serviceParameters: { Authorization: `Bearer ${token}` } };

const order = {
  order_id: "O-1001", total_cents: 5999, refunded_cents: 0, refundable_cents: 5999,
  final_sale: false, days_since_delivery: 5, status: "delivered",
};

function message(parts, task) {
  return {
    tenant: "",
    message: {
      messageId: randomUUID(), role: Role.ROLE_USER, parts, metadata: {}, extensions: [],
      referenceTaskIds: [], taskId: task?.id ?? "", contextId: task?.contextId ?? "",
    },
    configuration: undefined,
    metadata: undefined,
  };
}
const schemas = await schemasFromCard(url);
const schemaErrors = [];
function valid(validate, value, where) {
  if (!validate(value)) schemaErrors.push({ where, errors: validate.errors });
  return value;
}
const input = (value, where) => valid(schemas.input("refund.policy"), value, `${where}: sent`);
const data = (value) => ({ content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" });
const text = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" });
const stateName = (task) => TaskState[task.status.state];
const statusMeta = (task) =>
  task.metadata?.[STATUS_KEY] ?? task.status.message?.metadata?.[STATUS_KEY] ?? null;
function answer(task, where = "answer") {
  for (const artifact of task.artifacts ?? []) {
    for (const part of artifact.parts) {
      if (part.content?.$case === "data") {
        return valid(schemas.output("refund.policy"), part.content.value, where);
      }
    }
  }
  return null;
}

// Folds stream events into the task, as a client must.
async function follow(stream) {
  let task = null;
  const states = [];
  for await (const event of stream) {
    const p = event.payload;
    if (p.$case === "task") task = structuredClone(p.value);
    else if (p.$case === "statusUpdate") {
      task = task ?? { id: p.value.taskId, contextId: p.value.contextId, artifacts: [] };
      task.status = p.value.status;
    } else if (p.$case === "artifactUpdate") {
      task = task ?? { id: p.value.taskId, contextId: p.value.contextId, artifacts: [] };
      task.artifacts = [...(task.artifacts ?? []), p.value.artifact];
    }
    if (task?.status) states.push(stateName(task));
  }
  return { task, states };
}

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
);
const client = await factory.createFromUrl(url);
const out = { binding: client.transport.protocolName, version: client.protocolVersion };

// 1. blocking send
const sent = await client.sendMessage(message([data(input({ order, reason: "wrong_size" }, "send"))]), options);
out.send = { case: sent.payload?.$case ?? ("id" in sent ? "task" : "?") };
const sentTask = sent.payload?.value ?? sent;
out.send.state = stateName(sentTask);
out.send.answer = answer(sentTask);

// 2. stream a damage claim: it stops waiting for input
const first = await follow(client.sendMessageStream(message([data({ order, reason: "damaged" })]), options));
out.ask = { states: first.states, meta: statusMeta(first.task), question: first.task.status.message?.parts?.[0]?.content?.value ?? null };

// 3. answer in the same task (streaming), then get it
const second = await follow(client.sendMessageStream(message([text("the lid is cracked, photo IMG-42")], first.task), options));
out.answer = { states: second.states, sameTask: second.task.id === first.task.id, answer: answer(second.task) };
const got = await client.getTask({ tenant: "", id: first.task.id, historyLength: undefined }, options);
out.get = { state: stateName(got), answer: answer(got) };

// 4. cancel a waiting task
const third = await client.sendMessage(message([data({ order, reason: "damaged" })]), options);
const waiting = third.payload?.value ?? third;
const canceled = await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined }, options);
out.cancel = { before: stateName(waiting), state: stateName(canceled), meta: statusMeta(canceled) };

// 5. an unknown task is an error
try {
  await client.getTask({ tenant: "", id: "no-such-task", historyLength: undefined }, options);
  out.unknown = "no error";
} catch (err) {
  out.unknown = err.constructor.name;
}
out.schemas = { ...schemas.seen, errors: schemaErrors };
console.log(JSON.stringify(out));
