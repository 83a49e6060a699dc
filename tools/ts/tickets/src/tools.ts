// A tool call as the contract orders it: who may call (the access allow-list: a service with
// the tool's grant, TOOL-011), arguments inside the input schema (INVALID_INPUT, TOOL-009), the
// customer and tenant app from the verified call's delegation, never from an argument alone
// (TOOL-012), the write once per idempotency key (TOOL-006), and an answer inside the output
// schema (TOOL-008).
import { AccordError, TOOL_DELEGATION_META_KEY } from "@accord/contract";
import { type Principal, actsFor, holds } from "@accord/contract/service-keys";
import type { Contracted } from "./contracts.js";
import type { TicketStore } from "./store.js";

interface Tenant {
  readonly app: string;
  readonly user: string;
}

/** The tenant a service's call acts for: `_meta["dev.accord/delegation"].tenant`. */
function delegatedTenant(meta: unknown): Tenant {
  const delegation = (meta as Record<string, unknown> | undefined)?.[TOOL_DELEGATION_META_KEY];
  const tenant = (delegation as { tenant?: { app?: unknown; user?: unknown } } | undefined)?.tenant;
  if (typeof tenant?.app !== "string" || typeof tenant.user !== "string") {
    throw new AccordError(
      "PERMISSION_DENIED",
      "a service's call names the customer it acts for in _meta.dev.accord/delegation.tenant",
      { field: `_meta.${TOOL_DELEGATION_META_KEY}` },
    );
  }
  return { app: tenant.app, user: tenant.user };
}

export class Tools {
  private readonly byName: Map<string, Contracted>;

  constructor(contracts: readonly Contracted[], private readonly store: TicketStore) {
    this.byName = new Map(contracts.map((c) => [c.contract.name, c]));
  }

  call(name: string, args: Record<string, unknown>, meta: unknown, principal: Principal): unknown {
    const tool = this.byName.get(name);
    if (tool === undefined) throw new AccordError("INVALID_INPUT", `no tool ${name}`);
    const { contract } = tool;
    const allowed = principal.roles.includes("service") && contract.access.allow.some(
      (rule) => rule.role === "service" && (rule.scope === undefined || holds(principal, rule.scope)),
    );
    if (!allowed) {
      throw new AccordError("PERMISSION_DENIED", `${principal.subject} may not call ${name}`);
    }
    tool.checkInput(args);
    const tenant = delegatedTenant(meta);
    if (!actsFor(principal, tenant.app)) {
      throw new AccordError("PERMISSION_DENIED", "this service does not act for the caller's app", {
        field: `_meta.${TOOL_DELEGATION_META_KEY}.tenant.app`,
      });
    }
    const field = contract.access.customer_field;
    if (field !== undefined && args[field] !== tenant.user) {
      throw new AccordError("PERMISSION_DENIED", `${field} is not the customer this call acts for`, {
        field,
      });
    }
    const result = this.run(name, args, tenant);
    tool.checkOutput(result);
    return result;
  }

  private run(name: string, args: Record<string, unknown>, tenant: Tenant): unknown {
    switch (name) {
      case "tickets.open":
        return this.store.open({
          app: tenant.app,
          idempotencyKey: String(args["idempotency_key"]),
          customerId: tenant.user,
          orderId: typeof args["order_id"] === "string" ? args["order_id"] : null,
          subject: String(args["subject"]),
          body: String(args["body"]),
        });
      case "tickets.get":
        return this.store.get(tenant.app, tenant.user, String(args["ticket_id"]));
      default:
        throw new AccordError("INVALID_INPUT", `no tool ${name}`);
    }
  }
}
