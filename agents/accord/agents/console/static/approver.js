// The approver's page: the queue of their app (GET /approvals, polled every POLL_MS: the public
// API has no event stream over a list), the facts of a case, and approve / reject with a note
// (SendMessage with skill refund.approve: what `accord approve` sends).
import { getJson, resultOf, rpc } from "./a2a.js";
import { ancestors, definition, draw, fold, stepOf } from "./graph.js";
import { el, header, LANG, money, outcomeLabel, randomId, statusLabel, t, when, word } from "./session.js";

const APPROVE_SKILL = "refund.approve";
const STOP_CODES = new Set(["PERMISSION_DENIED", "UNAUTHENTICATED"]);
const POLL_MS = Number(document.body.dataset.pollMs);
const queue = document.getElementById("queue");
const news = document.getElementById("queue-news");
const queueStatus = document.getElementById("queue-status");
const notice = document.getElementById("notice");
const caseBox = document.getElementById("case");
const caseEmpty = document.getElementById("case-empty");
const caseHeading = document.getElementById("case-heading");
const facts = document.getElementById("facts");
const note = document.getElementById("note");
const outcomeBox = document.getElementById("outcome-box");
const outcome = document.getElementById("outcome");
const decide = document.getElementById("decide");
const graphBox = document.getElementById("graph-box");
const graph = document.getElementById("graph");
const workflow = definition();
// The node an approval waits at: the approval interrupt is raised by the node the approve
// skill resumes (the queue item names the task and the interrupt, not the node).
const APPROVAL_NODE = "approval";

const seen = new Set();
let firstPoll = true;
let items = new Map();
let selected = null;
let timer = null;

function riskLabel(level) {
  return word(`risk_${level}`) ?? level;
}

function summary(item) {
  const f = item.facts || {};
  if (item.kind === "attention") return `${t("attention")} · ${t("order")} ${f.order_id}`;
  return `${t("order")} ${f.order_id} · ${money(f.amount_cents, f.currency)} · ${t("risk")} ${riskLabel(f.risk)}`;
}

function render(list) {
  items = new Map(list.map((item) => [item.task_id, item]));
  const fresh = list.filter((item) => !seen.has(item.task_id));
  fresh.forEach((item) => seen.add(item.task_id));
  if (!firstPoll && fresh.length) {
    news.textContent = fresh.map((item) => t("new_case", { order: item.facts?.order_id })).join(". ");
  }
  firstPoll = false;
  if (!list.length) {
    queue.replaceChildren(el("li", {}, t("queue_empty")));
    return;
  }
  queue.replaceChildren(
    ...list.map((item) =>
      el(
        "li",
        { class: `case-item ${item.kind}` },
        el(
          "button",
          {
            type: "button",
            class: "case-button",
            "aria-pressed": item.task_id === selected ? "true" : "false",
            dataset: { task: item.task_id },
          },
          summary(item),
        ),
        item.due_at ? el("span", { class: "quiet-text" }, ` ${t("labelled", { label: t("due"), value: when(item.due_at) })}`) : null,
      ),
    ),
  );
}

function fact(name, value) {
  return value === null || value === undefined || value === ""
    ? []
    : [el("dt", {}, t(name)), el("dd", {}, String(value))];
}

function open(taskId) {
  const item = items.get(taskId);
  if (!item) return;
  selected = taskId;
  const f = item.facts || {};
  const p = f.params || {};
  facts.replaceChildren(
    ...fact("task", item.task_id),
    ...fact("order", f.order_id),
    ...fact("customer", f.customer_id),
    ...fact("amount", money(f.amount_cents, f.currency)),
    ...fact("items", (f.items || []).join(", ") || null),
    ...fact("refunded_before", f.earlier_refunds ? t("refunded_before_value", {
      count: f.earlier_refunds,
      amount: money(f.refunded_cents, f.currency),
      left: money(f.refundable_cents, f.currency),
    }) : null),
    ...fact("request", f.request || null),
    ...fact("evidence", f.evidence || null),
    ...fact("risk", f.risk ? riskLabel(f.risk) : null),
    ...fact("score", f.score),
    ...fact("signals", (f.signals || []).join(", ")),
    ...fact("rule", f.rule),
    ...fact("policy", f.policy),
    ...fact("delivered", p.days_since_delivery != null ? t("days_ago", { days: p.days_since_delivery }) : null),
    ...fact("due", item.due_at ? when(item.due_at) : null),
  );
  caseEmpty.hidden = true;
  caseBox.hidden = item.kind !== "approval";
  outcomeBox.hidden = true;
  note.value = "";
  for (const button of queue.querySelectorAll("button.case-button")) {
    button.setAttribute("aria-pressed", button.dataset.task === taskId ? "true" : "false");
  }
  showGraph(item, null);
  caseHeading.focus();
}

