// What the JSON-RPC binding answers before @a2a-js/sdk sees a request, and how its errors are
// written: refusals that must come before any task is made (ENV-007), the idempotent send
// (IDEM-002, IDEM-003), and A2A's own errors carrying the contract code (ERR-003).
import { createHash } from "node:crypto";
import type { Principal } from "@accord/contract/service-keys";
import type { NextFunction, Request, Response } from "express";
import {
  AccordError, DELEGATION_EXTENSION_URI, SKILL_META_KEY, codeForJsonRpc, toJsonRpcError,
} from "@accord/contract";

const SENDS = new Set(["SendMessage", "SendStreamingMessage"]);
/** Sent message ids kept (the oldest forgotten first): a bound on the memory they hold. */
const KEPT_SENDS = 10_000;
type Json = Record<string, unknown>;
const objectOr = (value: unknown): Json =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Json : {};

/** Keys in sorted order, so that a resend that orders its keys otherwise is the same message. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What makes a resend the same message: its parts, its skill, the task it continues. */
function fingerprint(message: Json): string {
  const metadata = objectOr(message["metadata"]);
  const asked = { parts: message["parts"] ?? [], skill: metadata[SKILL_META_KEY] ?? null,
    taskId: message["taskId"] ?? "" };
  return createHash("sha256").update(canonical(asked)).digest("hex");
}

function refuse(res: Response, id: unknown, error: AccordError): void {
  res.json({ jsonrpc: "2.0", id: id ?? null, error: toJsonRpcError(error) });
}

/** The JSON-RPC error of an A2A error the SDK wrote, as the contract writes it. */
function contractError(error: Json): Json {
  const code = typeof error["code"] === "number" ? codeForJsonRpc(error["code"]) : undefined;
  if (code === undefined) return error;
  const message = typeof error["message"] === "string" ? error["message"] : undefined;
  return toJsonRpcError(new AccordError(code, message)) as unknown as Json;
}

export class Gate {
  // (principal, messageId) -> the message's fingerprint and the task it made. In memory, as
  // the task store is: a restart forgets both (README.md, "Limits").
  private readonly sent = new Map<string, { fingerprint: string; taskId?: string }>();

  constructor(
    private readonly principalOf: (req: Request) => Principal | undefined,
    /** The grant a service caller's token must carry to ask for the skill (its access). */
    private readonly grant: string,
    /** The envelope constraints the skill declares (its skill schema document's). */
    private readonly constraints: ReadonlySet<string>,
  ) {}

  /** The task a message made (the executor tells, whatever binding or stream carried it). */
  made(caller: string, messageId: string, taskId: string): void {
    const claim = this.sent.get(`${caller}\u0000${messageId}`);
    if (claim !== undefined && claim.taskId === undefined) claim.taskId = taskId;
  }

  readonly handle = (req: Request, res: Response, next: NextFunction): void => {
    const body = objectOr(req.body);
    const json = res.json.bind(res);
    res.json = (answer: unknown) => {
      const out = objectOr(answer);
      if (out["error"] !== undefined) out["error"] = contractError(objectOr(out["error"]));
      return json(out);
    };
    if (!SENDS.has(String(body["method"]))) {
      next();
      return;
    }
    // A service without the skill's grant is refused before any task is made, as the Python
    // agents' skill gate refuses it (AGENT-009): being trusted says who it is, not what it may.
    const principal = this.principalOf(req);
    const narrowed = principal?.scopes !== undefined && !principal.scopes.includes(this.grant);
    if (principal?.roles.includes("service") && narrowed) {
      refuse(res, body["id"], new AccordError(
        "PERMISSION_DENIED", `${principal.subject} holds no grant ${this.grant}`,
        { grant: this.grant },
      ));
      return;
    }
    const message = objectOr(objectOr(body["params"])["message"]);
    const envelope = objectOr(objectOr(message["metadata"])[DELEGATION_EXTENSION_URI]);
    // A constraint the skill does not declare is refused before work (ENV-007).
    const undeclared = Object.keys(objectOr(envelope["constraints"]))
      .filter((name) => !this.constraints.has(name));
    if (undeclared.length > 0) {
      refuse(res, body["id"], new AccordError(
        "INVALID_INPUT", `refund.risk honours no envelope constraint ${undeclared.join(", ")}`,
        { field: `constraints.${undeclared[0]}`, requirement: "ENV-007" },
      ));
      return;
    }
    const key = `${principal?.subject ?? ""}\u0000${String(message["messageId"] ?? "")}`;
    const print = fingerprint(message);
    const seen = this.sent.get(key);
    if (seen !== undefined) {
      if (seen.fingerprint !== print) {
        refuse(res, body["id"], new AccordError(
          "IDEMPOTENCY_CONFLICT", "another message was sent under this messageId",
        ));
        return;
      }
      if (seen.taskId !== undefined && body["method"] === "SendMessage") {
        // The copy is answered with the first one's task as it is now: the SDK's GetTask (its
        // own owner check included), its result written as SendMessage's.
        req.body = { jsonrpc: "2.0", id: body["id"], method: "GetTask",
          params: { id: seen.taskId } };
        const copy = res.json;
        res.json = (answer: unknown) => {
          const out = objectOr(answer);
          if (out["result"] !== undefined) out["result"] = { task: out["result"] };
          return copy(out);
        };
        next();
        return;
      }
    }
    if (seen === undefined) {
      this.sent.set(key, { fingerprint: print });
      const oldest = this.sent.keys().next().value;
      if (this.sent.size > KEPT_SENDS && oldest !== undefined) this.sent.delete(oldest);
    }
    next();
  };
}
