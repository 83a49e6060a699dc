// commerce's tools over MCP (@modelcontextprotocol/sdk client, streamable HTTP), called with
// this service's own token (signed by its own key, renewed before it runs out) and the
// delegation of the customer the request is about.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AccordError, type ToolDelegation, fromMcpResult, toolCallMeta } from "@accord/contract";
import type { ServiceCredential } from "@accord/contract/service-keys";

/** Whom a call acts for, and the caller's trace context, passed on to every tool call. */
export interface Acting {
  readonly delegation: ToolDelegation;
  readonly traceparent?: string | undefined;
}

export class Commerce {
  constructor(private readonly url: URL, private readonly credential: ServiceCredential) {}

  /** One call in its own session: a failure to reach commerce is UNAVAILABLE; `signal`
   * aborts it (the task was canceled). */
  async call(
    tool: string, args: Record<string, unknown>, acting: Acting, signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const client = new Client({ name: "risk-check-ts", version: "0.1.0" });
    const transport = new StreamableHTTPClientTransport(this.url, {
      requestInit: { headers: { Authorization: `Bearer ${await this.credential.bearer()}` } },
    });
    try {
      await client.connect(transport);
    } catch (cause) {
      throw new AccordError("UNAVAILABLE", `commerce is unreachable: ${String(cause)}`);
    }
    try {
      const meta = toolCallMeta(acting.delegation, acting.traceparent);
      const result = await client.callTool(
        { name: tool, arguments: args, _meta: meta }, undefined, { signal },
      );
      if (result.isError === true) throw fromMcpResult(result);
      const structured = result.structuredContent;
      if (typeof structured !== "object" || structured === null) {
        throw new AccordError("CONTRACT_VIOLATION", `${tool} answered no structured content`);
      }
      return structured as Record<string, unknown>;
    } finally {
      await client.close();
    }
  }
}
