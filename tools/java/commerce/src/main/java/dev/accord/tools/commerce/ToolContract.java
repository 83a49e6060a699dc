package dev.accord.tools.commerce;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One tool contract (contracts/refund/.../specs/tools/NAME.yaml, bundled in the jar): what the
 * server lists and enforces. Only the fields this server needs are read.
 */
record ToolContract(
        String name, String version, List<String> alsoServes, String title, String description,
        String sideEffect, String idempotencyKey, String customerField, List<Map<String, Object>> allow,
        Map<String, Object> inputSchema, Map<String, Object> outputSchema) {

    @SuppressWarnings("unchecked")
    static ToolContract load(String name) throws IOException {
        try (InputStream in = ToolContract.class.getResourceAsStream("/contracts/" + name + ".yaml")) {
            if (in == null) {
                throw new IOException("no contract " + name + " in the jar");
            }
            Map<String, Object> c = new ObjectMapper(new YAMLFactory()).readValue(in, Map.class);
            Map<String, Object> access = (Map<String, Object>) c.getOrDefault("access", Map.of());
            return new ToolContract(
                    (String) c.get("name"), (String) c.get("version"),
                    (List<String>) c.getOrDefault("also_serves", List.of()),
                    (String) c.get("title"), (String) c.get("description"),
                    (String) c.get("side_effect"), (String) c.get("idempotency_key"),
                    (String) access.get("customer_field"),
                    (List<Map<String, Object>>) access.getOrDefault("allow", List.of()),
                    (Map<String, Object>) c.get("input_schema"), (Map<String, Object>) c.get("output_schema"));
        }
    }

    /** Every contract version this tool serves, its own first (TOOL-013). */
    List<String> servedVersions() {
        List<String> all = new ArrayList<>(List.of(version));
        all.addAll(alsoServes);
        return all;
    }

    /** The tools/list entry: the contract's schemas as they are, annotations derived (TOOL-004/005). */
    McpSchema.Tool tool() {
        boolean readOnly = "none".equals(sideEffect);
        return McpSchema.Tool.builder()
                .name(name)
                .title(title)
                .description(description)
                .inputSchema(inputSchema)
                .outputSchema(outputSchema)
                .annotations(new McpSchema.ToolAnnotations(title, readOnly,
                        "irreversible_write".equals(sideEffect),
                        readOnly || "required".equals(idempotencyKey), false, null))
                .meta(Map.of(dev.accord.contract.generated.Keys.CONTRACT_VERSIONS_META_KEY, servedVersions()))
                .build();
    }
}
