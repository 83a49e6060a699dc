// The refund.risk skill on @a2a-js/sdk's AgentExecutor: every event is built as wire JSON by
// @accord/contract's helpers (status metadata, errors) and read into the SDK's types.
import { randomUUID } from "node:crypto";
import {
  Artifact, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent, type Part,
} from "@a2a-js/sdk";
import {
  AgentEvent, type AgentExecutionEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext,
} from "@a2a-js/sdk/server";
import {
  AccordError, type Allowance, CONTRACT_VERSION_META_KEY, type ContractStateOf, SPENT_META_KEY,
  type StatusWords, TOOL_CALLS_SPENT_META_KEY, admitTurn, dataPart, parseEnvelope, statusMetadata,
  statusUpdate, taskStatus, TRACEPARENT_KEY,
} from "@accord/contract";
import type { Principal } from "@accord/contract/service-keys";
import { assess, readHistory } from "./rules.js";
import type { Acting, Commerce } from "./tools.js";

const ORDER = /^O-[0-9]{4,10}$/;
const CUSTOMER = /^C-[0-9]{2,10}$/;
const MAX_AMOUNT = 100_000_000;
const SCOPE = "refund.risk";

interface RiskRequest { order_id: string; customer_id: string; amount_cents?: number }

/** The skill input, checked as its schema states (INVALID_INPUT naming the field). */
function parseInput(data: unknown): RiskRequest {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new AccordError("INVALID_INPUT", "refund.risk takes a JSON object (a DataPart)");
  }
  const value = data as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (!["order_id", "customer_id", "amount_cents"].includes(key)) {
      throw new AccordError("INVALID_INPUT", `unknown field ${key}`, { field: key });
    }
  }
  const bad = (field: string): AccordError =>
    new AccordError("INVALID_INPUT", `invalid ${field}`, { field });
  if (typeof value["order_id"] !== "string" || !ORDER.test(value["order_id"])) {
    throw bad("order_id");
  }
  if (typeof value["customer_id"] !== "string" || !CUSTOMER.test(value["customer_id"])) {
    throw bad("customer_id");
  }
  const amount = value["amount_cents"];
  if (amount !== undefined && (typeof amount !== "number" || !Number.isInteger(amount)
    || amount < 0 || amount > MAX_AMOUNT)) {
    throw bad("amount_cents");
  }
  return value as unknown as RiskRequest;
}

function dataOf(parts: readonly Part[]): unknown {
  for (const part of parts) {
    if (part.content?.$case === "data") return part.content.value;
  }
  return undefined;
}

export class RiskExecutor implements AgentExecutor {
  constructor(
    private readonly commerce: Commerce,
    private readonly thresholdCents: number,
    private readonly principalOf: (ctx: RequestContext) => Principal | undefined,
    private readonly version: string,
    private readonly made: (caller: string, messageId: string, taskId: string) => void,
  ) {}

