// A workflow drawn as a graph: the runtime's own definition (Graph.describe(), from the page's
// JSON data block "workflow"), laid out by topological layers (top to bottom), each node with
// its state and timing. Nothing here knows an application's nodes: any graph draws.
import { el, LANG, t } from "./session.js";

const SVG = "http://www.w3.org/2000/svg";
const BOX = { w: 112, h: 50, gapX: 16, gapY: 40, pad: 8 };
export const STATES = ["pending", "running", "done", "failed", "waiting"];
// The key of a status message's DataPart that names the workflow log event it reports, with
// the log's times (accord.runtime.workflow.event_facts): {event, node, at, seq, started?}.
export const EVENT_KEY = "dev.accord/workflowEvent";

export function definition() {
  const block = document.getElementById("workflow");
  return block ? JSON.parse(block.textContent) : null;
}

// Edges for drawing: one per (source, target), its route labels merged (the default: null).
function drawnEdges(def) {
  const byPair = new Map();
  for (const edge of def.edges) {
    const key = `${edge.source}\u0000${edge.target}`;
    const seen = byPair.get(key) || { ...edge, labels: [] };
    if (edge.label) seen.labels.push(edge.label);
    byPair.set(key, seen);
  }
  return [...byPair.values()];
}

// Layers: the longest path from the start over every edge but those closing a loop (a route
// may lead back; the runtime forbids loops of unconditional edges only).
export function layers(def) {
  const names = def.nodes.map((n) => n.name);
  const out = new Map(names.map((n) => [n, []]));
  for (const e of def.edges) if (!out.get(e.source).includes(e.target)) out.get(e.source).push(e.target);
  const back = new Set();
  const colour = new Map();
  const visit = (name) => {
    colour.set(name, 1);
    for (const next of out.get(name)) {
      if (colour.get(next) === 1) back.add(`${name}\u0000${next}`);
      else if (!colour.has(next)) visit(next);
    }
    colour.set(name, 2);
  };
  visit(def.start);
  for (const name of names) if (!colour.has(name)) visit(name);
  const layer = new Map(names.map((n) => [n, 0]));
  // Relax in rounds (a DAG settles in at most |nodes| rounds).
  for (let round = 0; round < names.length; round++) {
    let changed = false;
    for (const source of names) {
      for (const target of out.get(source)) {
        if (back.has(`${source}\u0000${target}`)) continue;
        if (layer.get(target) < layer.get(source) + 1) {
          layer.set(target, layer.get(source) + 1);
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  const rows = [];
  for (const name of names) (rows[layer.get(name)] ||= []).push(name);
  return rows.filter(Boolean);
}

// Where an edge passes: the middle of its straight line, or, when that line would cross a
// box of a layer in between (a route that skips a layer), beside that box.
function detour(at, edge, { x1, y1, x2, y2 }) {
  const middle = { x: (x1 + x2) / 2, y: (y1 + y2) / 2 };
  for (const [name, p] of at) {
    if (name === edge.source || name === edge.target) continue;
    const top = p.y;
    const bottom = p.y + BOX.h;
    if (bottom <= Math.min(y1, y2) || top >= Math.max(y1, y2)) continue;
    const y = top + BOX.h / 2;
    const x = x1 + ((x2 - x1) * (y - y1)) / (y2 - y1 || 1);
    if (x < p.x - 4 || x > p.x + BOX.w + 4) continue;
    const centre = p.x + BOX.w / 2;
    const side = x >= centre ? 1 : -1;
    return { x: centre + side * (BOX.w / 2 + BOX.gapX / 2), y };
  }
  return middle;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function nodeTitle(name) {
  const key = `node_${name}`;
  const word = t(key);
  return word === key ? name : word;
}

function seconds(ms) {
  const s = ms / 1000;
  return s < 10 ? `${s.toFixed(1)} s` : s < 120 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`;
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

// The timing line of a node: how long it took, or since when it runs or waits, or a note.
export function timing(state) {
  if (!state) return "";
  if (state.note) return state.note;
  // Equal times seen by a page that polls: both seen at once, not a measured duration; times
  // from the log (``logged``) are measured, an instant step too.
  if (state.started && state.ended) {
    return state.ended > state.started || state.logged ? seconds(Math.max(0, state.ended - state.started)) : "";
  }
  if (state.started && (state.state === "running" || state.state === "waiting")) {
    return t("since", { time: clock(state.started) });
  }
  return "";
}

// The picture: an <svg> (a scaled viewBox, so it fits any width) and the same facts as a list
// for screen readers and for copying.
export function draw(container, def, states) {
  const rows = layers(def);
  const widest = Math.max(...rows.map((r) => r.length));
  const width = widest * BOX.w + (widest - 1) * BOX.gapX + 2 * BOX.pad;
  const height = rows.length * BOX.h + (rows.length - 1) * BOX.gapY + 2 * BOX.pad;
  const at = new Map();
  rows.forEach((row, y) => {
    const rowWidth = row.length * BOX.w + (row.length - 1) * BOX.gapX;
    const left = (width - rowWidth) / 2;
    row.forEach((name, x) => {
      at.set(name, { x: left + x * (BOX.w + BOX.gapX), y: BOX.pad + y * (BOX.h + BOX.gapY) });
    });
  });
  const picture = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width: "100%",
    class: "graph-svg",
    "aria-hidden": "true",
    focusable: "false",
  });
  picture.append(
    svg(
      "defs",
      {},
      svg(
        "marker",
        { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
        svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-head" }),
      ),
    ),
  );
  for (const edge of drawnEdges(def)) {
    const a = at.get(edge.source);
    const b = at.get(edge.target);
    if (!a || !b) continue;
    const down = b.y > a.y;
    const x1 = a.x + BOX.w / 2;
    const y1 = down ? a.y + BOX.h : a.y + BOX.h / 2;
    const x2 = b.x + BOX.w / 2;
    const y2 = down ? b.y : b.y + BOX.h / 2;
    const bend = detour(at, edge, { x1, y1, x2, y2 });
    const taken = isTaken(def, states, edge);
    const group = svg("g", { class: `edge ${edge.kind}${taken ? " taken" : ""}`, "data-edge": `${edge.source}>${edge.target}` });
    // A quadratic curve through the detour point (its control point: 2P - (A + B) / 2).
    const cx = 2 * bend.x - (x1 + x2) / 2;
    const cy = 2 * bend.y - (y1 + y2) / 2;
    group.append(svg("path", { d: `M${x1},${y1} Q${cx},${cy} ${x2},${y2}`, "marker-end": "url(#arrow)" }));
    const label = edge.labels.join(" / ") || (edge.kind === "route" ? t("route_default") : "");
    if (label) {
      // Near the source, where the routes of one node part (a bend may sit between boxes).
      const u = 0.35;
      const lx = (1 - u) ** 2 * x1 + 2 * (1 - u) * u * cx + u ** 2 * x2;
      const ly = (1 - u) ** 2 * y1 + 2 * (1 - u) * u * cy + u ** 2 * y2;
      group.append(svg("text", { x: lx + 3, y: ly, class: "edge-label" }, label));
    }
    picture.append(group);
  }
  for (const node of def.nodes) {
    const p = at.get(node.name);
    const state = states[node.name] || { state: "pending" };
    const group = svg("g", {
      class: `node state-${state.state}`,
      "data-node": node.name,
      "data-state": state.state,
      transform: `translate(${p.x},${p.y})`,
    });
    group.append(
      svg("title", {}, `${node.name}: ${t(`state_${state.state}`)}`),
      svg("rect", { width: BOX.w, height: BOX.h, rx: 6 }),
      svg("text", { x: BOX.w / 2, y: 17, class: "node-name" }, nodeTitle(node.name)),
      svg("text", { x: BOX.w / 2, y: 31, class: "node-state" }, t(`state_${state.state}`)),
      svg("text", { x: BOX.w / 2, y: 44, class: "node-time" }, timing(state)),
    );
    picture.append(group);
  }
  const list = el(
    "ol",
    { class: "graph-list" },
    def.nodes.map((node) => {
      const state = states[node.name] || { state: "pending" };
      const time = timing(state);
      return el(
        "li",
        { dataset: { node: node.name, state: state.state } },
        t("labelled", { label: nodeTitle(node.name), value: `${t(`state_${state.state}`)}${time ? ` (${time})` : ""}` }),
      );
    }),
  );
  container.replaceChildren(
    picture,
    el("details", { class: "graph-details" }, el("summary", {}, t("as_list")), list),
  );
}

// -- states ---------------------------------------------------------------------------------

function predecessors(def, name, kinds) {
  return def.edges.filter((e) => e.target === name && kinds.includes(e.kind)).map((e) => e.source);
}

const REACHED = ["done", "running", "waiting", "failed"];

// Whether the run went along an edge: both ends reached, and no later node on the way (a
// reached predecessor of the target that the source leads to) came in between, as when a
// decision routes to an approval whose answer leads to the node the decision could also pick.
function isTaken(def, states, edge) {
  if (states[edge.source]?.state !== "done" || !REACHED.includes(states[edge.target]?.state)) return false;
  if (edge.kind === "edge") return true;
  return !predecessors(def, edge.target, ["edge", "route", "error"]).some(
    (p) => p !== edge.source && states[p]?.state === "done" && ancestors(def, p).has(edge.source),
  );
}

// Every node a path leads from to ``name`` (its ancestors), by any edge.
export function ancestors(def, name) {
  const found = new Set();
  const todo = [name];
  while (todo.length) {
    for (const p of predecessors(def, todo.pop(), ["edge", "route", "error"])) {
      if (!found.has(p)) {
        found.add(p);
        todo.push(p);
      }
    }
  }
  return found;
}

// The facts of the workflow log event a message reports (its DataPart under EVENT_KEY), or null.
export function eventOf(message) {
  for (const part of message?.parts || []) {
    const facts = part?.data?.[EVENT_KEY];
    if (facts && typeof facts === "object" && typeof facts.node === "string") return facts;
  }
  return null;
}

// A step of fold() from a log event's facts: its times are the log's.
export function stepOf(facts, status = "running", text = "") {
  return {
    node: facts.node,
    status,
    text,
    event: facts.event,
    at: Date.parse(facts.at) || null,
    started: facts.started ? Date.parse(facts.started) || null : null,
    logged: true,
  };
}

// The states of a workflow from what its task said, in order: one step per status that names
// a node (the status metadata's "node"), each {node, status, text, at}, and, when the message
// carried its log event's facts (stepOf), {event, started, logged}: the event type says what
// happened, the times are the log's. Without them, the orchestrator's progress lines say
// "<node>: done ..." when a node has finished and "<node>: CODE, retrying" before a retry. A
// node that starts finishes the nodes before it (its edge predecessors, and the route's source
// that picked it); the task's end finishes what still ran.
export function fold(def, steps, final) {
  const states = {};
  const known = new Set(def.nodes.map((n) => n.name));
  const set = (node, state, at, logged) => {
    const s = (states[node] ||= { state: "pending" });
    if (at && (!s.started || (logged && at < s.started))) s.started = at;
    if ((state === "done" || state === "failed") && at && !s.ended) s.ended = at;
    if (logged) s.logged = true;
    s.state = state;
  };
  // A node no step named (a join, a step that reports nothing) ran from the last end of the
  // nodes before it until a node after it started.
  const inferDone = (node, at, logged) => {
    if (!states[node]?.started) {
      const ends = predecessors(def, node, ["edge"]).map((p) => states[p]?.ended).filter(Boolean);
      if (ends.length) set(node, "running", Math.max(...ends), logged);
    }
    set(node, "done", at, logged);
  };
  for (const step of steps) {
    const node = step.node;
    if (!node && step.status === "waiting") {
      // The task stopped to wait without naming a node: the node that ran is the one waiting.
      for (const [name, s] of Object.entries(states)) if (s.state === "running") set(name, "waiting", step.at);
      continue;
    }
    if (!known.has(node)) continue;
    const logged = Boolean(step.logged);
    const startedAt = step.started || step.at; // when this run of the node started
    for (const p of predecessors(def, node, ["edge"])) {
      if (states[p]?.state !== "done") inferDone(p, startedAt, logged);
    }
    for (const p of predecessors(def, node, ["route", "error"])) {
      if (["running", "waiting"].includes(states[p]?.state)) set(p, "done", startedAt, logged);
    }
    const text = step.text || "";
    const done = step.event ? step.event === "node_output" : text.startsWith(`${node}: done`);
    if (step.status === "failed") set(node, "failed", step.at, logged);
    else if (step.status === "waiting") set(node, "waiting", step.at, logged);
    else if (done) {
      if (step.started) set(node, "running", step.started, logged);
      set(node, "done", step.at, logged);
    } else {
      set(node, "running", step.at, logged);
      states[node].retrying = step.event ? step.event === "node_failed" : / retrying$/.test(text);
    }
  }
  if (final === "completed") {
    for (const s of Object.values(states)) {
      if (s.state === "running" || s.state === "waiting") s.state = "done";
    }
  } else if (final === "failed") {
    for (const s of Object.values(states)) if (s.state === "running") s.state = "failed";
  }
  return states;
}
