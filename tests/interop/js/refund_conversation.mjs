// The refund conversation, approval included, from JavaScript: @a2a-js/sdk 1.3.0 against the
// orchestrator. Everything received is validated (ajv, JSON Schema 2020-12) against the schemas
// the orchestrator's Agent Card names (card_schemas.mjs): the skills' output schemas, the error
// schema and the status schema; every DataPart it sends is validated against the skill's input
// schema first. No schema is read from the repository.
// usage: node refund_conversation.mjs URL CUSTOMER_TOKEN APPROVER_TOKEN BINDING MUG_TOKEN
// (CUSTOMER_TOKEN owns O-1004, which needs an approver; MUG_TOKEN owns O-1005, the broken mug.)
// Prints one JSON object with what it saw; tests/interop/test_refund_js.py asserts it.
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";
import { schemasFromCard } from "./card_schemas.mjs";

const [url, customerToken, approverToken, binding, mugToken] = process.argv.slice(2);
const STATUS_KEY = "dev.accord/status";
const ERROR_KIND = "dev.accord/error";
const as = (token) => ({ serviceParameters: { Authorization: `Bearer ${token}` } });
const customer = as(customerToken);
const approver = as(approverToken);
const mugOwner = as(mugToken);

// -- the schemas the card names ------------------------------------------------------------
const schemas = await schemasFromCard(url);
const validators = {
  "refund.request": schemas.output("refund.request"),
  "refund.approve": schemas.output("refund.approve"),
  "refund.approve input": schemas.input("refund.approve"),
  error: schemas.error,
  status: schemas.status,
};
const violations = [];
let validated = 0;
function check(name, value, where) {
  validated += 1;
  if (!validators[name](value)) {
    violations.push({ where, schema: name, errors: validators[name].errors, value });
  }
}

// -- messages and tasks ----------------------------------------------------------------------
function message(parts, { task, skillId } = {}) {
  return {
    tenant: "",
    message: {
      messageId: randomUUID(), role: Role.ROLE_USER, parts,
      metadata: skillId ? { skill: skillId } : {}, extensions: [], referenceTaskIds: [],
      taskId: task?.id ?? "", contextId: task?.contextId ?? "",
    },
    configuration: undefined,
    metadata: undefined,
  };
}
const data = (value) => ({ content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" });
const text = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" });
const stateName = (task) => TaskState[task.status.state];
const partsOf = (msg) => msg?.parts ?? [];
const textOf = (msg) => partsOf(msg).filter((p) => p.content?.$case === "text").map((p) => p.content.value).join(" ");

// Every status seen is checked: the contract status by the status schema, an error by the
// error schema (both the metadata and the error DataPart). The status metadata is in the
// metadata of the task or the status update (`carrier`); a status message has its own copy.
function checkStatus(carrier, where) {
  const status = carrier?.status;
  const meta = carrier?.metadata?.[STATUS_KEY] ?? status?.message?.metadata?.[STATUS_KEY];
  if (!meta) return null;
  check("status", meta.status, `${where}: status`);
  if (meta.error) check("error", meta.error, `${where}: status error`);
  for (const part of partsOf(status.message)) {
    if (part.content?.$case === "data" && part.content.value?.kind === ERROR_KIND) {
      check("error", part.content.value, `${where}: error DataPart`);
    }
  }
  return meta;
}
function answer(task, skillId, where) {
  for (const artifact of task.artifacts ?? []) {
    for (const part of artifact.parts) {
      if (part.content?.$case === "data") {
        check(skillId, part.content.value, `${where}: ${skillId} output`);
        return part.content.value;
      }
    }
  }
  return null;
}
function view(task, skillId, where) {
  const meta = checkStatus(task, where);
  return {
    id: task.id, state: stateName(task), meta, question: textOf(task.status.message),
    answer: answer(task, skillId, where),
  };
}

// Folds stream events into the task, as a client must; checks every status on the way.
async function follow(stream, where) {
  let task = null;
  const states = [];
  for await (const event of stream) {
    const p = event.payload;
    if (p.$case === "task") task = structuredClone(p.value);
    else if (p.$case === "statusUpdate") {
      task = task ?? { id: p.value.taskId, contextId: p.value.contextId, artifacts: [] };
      task.status = p.value.status;
      // As the SDK's TaskManager: an update's metadata merges into the task's.
      task.metadata = { ...(task.metadata ?? {}), ...(p.value.metadata ?? {}) };
      checkStatus(p.value, `${where}: update`);
    } else if (p.$case === "artifactUpdate") {
      task = task ?? { id: p.value.taskId, contextId: p.value.contextId, artifacts: [] };
      task.artifacts = [...(task.artifacts ?? []), p.value.artifact];
    }
    if (task?.status) states.push(stateName(task));
  }
  return { task, states };
}
const taskOf = (sent) => sent.payload?.value ?? sent;

// -- the conversation -------------------------------------------------------------------------
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
);
const client = await factory.createFromUrl(url);
const out = { binding: client.transport.protocolName, version: client.protocolVersion };

// 1. the customer asks (streamed): the task stops waiting for an approver
const asked = await follow(
  client.sendMessageStream(
    message([text("I changed my mind about the laptop, refund order O-1004")], { skillId: "refund.request" }),
    customer,
  ),
  "ask",
);
out.ask = { states: asked.states, ...view(asked.task, "refund.request", "ask") };

// 2. the customer tries to approve their own refund: refund.approve admits approvers only, so
// the orchestrator refuses it with a JSON-RPC error before any task exists (AGENT-009).
const ownDecision = { task_id: asked.task.id, decision: "approve" };
check("refund.approve input", ownDecision, "own approval: sent");
try {
  await client.sendMessage(message([data(ownDecision)], { skillId: "refund.approve" }), customer);
  out.own = { refused: null };
} catch (error) {
  out.own = { refused: `${error?.code ?? ""} ${error?.message ?? error}` };
}

// 3. an approver approves
const decision = { task_id: asked.task.id, decision: "approve", note: "verified by phone" };
check("refund.approve input", decision, "approve: sent");
const decided = taskOf(await client.sendMessage(
  message([data(decision)], { skillId: "refund.approve" }),
  approver,
));
out.approve = view(decided, "refund.approve", "approve");

// 4. the customer's task has ended refunded, with a receipt
const got = await client.getTask({ tenant: "", id: asked.task.id, historyLength: undefined }, customer);
out.final = view(got, "refund.request", "final");

// 5. evidence continuation: a damage claim is asked for a photo, answered in the same task
const mug = await follow(
  client.sendMessageStream(message([text("my mug arrived broken, order O-1005")], { skillId: "refund.request" }), mugOwner),
  "mug",
);
out.evidence = { asked: view(mug.task, "refund.request", "mug") };
const answered = await follow(
  client.sendMessageStream(message([text("the handle snapped off, photo IMG_2291.jpg")], { task: mug.task }), mugOwner),
  "mug answer",
);
out.evidence.answered = { sameTask: answered.task.id === mug.task.id, ...view(answered.task, "refund.request", "mug answer") };

out.schemas = schemas.seen;
out.validated = validated;
out.violations = violations;
console.log(JSON.stringify(out));