// The case's workflow: what the queue tells of it (the refund's log events with their times,
// in workflow_events; from an older orchestrator without them: every node on the way to the
// approval finished), then, once decided, the outcome the orchestrator answered.
function showGraph(item, decided) {
  if (!workflow || item.kind !== "approval" || !workflow.nodes.some((n) => n.name === APPROVAL_NODE)) {
    graphBox.hidden = true;
    return;
  }
  const events = Array.isArray(item.workflow_events) ? item.workflow_events : [];
  const states = events.length ? fold(workflow, events.map((facts) => stepOf(facts)), null) : {};
  if (!events.length) for (const name of ancestors(workflow, APPROVAL_NODE)) states[name] = { state: "done" };
  states[APPROVAL_NODE] = {
    ...states[APPROVAL_NODE],
    state: "waiting",
    // Short enough for the node's box: month, day, hour and minute.
    note: item.due_at
      ? t("decide_by", {
        time: new Date(item.due_at * 1000).toLocaleString(LANG, { month: "numeric", day: "numeric", hour: "2-digit", minute: "2-digit" }),
      })
      : null,
  };
  if (decided) {
    states[APPROVAL_NODE] = { state: "done" }; // the answer carries no log time of its end
    const next = workflow.edges.find((e) => e.source === APPROVAL_NODE && e.label === decided.decision)
      || workflow.edges.find((e) => e.source === APPROVAL_NODE && e.kind === "route" && e.label === null);
    const status = decided.outcome?.status;
    if (next) states[next.target] = { state: status === "completed" ? "done" : status === "failed" ? "failed" : "running" };
  }
  draw(graph, workflow, states);
  graphBox.hidden = false;
}

queue.addEventListener("click", (event) => {
  const button = event.target.closest("button.case-button");
  if (button) open(button.dataset.task);
});

decide.addEventListener("submit", async (event) => {
  event.preventDefault();
  const decision = event.submitter?.value === "reject" ? "reject" : "approve";
  const taskId = selected;
  const data = { task_id: taskId, decision };
  if (note.value.trim()) data.note = note.value.trim();
  const message = {
    messageId: randomId(),
    role: "ROLE_USER",
    metadata: { skill: APPROVE_SKILL },
    parts: [{ data }],
  };
  for (const button of decide.querySelectorAll("button")) button.disabled = true;
  notice.textContent = "";
  try {
    const result = await rpc("SendMessage", { message });
    const task = result.task;
    const answer = resultOf(task);
    const meta = task?.status?.message?.metadata?.["dev.accord/status"] || {};
    if (answer?.outcome) {
      const done = answer.outcome.result;
      const status = statusLabel(answer.outcome) + (done?.decision ? ` (${outcomeLabel(done.decision)})` : "");
      outcome.replaceChildren(t("recorded", { decision: outcomeLabel(answer.decision), status }));
      const r = done?.receipt;
      if (r?.receipt_id) {
        outcome.append(
          el("br"),
          el("span", { class: "receipt-line" }, t("receipt_shown", { receipt: r.receipt_id, amount: money(r.amount_cents, r.currency) })),
        );
      }
      const item = items.get(taskId);
      if (item) showGraph(item, answer);
    } else {
      outcome.textContent = t("labelled", { label: t("refused"), value: `${meta.error?.code || task?.status?.state} ${meta.error?.message || ""}` });
    }
    caseBox.hidden = true;
    outcomeBox.hidden = false;
    outcome.setAttribute("tabindex", "-1");
    outcome.focus();
  } catch (error) {
    // The orchestrator refuses a decision it will not take before any task exists (#36).
    const refused = ["PERMISSION_DENIED", "INVALID_INPUT", "NOT_FOUND"].includes(error.code);
    notice.textContent = t("labelled", { label: t(refused ? "refused" : "failed"), value: `${error.code} ${error.message}` });
  } finally {
    for (const button of decide.querySelectorAll("button")) button.disabled = false;
  }
  poll();
});

async function poll() {
  clearTimeout(timer);
  try {
    const body = await getJson("/approvals");
    render(body.approvals || []);
    queueStatus.textContent = t("queue_updated", { time: new Date().toLocaleTimeString(LANG) });
  } catch (error) {
    notice.textContent = t("labelled", { label: t(error.code === "PERMISSION_DENIED" ? "refused" : "failed"), value: `${error.code} ${error.message}` });
    if (STOP_CODES.has(error.code)) {
      queue.replaceChildren();
      return; // asking again changes nothing: this token may not read the queue
    }
  }
  timer = setTimeout(poll, POLL_MS);
}

if (header()) poll();
else notice.textContent = t("sign_in_first");
