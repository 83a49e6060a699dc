// The customer's page: a chat with the refund assistant (SendStreamingMessage over SSE), its
// progress, its questions answered in place, the receipt; and the customer's earlier requests
// (ListTasks). A refund waiting for an approver is watched with GetTask every poll interval.
import { accordStatus, resultOf, rpc, stream, TERMINAL, textOf } from "./a2a.js";
import { definition, fold } from "./graph.js";
import { el, header, money, outcomeLabel, randomId, statusLabel, t, word } from "./session.js";

const REQUEST_SKILL = "refund.request";
const HISTORY = 200; // GetTask: enough of the task's history for its last steps
const POLL_MS = Number(document.body.dataset.pollMs);
const conversation = document.getElementById("conversation");
const progress = document.getElementById("progress");
const progressHeading = document.getElementById("progress-heading");
const earlier = document.getElementById("earlier");
const notice = document.getElementById("notice");
const form = document.getElementById("chat");
const field = document.getElementById("message");
const label = document.getElementById("message-label");
const send = document.getElementById("send");

let current = null; // {taskId, contextId, waiting: "input" | "approval" | null}
let watching = null;
const workflow = definition();
let steps = []; // the request's status lines that name a workflow node, in order

// The customer's progress: plain steps in the page's language, one per workflow node that has
// a step word (language.py "step_<node>"), never the orchestrator's own progress lines (those
// are for developers, and in its language).
function showSteps(final = null) {
  const states = fold(workflow, steps, final);
  const shown = [];
  const items = [];
  for (const { node } of steps) {
    const text = word(`step_${node}`);
    const state = states[node];
    if (!text || !state || shown.includes(text)) continue;
    shown.push(text);
    const how = state.retrying && state.state === "running" ? t("step_retrying") : t(`state_${state.state}`);
    items.push(el("li", { class: `step state-${state.state}`, dataset: { state: state.state } }, t("step_line", { step: text, state: how })));
  }
  progress.replaceChildren(...items);
  progressHeading.hidden = !items.length; // no heading over nothing
}

function addStep(status) {
  const meta = accordStatus(status);
  if (!meta.node && meta.status !== "waiting") return;
  steps.push({ node: meta.node, status: meta.status, text: textOf(status.message?.parts), at: Date.parse(status.timestamp || "") || Date.now() });
  showSteps();
}

function say(who, ...content) {
  const item = el("li", { class: `bubble ${who}` }, ...content);
  conversation.append(item);
  item.scrollIntoView({ block: "nearest" });
  return item;
}

function showError(error) {
  notice.textContent = t("labelled", { label: t(error.code === "PERMISSION_DENIED" ? "refused" : "failed"), value: `${error.code} ${error.message}` });
}

function receipt(result) {
  const r = result.receipt;
  return el(
    "section",
    { class: "receipt", "aria-labelledby": `receipt-${r.receipt_id}` },
    el("h3", { id: `receipt-${r.receipt_id}` }, t("receipt")),
    el(
      "dl",
      {},
      el("dt", {}, t("receipt_id")), el("dd", {}, r.receipt_id),
      el("dt", {}, t("order")), el("dd", {}, r.order_id),
      el("dt", {}, t("amount")), el("dd", {}, money(r.amount_cents, r.currency)),
    ),
  );
}

function showOutcome(task) {
  const result = resultOf(task);
  const meta = accordStatus(task.status);
  if (result && result.decision) {
    say(
      "agent",
      el("p", {}, result.explanation || result.decision),
      el("p", { class: "quiet-text" }, t("labelled", { label: t("decision"), value: outcomeLabel(result.decision) })),
      result.receipt ? receipt(result) : null,
    );
  } else if (meta.error) {
    say("agent", el("p", {}, t("labelled", { label: t("failed"), value: `${meta.error.code} ${meta.error.message || ""}` })));
  } else {
    say("agent", el("p", {}, textOf(task.status?.message?.parts) || statusLabel(meta, task.status?.state)));
  }
  // A request that waited for an approver ends without a stream: its last steps are in the
  // task's history.
  for (const message of task.history || []) {
    const said = accordStatus({ message });
    const text = textOf(message.parts);
    if (said.node && !steps.some((s) => s.node === said.node && s.text === text)) {
      steps.push({ node: said.node, status: said.status, text, at: null });
    }
  }
  showSteps(meta.status);
  current = null;
  ask(false);
  refreshEarlier();
}

