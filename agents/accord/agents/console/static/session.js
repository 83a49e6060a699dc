// The signed-in user (a token kept in this tab's sessionStorage only), the page's words (from
// the page's JSON data block: one table, language.py), and a DOM builder that never parses
// HTML (text goes in as text, so nothing a task says can become markup).
const TOKEN_KEY = "accord.token";
const WORDS = JSON.parse(document.getElementById("words").textContent);
export const LANG = document.body.dataset.lang === "zh" ? "zh-CN" : "en";

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
}

// The token's claims, read without verifying (only to greet the user and pick a page: the
// orchestrator verifies every call).
export function claims() {
  const parts = token().split(".");
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, "="));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

export function t(key, vars = {}) {
  let text = WORDS[key] ?? key;
  for (const [name, value] of Object.entries(vars)) {
    text = text.replaceAll(`{${name}}`, String(value));
  }
  return text;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function money(cents, currency) {
  const amount = Number(cents) / 100;
  try {
    return new Intl.NumberFormat(LANG, { style: "currency", currency: currency || "USD" }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency || ""}`.trim();
  }
}

export function when(epochSeconds) {
  return new Date(Number(epochSeconds) * 1000).toLocaleString(LANG);
}

export function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// A word of the table, or null when the table has none (a value the console has no word for).
export function word(key) {
  return Object.hasOwn(WORDS, key) ? WORDS[key] : null;
}

// A task's status in words (dev.accord/status: its status, and why a waiting one waits).
export function statusLabel(meta, fallback = "") {
  if (meta?.waitingReason) return word(`reason_${meta.waitingReason}`) ?? meta.waitingReason;
  if (meta?.status) return word(`status_${meta.status}`) ?? meta.status;
  return fallback;
}

// What a workflow decided, in words (the result's "decision").
export function outcomeLabel(decision) {
  return word(`outcome_${decision}`) ?? String(decision);
}

// The header: who is signed in, and either the sign-in link or the sign-out button.
export function header() {
  const who = document.getElementById("who");
  const c = claims();
  who.textContent = c
    ? t("signed_in_as", { sub: c.sub ?? "?", roles: (c.roles || []).map((role) => word(`role_${role}`) ?? role).join(LANG === "en" ? ", " : "、") })
    : t("not_signed_in");
  const out = document.getElementById("sign-out");
  out.hidden = !c;
  document.getElementById("sign-in").hidden = Boolean(c);
  out.addEventListener("click", () => {
    signOut();
    window.location.assign("/");
  });
  return c;
}
