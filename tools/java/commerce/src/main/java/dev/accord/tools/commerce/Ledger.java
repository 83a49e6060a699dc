package dev.accord.tools.commerce;

import dev.accord.contract.AccordError;
import dev.accord.contract.Contract;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Keys;
import dev.accord.contract.mcp.ToolResults;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.McpHttpClientTransportAuthorizationException;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Commerce's view of refunds: the payments ledger's {@code refunds.list}, read on every call
 * (the one record of money, tools/accord/tools/ledger_view.py), over the MCP Java SDK's client
 * with commerce's own service token (granted {@code refunds.list} only) and the delegation of
 * the customer the incoming call was verified for. When payments cannot answer, the lookup fails
 * with its error (UNAVAILABLE when unreachable) instead of reporting stale money.
 */
final class Ledger {
    static final String LIST_TOOL = "refunds.list";
    /** The session named in commerce's delegation when its own caller sent none. */
    static final String SESSION = "commerce-lookup";

    private final URI url;
    private final Supplier<String> token;

    /** {@code token}: commerce's bearer token for refunds.list, asked for on every call. */
    Ledger(URI url, Supplier<String> token) {
        this.url = url;
        this.token = token;
    }

    /** refunds.list for one customer; {@code tenant} is the delegation's tenant to forward. */
    @SuppressWarnings("unchecked")
    Map<String, Object> refunds(Map<String, Object> tenant, String customerId, String orderId,
            Integer sinceDays) {
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("customer_id", customerId);
        if (orderId != null) {
            args.put("order_id", orderId);
        }
        if (sinceDays != null) {
            args.put("since_days", sinceDays);
        }
        String bearer;
        try {
            bearer = token.get();
        } catch (RuntimeException e) {
            throw new AccordError(ErrorCode.UNAVAILABLE, "commerce has no service token to read the ledger with");
        }
        String base = url.getScheme() + "://" + url.getRawAuthority();
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(base)
                .endpoint(url.getRawPath())
                .connectTimeout(Duration.ofSeconds(5))
                .httpRequestCustomizer((request, method, uri, body, context) ->
                        request.header("Authorization", "Bearer " + bearer))
                .build();
        McpSyncClient client = McpClient.sync(transport)
                .clientInfo(new McpSchema.Implementation("accord-commerce-java", "0.1.0"))
                .requestTimeout(Duration.ofSeconds(10))
                .build();
        McpSchema.CallToolResult result;
        try {
            client.initialize();
            result = client.callTool(new McpSchema.CallToolRequest(LIST_TOOL, args,
                    Map.of(Keys.TOOL_DELEGATION_META_KEY, Map.of("tenant", tenant))));
        } catch (RuntimeException e) {
            throw failure(e);
        } finally {
            client.closeGracefully();
        }
        if (Boolean.TRUE.equals(result.isError())) {
            throw ToolResults.readError(result);
        }
        if (!(result.structuredContent() instanceof Map<?, ?> found)) {
            throw new AccordError(ErrorCode.CONTRACT_VIOLATION, LIST_TOOL + " answered no structured content");
        }
        return (Map<String, Object>) found;
    }

    /**
     * A call that failed below MCP: an HTTP refusal of commerce's credential reads as the
     * contract reads a bare status (Contract.codeForHttpStatus, as Python's client does), any
     * other failure to reach payments as UNAVAILABLE (retried by callers).
     */
    private static AccordError failure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof McpHttpClientTransportAuthorizationException refused
                    && refused.getResponseInfo() != null) {
                int status = refused.getResponseInfo().statusCode();
                return new AccordError(Contract.codeForHttpStatus(status),
                        "tool server 'payments' answered HTTP " + status,
                        Map.of("server", "payments", "http_status", status));
            }
        }
        return new AccordError(ErrorCode.UNAVAILABLE, "the payments ledger is unreachable");
    }
}