function ask(answering) {
  label.textContent = t(answering ? "answer_label" : "message_label");
  field.value = "";
  field.focus();
}

// What one status says: progress while working; a question (answered in place) or the wait
// for an approver when it stops; the outcome at the end.
function onStatus(taskId, contextId, status, task) {
  current = { taskId, contextId, waiting: null };
  const text = textOf(status.message?.parts);
  if (!TERMINAL.has(status.state)) addStep(status);
  if (status.state === "TASK_STATE_WORKING" || status.state === "TASK_STATE_SUBMITTED") return;
  if (status.state === "TASK_STATE_INPUT_REQUIRED") {
    if (accordStatus(status).waitingReason === "approval") {
      current.waiting = "approval";
      say("agent", el("p", { class: "waiting" }, t("waiting_approval")));
      watch(taskId);
    } else {
      current.waiting = "input";
      say("agent", el("p", {}, text));
      ask(true);
    }
    refreshEarlier();
    return;
  }
  if (TERMINAL.has(status.state)) {
    if (task) showOutcome(task);
    else rpc("GetTask", { id: taskId, historyLength: HISTORY }).then(showOutcome, showError);
  }
}

function onResult(result) {
  if (result.task) {
    const task = result.task;
    onStatus(task.id, task.contextId, task.status, task);
  } else if (result.statusUpdate) {
    const u = result.statusUpdate;
    onStatus(u.taskId, u.contextId, u.status, null);
  } else if (result.message) {
    say("agent", el("p", {}, textOf(result.message.parts)));
  }
}

// Polling, honestly: the public API has no event stream for a task that waits days for a
// person; GetTask every POLL_MS until it ends.
function watch(taskId) {
  clearTimeout(watching);
  watching = setTimeout(async () => {
    try {
      const task = await rpc("GetTask", { id: taskId, historyLength: HISTORY });
      if (TERMINAL.has(task.status?.state)) {
        showOutcome(task);
        return;
      }
    } catch (error) {
      showError(error);
    }
    watch(taskId);
  }, POLL_MS);
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = field.value.trim();
  if (!text) return;
  notice.textContent = "";
  const message = { messageId: randomId(), role: "ROLE_USER", parts: [{ text }] };
  if (current?.waiting === "input") {
    message.taskId = current.taskId;
    message.contextId = current.contextId;
  } else {
    message.metadata = { skill: REQUEST_SKILL };
    steps = [];
    showSteps();
    clearTimeout(watching);
  }
  say("user", el("p", {}, text));
  field.value = "";
  send.disabled = true;
  try {
    await stream("SendStreamingMessage", { message }, onResult);
  } catch (error) {
    showError(error);
  } finally {
    send.disabled = false;
  }
});

document.getElementById("new-request").addEventListener("click", () => {
  current = null;
  clearTimeout(watching);
  conversation.replaceChildren();
  steps = [];
  showSteps();
  ask(false);
});

async function refreshEarlier() {
  try {
    const result = await rpc("ListTasks", { pageSize: 20, includeArtifacts: true });
    const tasks = result.tasks || [];
    if (!tasks.length) {
      earlier.replaceChildren(el("li", {}, t("no_requests")));
      return;
    }
    earlier.replaceChildren(
      ...tasks.map((task) => {
        const first = (task.history || []).find((m) => m.role === "ROLE_USER");
        const meta = accordStatus(task.status);
        const result = resultOf(task);
        return el(
          "li",
          { dataset: { task: task.id } },
          el("span", { class: "ask" }, textOf(first?.parts) || task.id),
          el("span", { class: "quiet-text" }, ` · ${statusLabel(meta, task.status?.state)}`),
          result?.decision ? el("span", { class: "quiet-text" }, ` · ${outcomeLabel(result.decision)}`) : null,
        );
      }),
    );
  } catch (error) {
    showError(error);
  }
}

if (header()) {
  refreshEarlier();
  field.focus();
} else {
  notice.textContent = t("sign_in_first");
}