  /** A status update (wire JSON via the helpers) that also says the version it speaks and,
   * once the budget admitted the turn, what the task spent of its envelope (ENV-010: a caller
   * counts that report against the request's one budget; a task that worked must make it). */
  private update(
    state: ContractStateOf, words: StatusWords, spent?: Allowance,
  ): AgentExecutionEvent {
    const event = statusUpdate(state, words);
    const report = spent === undefined ? {} : {
      [SPENT_META_KEY]: spent.spent, [TOOL_CALLS_SPENT_META_KEY]: spent.toolCallsSpent,
    };
    return AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
      ...event,
      metadata: { ...event.metadata, ...report, [CONTRACT_VERSION_META_KEY]: this.version },
    }));
  }

  /** The turns running now, by task: what cancel aborts (their tool calls) and answers for. */
  private readonly turns = new Map<string, { readonly abort: AbortController; readonly contextId: string }>();

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    const words = () => ({ ...ids, messageId: randomUUID().replaceAll("-", "") });
    const abort = new AbortController();
    this.turns.set(ctx.taskId, { abort, contextId: ctx.contextId });
    const running: ContractStateOf = { status: "running" };
    if (ctx.task === undefined) {
      const caller = this.principalOf(ctx)?.subject;
      if (caller !== undefined) this.made(caller, ctx.userMessage.messageId, ctx.taskId);
      bus.publish(AgentEvent.task(Task.fromJSON({
        id: ctx.taskId, contextId: ctx.contextId, status: taskStatus(running, words()),
        metadata: { ...statusMetadata(running), [CONTRACT_VERSION_META_KEY]: this.version },
        history: [], artifacts: [],
      })));
    }
    let allowance: Allowance | undefined;
    try {
      const message = ctx.userMessage;
      this.checkVersion(message.metadata?.[CONTRACT_VERSION_META_KEY]);
      const principal = this.principalOf(ctx);
      if (principal === undefined) throw new AccordError("UNAUTHENTICATED");
      const isService = principal.roles.includes("service");
      // A service must send the delegation envelope (ENV-001); the turn must fit its budget.
      const envelope = parseEnvelope(message.metadata, { required: isService });
      // One turn: one unit and the two tool calls it makes (as the Python risk-check counts).
      if (envelope !== undefined) allowance = admitTurn(envelope, { toolCallsPerTurn: 2 });
      const request = parseInput(dataOf(message.parts));
      if (!isService && principal.subject !== request.customer_id) {
        throw new AccordError("PERMISSION_DENIED", `${SCOPE}: only about your own orders`);
      }
      // The caller's trace context: the message's (A2A metadata), else the envelope's.
      const sent = message.metadata?.[TRACEPARENT_KEY];
      const traceparent = typeof sent === "string" ? sent : envelope?.traceparent ?? undefined;
      const acting: Acting = {
        delegation: {
          tenant: {
            app: envelope?.tenant.app ?? principal.app,
            user: request.customer_id,
            session: envelope?.tenant.session ?? ctx.contextId,
          },
        },
        traceparent,
      };
      bus.publish(this.update(running, { ...words(), node: "orders.customer_history",
        text: `reading the refund history of customer ${request.customer_id}` }, allowance));
      // Both reads at once; Promise.all also takes the rejection of the one that fails second
      // (a read left unawaited when its sibling fails would be an unhandled rejection, which
      // ends a Node process).
      const ask = { order_id: request.order_id, customer_id: request.customer_id };
      const [historyRead, order] = await Promise.all([
        this.commerce.call("orders.customer_history", ask, acting, abort.signal),
        request.amount_cents === undefined
          ? this.commerce.call("orders.lookup", ask, acting, abort.signal)
          : Promise.resolve(undefined),
      ]);
      const amount = request.amount_cents ?? Number(order?.["refundable_cents"]);
      const history = readHistory(historyRead);
      if (history === undefined) {
        throw new AccordError("CONTRACT_VIOLATION", "the history tool answered outside its contract");
      }
      const result = assess(amount, history, this.thresholdCents);
      const why = result.signals.join(", ") || "no risk signals";
      const text = `Refund risk for order ${request.order_id}: ${result.risk} (${why}).`;
      bus.publish(AgentEvent.artifactUpdate(TaskArtifactUpdateEvent.fromJSON({
        ...ids,
        artifact: Artifact.toJSON(Artifact.fromJSON({
          artifactId: randomUUID(), name: "refund.risk",
          parts: [{ text }, dataPart({ ...result })],
        })),
        append: false, lastChunk: true,
      })));
      const done: ContractStateOf = { status: "completed" };
      if (abort.signal.aborted) return; // canceled: cancelTask ended the task
      bus.publish(this.update(done, { ...words(), text }, allowance));
    } catch (caught) {
      if (abort.signal.aborted) return;
      const error = caught instanceof AccordError
        ? caught : new AccordError("INTERNAL", "risk-check failed");
      const failed: ContractStateOf = { status: "failed", errorCode: error.code };
      bus.publish(this.update(failed, { ...words(), text: error.message, error }, allowance));
    } finally {
      this.turns.delete(ctx.taskId);
    }
    bus.finished();
  }

  /** A task may name the contract version it speaks: this agent serves one major (AGENT-008). */
  private checkVersion(asked: unknown): void {
    if (asked === undefined || asked === null) return;
    const major = (v: string): string => v.split(".")[0] ?? "";
    if (typeof asked !== "string" || major(asked) !== major(this.version)) {
      throw new AccordError(
        "VERSION_UNSUPPORTED",
        `risk-check serves contract ${this.version}, not ${String(asked)}`,
        { requested: String(asked), served: [this.version] },
      );
    }
  }

  /** Cancel of a running turn (AGENT-006): the task ends failed with CANCELED (A2A CANCELED)
   * at once, and the turn's tool calls are aborted, so nothing it learns later is published. */
  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const turn = this.turns.get(taskId);
    if (turn !== undefined) {
      turn.abort.abort();
      const error = new AccordError("CANCELED", "the caller canceled the task");
      const canceled: ContractStateOf = { status: "failed", errorCode: error.code };
      bus.publish(this.update(canceled, {
        taskId, contextId: turn.contextId, messageId: randomUUID().replaceAll("-", ""),
        text: error.message, error,
      }));
    }
    bus.finished();
  }
}
