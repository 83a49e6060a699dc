// Hand-written: a tool's answer as Accord's Python tool servers write it, on the MCP Java SDK.
package dev.accord.contract.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.accord.contract.AccordError;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Keys;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Content;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.util.Map;

/**
 * Tool results on the wire (docs/porting.md, "Tool errors"): an error is a result with
 * {@code isError}, a JSON text block and the contract error under {@code _meta["dev.accord/error"]},
 * never in {@code structuredContent} (clients validate that against the output schema even on
 * errors); a success carries {@code structuredContent} and the same JSON as text.
 */
public final class ToolResults {
    private ToolResults() {}

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The result of a tool that failed with {@code error} (ERR-005, TOOL-009). */
    public static CallToolResult error(AccordError error) {
        return CallToolResult.builder()
                .isError(true)
                .addContent(new TextContent(text(Map.of("error", error.toDict()))))
                .meta(Map.of(Keys.MCP_ERROR_META_KEY, error.toDict()))
                .build();
    }

    /** The result of a tool that answered {@code output} (its contract's output schema). */
    public static CallToolResult ok(Map<String, Object> output) {
        return CallToolResult.builder()
                .isError(false)
                .addContent(new TextContent(text(output)))
                .structuredContent(output)
                .build();
    }

    /**
     * The error a failed result carries: the contract error of its {@code _meta}, else (a tool
     * server that is not Accord) INTERNAL with its text, never a guess from the wording.
     */
    @SuppressWarnings("unchecked")
    public static AccordError readError(CallToolResult result) {
        Map<String, Object> meta = result.meta();
        if (meta != null && meta.get(Keys.MCP_ERROR_META_KEY) instanceof Map<?, ?> payload) {
            return AccordError.fromDict((Map<String, ?>) payload);
        }
        String text = "";
        if (result.content() != null) {
            for (Content c : result.content()) {
                if (c instanceof TextContent t && t.text() != null) {
                    text = t.text();
                    break;
                }
            }
        }
        return new AccordError(ErrorCode.INTERNAL, "tool returned an error without a contract code",
                text.isEmpty() ? null : Map.of("text", text.substring(0, Math.min(500, text.length()))));
    }

    private static String text(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON", e);
        }
    }
}
