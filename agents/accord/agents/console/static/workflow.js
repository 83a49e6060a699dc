// The workflow page (operators, developers): the graph of one task the signed-in token may
// read (GetTask: its owner's), with each node's state, read again every POLL_MS while it runs.
// A status line that carries its workflow log event's facts (the orchestrator's do) gives the
// node's times from the log, so a request opened after it ran is timed too; a line without
// them is timed by when this page first saw it (and the current status by its own time).
import { accordStatus, rpc, TERMINAL, textOf } from "./a2a.js";
import { definition, draw, eventOf, fold, stepOf } from "./graph.js";
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
const seen = new Map(); // the log event's seq, or "node|status|text" -> that step
let timer = null;

// The task's status lines that name a node, in the order this page first saw them. A line with
// its log event's facts has the log's times; another has the time this page first saw it (none
// for the lines already there when the page opened, except the current status, whose time the
// task carries). Kept across reads, so a line that leaves the current status keeps its time.
function steps(task, first) {
  const messages = [...(task.history || [])];
  if (task.status?.message) messages.push(task.status.message);
  const statusAt = Date.parse(task.status?.timestamp || "") || null;
  for (const message of messages) {
    const meta = message.metadata?.["dev.accord/status"];
    if (!meta?.node && meta?.status !== "waiting") continue;
    const text = textOf(message.parts);
    const facts = eventOf(message);
    const key = facts ? `seq ${facts.seq}` : `${meta.node}|${meta.status}|${text}`;
    if (seen.has(key)) continue;
    if (facts) {
      seen.set(key, stepOf(facts, meta.status, text));
      continue;
    }
    const at = message === task.status?.message ? statusAt : first ? null : Date.now();
    seen.set(key, { node: meta.node, status: meta.status, text, at });
  }
  return [...seen.values()];
}

async function show(taskId, first) {
  clearTimeout(timer);
  try {
    const task = await rpc("GetTask", { id: taskId, historyLength: HISTORY });
    const meta = accordStatus(task.status);
    const status = meta.status || "";
    const states = fold(def, steps(task, first), status);
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
  seen.clear();
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
