package dev.accord.tools.commerce;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.accord.contract.AccordError;
import dev.accord.contract.auth.Principal;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Keys;
import dev.accord.contract.generated.Schemas;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Who may make a tool call, and for whom (accord.protocol.mcp.access, docs/security-tools.md):
 * the contract's allow-list (TOOL-011), the input schema (INVALID_INPUT), the delegation in
 * {@code _meta} (only a service may act for another tenant: ENV-006), the tenant app this
 * server serves, and the customer the call is about (TOOL-012). In this order, before any data
 * is read.
 */
final class Access {
    /** What the server verified: the app, customer and delegated tenant a handler may use. */
    record Verified(String app, String customerId, Map<String, Object> tenant) {}

    private static final String DELEGATION_FIELD = "_meta." + Keys.TOOL_DELEGATION_META_KEY;
    private final JsonSchemaValidator validator = McpJsonDefaults.getSchemaValidator();
    private final Map<String, Object> delegationSchema;
    private final Set<String> tenantApps;

    @SuppressWarnings("unchecked")
    Access(Set<String> tenantApps) throws Exception {
        this.tenantApps = tenantApps;
        // The contract's own schema of the delegation, from the generated package.
        this.delegationSchema = new ObjectMapper().readValue(Schemas.TOOL_DELEGATION_SCHEMA, Map.class);
    }

    @SuppressWarnings("unchecked")
    Verified authorize(ToolContract contract, Principal principal, Map<String, Object> args,
            Map<String, Object> meta) {
        Map<String, Object> rule = ruleFor(contract, principal);
        if (rule == null) {
            throw denied(contract.name() + " may not be called by this principal", contract, "TOOL-011", Map.of());
        }
        var input = validator.validate(contract.inputSchema(), args);
        if (!input.valid()) {
            throw new AccordError(ErrorCode.INVALID_INPUT, contract.name() + ": arguments do not match the input schema",
                    Map.of("tool", contract.name(), "errors", String.valueOf(input.errorMessage())));
        }
        Object raw = meta == null ? null : meta.get(Keys.TOOL_DELEGATION_META_KEY);
        Map<String, Object> tenant = null;
        if (raw != null) {
            var delegation = validator.validate(delegationSchema, raw);
            if (!delegation.valid() || !(raw instanceof Map<?, ?>)) {
                throw new AccordError(ErrorCode.INVALID_INPUT, "malformed delegation",
                        Map.of("field", DELEGATION_FIELD));
            }
            tenant = (Map<String, Object>) ((Map<String, Object>) raw).get("tenant");
            actingFor(principal, tenant);
        }
        String app = tenant != null ? (String) tenant.get("app") : principal.app();
        if (!tenantApps.contains(app)) {
            throw new AccordError(ErrorCode.PERMISSION_DENIED, "this service does not act for the caller's app",
                    Map.of("field", tenant != null ? DELEGATION_FIELD + ".tenant.app" : "credential.app"));
        }
        boolean asService = "service".equals(rule.get("role"));
        String customer;
        if (!asService) {
            customer = principal.subject();  // an end user is about themselves, whatever they name
        } else if (tenant == null) {
            throw denied(contract.name() + ": a service names the customer it acts for in params._meta['"
                    + Keys.TOOL_DELEGATION_META_KEY + "']", contract, "TOOL-012", Map.of("field", DELEGATION_FIELD));
        } else {
            customer = (String) tenant.get("user");
        }
        if (contract.customerField() != null && !customer.equals(args.get(contract.customerField()))) {
            throw denied(contract.name() + ": " + contract.customerField()
                    + " must be the customer this call is verified for", contract, "TOOL-012",
                    Map.of("field", contract.customerField()));
        }
        return new Verified(app, customer, tenant);
    }

    /** The first allow rule the principal fits: its role, and for a service the rule's grant. */
    private static Map<String, Object> ruleFor(ToolContract contract, Principal principal) {
        for (Map<String, Object> rule : contract.allow()) {
            String role = (String) rule.get("role");
            Object scope = rule.get("scope");
            if (principal.hasRole(role) && (scope == null || principal.hasGrant((String) scope))) {
                return rule;
            }
        }
        return null;
    }

    private static void actingFor(Principal principal, Map<String, Object> tenant) {
        Map<String, Object> details = Map.of("field", DELEGATION_FIELD, "requirement", "TOOL-012");
        if (principal.isService()) {
            if (!principal.mayActForApp((String) tenant.get("app"))) {
                throw new AccordError(ErrorCode.PERMISSION_DENIED, "this service may not act for that tenant app", details);
            }
            return;
        }
        if (!principal.subject().equals(tenant.get("user")) || !principal.app().equals(tenant.get("app"))) {
            throw new AccordError(ErrorCode.PERMISSION_DENIED, "only a service may act on behalf of another user", details);
        }
    }

    private static AccordError denied(String message, ToolContract contract, String requirement,
            Map<String, Object> more) {
        Map<String, Object> details = new LinkedHashMap<>(Map.of("tool", contract.name(), "requirement", requirement));
        details.putAll(more);
        return new AccordError(ErrorCode.PERMISSION_DENIED, message, details);
    }

    static List<String> names(List<ToolContract> contracts) {
        return contracts.stream().map(ToolContract::name).sorted().toList();
    }
}
