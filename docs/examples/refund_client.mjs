// Ask Accord's orchestrator for a refund from JavaScript (@a2a-js/sdk 1.3.0), follow it to the
// end, and print what happened as JSON lines. docs/clients-js.md explains each step.
//   ACCORD_URL             the orchestrator (default http://127.0.0.1:8700)
//   ACCORD_TOKEN           the customer's bearer token (`accord token --user C-03`)
//   ACCORD_APPROVER_TOKEN  an approver's token (`accord token --user ann --role approver`)
//   ACCORD_REQUEST         what the customer says (default: the laptop of C-03's order O-1004)
//   ACCORD_ANSWER          the answer to the agent's question, if it asks one
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { A2AError } from "@a2a-js/sdk/errors";

const env = process.env;
const STATUS = "dev.accord/status"; // the contract status, in task and status-update metadata
const as = (token) => ({ serviceParameters: { Authorization: `Bearer ${token}` } });
const customer = as(env.ACCORD_TOKEN);
const approver = as(env.ACCORD_APPROVER_TOKEN);
const show = (line) => console.log(JSON.stringify(line));

const text = (value) => ({ content: { $case: "text", value } });
const data = (value) => ({ content: { $case: "data", value } });
// A new task names its skill; an answer names the task (and its context) it continues.
const message = (parts, { skill, task } = {}) => ({
  message: {
    messageId: randomUUID(), role: Role.ROLE_USER, parts,
    metadata: skill ? { skill } : {},
    taskId: task?.id ?? "", contextId: task?.contextId ?? "",
  },
});

// Streams a send, showing each contract status; returns the task as it stopped. An update's
// metadata merges into the task's, as the SDK's own TaskManager does.
async function follow(stream) {
  let task;
  for await (const { payload } of stream) {
    if (payload.$case === "task") task = payload.value;
    if (payload.$case === "statusUpdate") {
      const update = payload.value;
      task = { ...task, id: update.taskId, contextId: update.contextId, status: update.status };
      task.metadata = { ...task.metadata, ...update.metadata };
      show({ update: TaskState[update.status.state], status: update.metadata?.[STATUS] });
    }
  }
  return task;
}

// A refused call throws an A2AError. Its `data` is the JSON-RPC error's data: one ErrorInfo,
// whose reason is the contract code, or, when the reason is one A2A names (TASK_NOT_FOUND...),
// whose metadata holds the contract code as `accordCode`.
function codeOf(error) {
  const info = error.data?.find((detail) => detail["@type"]?.endsWith("google.rpc.ErrorInfo"));
  return info?.metadata?.accordCode ?? info?.reason ?? error.reason;
}

const client = await new ClientFactory().createFromUrl(env.ACCORD_URL ?? "http://127.0.0.1:8700");
try {
  const request = env.ACCORD_REQUEST ?? "I changed my mind about the laptop, refund order O-1004";
  let task = await follow(
    client.sendMessageStream(message([text(request)], { skill: "refund.request" }), customer),
  );
  let status = task.metadata[STATUS];
  if (status.waitingReason === "input") { // a question: answer it in the same task
    show({ question: task.status.message.parts.map((p) => p.content.value).join(" ") });
    const answer = env.ACCORD_ANSWER ?? "the handle snapped off, photo IMG_2291.jpg";
    task = await follow(client.sendMessageStream(message([text(answer)], { task }), customer));
    status = task.metadata[STATUS];
  }
  if (status.waitingReason === "approval") { // a second principal, an approver, decides
    const decision = { task_id: task.id, decision: "approve", note: "verified by phone" };
    await client.sendMessage(message([data(decision)], { skill: "refund.approve" }), approver);
  }
  // The customer reads their task: its artifacts are the result (data) and the receipt (text).
  task = await client.getTask({ id: task.id }, customer);
  status = task.metadata[STATUS];
  const artifact = (name) => task.artifacts.find((a) => a.name === name)?.parts[0]?.content.value;
  show({
    task: task.id, state: TaskState[task.status.state], status,
    result: artifact("result"), receipt: artifact("receipt"),
  });
  // A failed (or declined) task is an answer, not a throw: its status holds the error, with
  // its code and retry class ({code, retry, message, details}).
  process.exitCode = status.error ? 1 : 0;
} catch (error) {
  if (!(error instanceof A2AError)) throw error;
  // What to do is the code's retry class (retry, replan, stop): docs/contract.md, errors.json.
  show({ error: codeOf(error), message: error.message });
  process.exitCode = 2;
}
