// The workflow page (operators, developers): the graph of one task the signed-in token may
// read (GetTask: its owner's), with each node's state, read again every POLL_MS while it runs.
// The public API gives a task's status lines, not its log's timestamps: a node's timing is
// what this page saw (from the status's time while it watches), so a finished task shows
// states without durations.
import { accordStatus, rpc, TERMINAL, textOf } from "./a2a.js";
import { definition, draw, fold } from "./graph.js";
import { header, t } from "./session.js";

const POLL_MS = Number(document.body.dataset.pollMs);
const HISTORY = 200;
const def = definition();
const form = document.getElementById("open-task");
const field = document.getElementById("task");
const notice = document.getElementById("notice");
const box = document.getElementById("graph-box");
const graph = document.getElementById("graph");
const graphStatus = document.getElementById("graph-status");
const seenAt = new Map(); // "node|status|text" -> when this page first saw it (ms)
let timer = null;

function steps(task) {
  const messages = [...(task.history || [])];
  if (task.status?.message) messages.push(task.status.message);
  const statusAt = Date.parse(task.status?.timestamp || "") || Date.now();
  const out = [];
  for (const message of messages) {
    const meta = message.metadata?.["dev.accord/status"];
    if (!meta?.node) continue;
    const text = textOf(message.parts);
    const key = `${meta.node}|${meta.status}|${text}`;
    if (!seenAt.has(key)) seenAt.set(key, message === task.status?.message ? statusAt : Date.now());
    out.push({ node: meta.node, status: meta.status, text, at: seenAt.get(key) });
  }
  return out;
}

async function show(taskId, first) {
  clearTimeout(timer);
  try {
    const task = await rpc("GetTask", { id: taskId, historyLength: HISTORY });
    const meta = accordStatus(task.status);
    const status = meta.status || "";
    // A finished task opened afterwards: its lines have no times (the API does not carry them).
    if (first && TERMINAL.has(task.status?.state)) seenAt.clear();
    const states = fold(def, first && TERMINAL.has(task.status?.state) ? steps(task).map((s) => ({ ...s, at: null })) : steps(task), status);
    draw(graph, def, states);
    const label = meta.waitingReason ? t(`reason_${meta.waitingReason}`) : t(`status_${status}`);
    graphStatus.textContent = t("labelled", { label: `${t("task")} ${task.id}`, value: label });
    box.hidden = false;
    if (!TERMINAL.has(task.status?.state)) timer = setTimeout(() => show(taskId, false), POLL_MS);
  } catch (error) {
    notice.textContent = t("labelled", { label: t(error.code === "PERMISSION_DENIED" ? "refused" : "failed"), value: `${error.code} ${error.message}` });
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const id = field.value.trim();
  if (!id) return;
  notice.textContent = "";
  seenAt.clear();
  history.replaceState(null, "", `?task=${encodeURIComponent(id)}`);
  show(id, true);
});

if (header()) {
  const asked = new URLSearchParams(window.location.search).get("task");
  if (asked) {
    field.value = asked;
    show(asked, true);
  } else {
    field.focus();
  }
} else {
  notice.textContent = t("sign_in_first");
}
