// Hand-written: reading, checking and writing the delegation envelope, as Python's
// accord.contracts.envelope (parse_envelope, to_metadata) and the budget guard
// (accord.protocol.a2a.budget_guard) do; the TypeScript and Go packages' envelope, in Java.
// The schema (Schemas.ENVELOPE_SCHEMA) says the shape and every limit; this file checks it
// with the rule names Python's errors carry and adds what a schema cannot say: the size limit,
// a deadline with a time zone, the budget left for a turn.
//
// One difference, on purpose: Python's pydantic coerces lax values ("3" or true for a number);
// this reads JSON as the schema types it, so such an envelope is refused here.
package dev.accord.contract;

import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Keys;
import dev.accord.contract.generated.Schemas;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The delegation envelope Python's model holds once it has read one: defaults filled in, the
 * deadline written as Python writes it ({@code ...Z} for UTC, microseconds when not zero).
 *
 * @param constraints string, Long or Boolean values (what the skill's contract forwards)
 * @param parentTask null for none
 * @param traceparent null for none
 */
public record Envelope(
        String goal,
        Map<String, Object> constraints,
        Budget budget,
        List<String> contextRefs,
        Tenant tenant,
        String parentTask,
        String traceparent) {

    /** What the callee may spend: abstract call units, tool calls, and by when. */
    public record Budget(long units, long toolCalls, String deadline) {}

    /** Whom the work is for: a claim the receiver checks against the verified credential. */
    public record Tenant(String app, String user, String session) {}

    /** What the budget grants a turn: the time it may take, the totals once it runs. */
    public record Allowance(Duration remaining, long spent, long toolCallsSpent) {}

    /** An envelope over this many bytes of JSON (UTF-8, as Python writes it) is refused (ENV-003). */
    public static final int MAX_ENVELOPE_BYTES = 16 * 1024;

    public Envelope {
        constraints = constraints == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(constraints));
        contextRefs = contextRefs == null ? List.of() : List.copyOf(contextRefs);
    }

    @SuppressWarnings("unchecked")
    private static final Map<String, Object> SCHEMA = (Map<String, Object>) Json.parse(Schemas.ENVELOPE_SCHEMA);

    /** Where an envelope broke which rule (the field dotted, the rule as pydantic names it). */
    private static final class Broken extends RuntimeException {
        final String field;
        final String rule;

        Broken(String field, String rule, String message) {
            super(message, null, false, false);
            this.field = field;
            this.rule = rule;
        }
    }

    // -- reading ---------------------------------------------------------------------------

    /**
     * Read and check the envelope in A2A message metadata; null when absent and not
     * {@code required}. Throws INVALID_INPUT as Python does: missing (ENV-001), oversized
     * (ENV-003), malformed (ENV-002, details {field, rule, requirement}).
     */
    public static Envelope parse(Map<String, ?> metadata, boolean required) {
        Object raw = metadata == null ? null : metadata.get(Keys.DELEGATION_EXTENSION_URI);
        if (raw == null) {
            if (required) {
                throw new AccordError(ErrorCode.INVALID_INPUT,
                        "delegation envelope missing from message metadata['"
                                + Keys.DELEGATION_EXTENSION_URI + "']",
                        details("field", "metadata", "requirement", "ENV-001"));
            }
            return null;
        }
        int size;
        try {
            size = Json.pythonDumps(raw).getBytes(StandardCharsets.UTF_8).length;
        } catch (IllegalArgumentException e) {
            throw new AccordError(ErrorCode.INVALID_INPUT, "delegation envelope is not JSON",
                    details("requirement", "ENV-002"));
        }
        if (size > MAX_ENVELOPE_BYTES) {
            throw new AccordError(ErrorCode.INVALID_INPUT,
                    "delegation envelope is " + size + " bytes; the limit is " + MAX_ENVELOPE_BYTES,
                    details("field", "envelope", "limit", MAX_ENVELOPE_BYTES, "requirement", "ENV-003"));
        }
        try {
            return read(raw);
        } catch (Broken b) {
            throw new AccordError(ErrorCode.INVALID_INPUT,
                    "delegation envelope field '" + b.field + "': " + b.getMessage(),
                    details("field", b.field, "rule", b.rule, "requirement", "ENV-002"));
        }
    }

    /** {@link #parse(Map, boolean)} with the envelope required (ENV-001). */
    public static Envelope parse(Map<String, ?> metadata) {
        return parse(metadata, true);
    }

    // -- writing ---------------------------------------------------------------------------

    /** The envelope as JSON, nulls left out, as Python's {@code model_dump(mode="json", exclude_none=True)}. */
    public Map<String, Object> toJson() {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("units", budget.units());
        b.put("tool_calls", budget.toolCalls());
        b.put("deadline", budget.deadline());
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("app", tenant.app());
        t.put("user", tenant.user());
        t.put("session", tenant.session());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("goal", goal);
        out.put("constraints", new LinkedHashMap<>(constraints));
        out.put("budget", b);
        out.put("context_refs", new ArrayList<Object>(contextRefs));
        out.put("tenant", t);
        if (parentTask != null) {
            out.put("parent_task", parentTask);
        }
        if (traceparent != null) {
            out.put("traceparent", traceparent);
        }
        return out;
    }

    /** The message metadata entry: {extension URI: envelope}, as Python's {@code to_metadata}. */
    public Map<String, Object> toMetadata() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(Keys.DELEGATION_EXTENSION_URI, toJson());
        return out;
    }

    /**
     * The envelope of an outgoing call made on behalf of this one: the same tenant, trace and
     * deadline, the budget less what this agent spent (BUDGET_EXHAUSTED when it spent more
     * than it had), {@code parentTask} (this task; null for none) as parent. Goal, constraints
     * and context refs are the child's own: a child gets only what the skill's contract
     * forwards (ENV-008), none by default.
     */
    public Envelope child(String goal, long spentUnits, long spentToolCalls, String parentTask,
            Map<String, Object> constraints, List<String> contextRefs) {
        long units = budget.units() - spentUnits;
        long toolCalls = budget.toolCalls() - spentToolCalls;
        if (units < 0 || toolCalls < 0) {
            throw new AccordError(ErrorCode.BUDGET_EXHAUSTED,
                    "spent more than the envelope holds (" + units + " units, " + toolCalls
                            + " tool calls left)",
                    details("units", budget.units(), "tool_calls", budget.toolCalls()));
        }
        Envelope out = new Envelope(goal, constraints, new Budget(units, toolCalls, budget.deadline()),
                contextRefs, tenant, parentTask, traceparent);
        try {
            return read(out.toJson()); // the child's envelope obeys the schema too
        } catch (Broken b) {
            throw new AccordError(ErrorCode.INVALID_INPUT,
                    "child envelope field '" + b.field + "': " + b.getMessage(),
                    details("field", b.field, "rule", b.rule, "requirement", "ENV-002"));
        }
    }

    /** {@link #child} with no constraints and no context refs. */
    public Envelope child(String goal, long spentUnits, long spentToolCalls, String parentTask) {
        return child(goal, spentUnits, spentToolCalls, parentTask, null, null);
    }

    /**
     * Whether the envelope leaves room for one more turn after {@code spent} units and
     * {@code toolCallsSpent} tool calls of earlier turns (Python's {@code BudgetGuard.admit},
     * whose default turn costs 1 unit and 0 tool calls): BUDGET_EXHAUSTED (ENV-004), or
     * RETRYABLE_TIMEOUT when the deadline has passed (ENV-005), with Python's words.
     */
    public Allowance admitTurn(long spent, long toolCallsSpent, long unitsPerTurn,
            long toolCallsPerTurn, Instant now) {
        if (budget.units() - spent < unitsPerTurn) {
            throw new AccordError(ErrorCode.BUDGET_EXHAUSTED,
                    "budget has " + (budget.units() - spent) + " units left; a turn costs " + unitsPerTurn,
                    details("units", budget.units(), "spent", spent, "per_turn", unitsPerTurn));
        }
        if (budget.toolCalls() - toolCallsSpent < toolCallsPerTurn) {
            throw new AccordError(ErrorCode.BUDGET_EXHAUSTED,
                    "budget has " + (budget.toolCalls() - toolCallsSpent)
                            + " tool calls left; a turn needs " + toolCallsPerTurn,
                    details("tool_calls", budget.toolCalls(), "tool_calls_spent", toolCallsSpent));
        }
        Deadline deadline;
        try {
            deadline = readDeadline(budget.deadline());
        } catch (Broken b) {
            throw new AccordError(ErrorCode.INVALID_INPUT, "budget.deadline: " + b.getMessage());
        }
        Duration remaining = Duration.between(now == null ? Instant.now() : now, deadline.at);
        if (remaining.isNegative() || remaining.isZero()) {
            throw new AccordError(ErrorCode.RETRYABLE_TIMEOUT,
                    "the delegation deadline has already passed", details("deadline", deadline.isoformat));
        }
        return new Allowance(remaining, spent + unitsPerTurn, toolCallsSpent + toolCallsPerTurn);
    }

    /** {@link #admitTurn} with Python's default turn (1 unit, no tool call) at this moment. */
    public Allowance admitTurn(long spent, long toolCallsSpent) {
        return admitTurn(spent, toolCallsSpent, 1, 0, null);
    }

    /**
     * A tool call's {@code params._meta}, as Accord's Python client writes it: the delegation
     * (Python's {@code ToolDelegation.to_meta}: the tenant the call acts for, whose user is the
     * customer, and for a write a person approved, {@code approved_by}; set by the runtime from
     * verified facts, never from a model's words) under {@code dev.accord/delegation}
     * (TOOL-012), and the caller's W3C trace context under {@code traceparent} (null: none),
     * so the tool's span joins the request's trace.
     */
    public static Map<String, Object> toolCallMeta(Tenant tenant, String approvedBy, String traceparent) {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("app", tenant.app());
        t.put("user", tenant.user());
        if (tenant.session() != null) {
            t.put("session", tenant.session());
        }
        Map<String, Object> acting = new LinkedHashMap<>();
        acting.put("tenant", t);
        if (approvedBy != null) {
            acting.put("approved_by", approvedBy);
        }
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put(Keys.TOOL_DELEGATION_META_KEY, acting);
        if (traceparent != null) {
            meta.put(Keys.TRACEPARENT_KEY, traceparent);
        }
        return meta;
    }

    // -- checking --------------------------------------------------------------------------

    private static Map<String, Object> details(Object... pairs) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            out.put((String) pairs[i], pairs[i + 1]);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> at(Map<String, Object> node, String... path) {
        for (String key : path) {
            node = (Map<String, Object>) node.get(key);
        }
        return node;
    }

    private static Envelope read(Object raw) {
        Map<String, Object> props = at(SCHEMA, "properties");
        Map<String, ?> o = object(raw, "envelope", (String) SCHEMA.get("title"));
        String goal = str(o, "goal", "", at(props, "goal"));
        Map<String, Object> constraints = readConstraints(o.get("constraints"), o.containsKey("constraints"));
        Budget budget = readBudget(o.get("budget"), o.containsKey("budget"));
        List<String> refs = readContextRefs(o.get("context_refs"), o.containsKey("context_refs"));
        Tenant tenant = readTenant(o.get("tenant"), o.containsKey("tenant"));
        String parent = nullable(o, "parent_task");
        String trace = nullable(o, "traceparent");
        noExtra(o, props, "");
        return new Envelope(goal, constraints, budget, refs, tenant, parent, trace);
    }

    /** An object: a model ({@code model} names it, as pydantic's message does) or a plain dict. */
    @SuppressWarnings("unchecked")
    private static Map<String, ?> object(Object value, String field, String model) {
        if (!(value instanceof Map<?, ?> m)) {
            if (model == null) {
                throw new Broken(field, "dict_type", "Input should be a valid dictionary");
            }
            throw new Broken(field, "model_type", "Input should be a valid dictionary or instance of " + model);
        }
        return (Map<String, ?>) m;
    }

    private static String str(Map<String, ?> o, String key, String prefix, Map<String, Object> rule) {
        if (!o.containsKey(key)) {
            throw new Broken(prefix + key, "missing", "Field required");
        }
        return checkString(o.get(key), prefix + key, rule);
    }

    // The schema's patterns, compiled once (requests check envelopes concurrently). "$" is
    // made "\z": pydantic's (Rust) regex ends there, Java's "$" also before a final newline.
    private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();

    private static Pattern pattern(String text) {
        return PATTERNS.computeIfAbsent(text,
                t -> Pattern.compile(t.endsWith("$") ? t.substring(0, t.length() - 1) + "\\z" : t));
    }

    private static String checkString(Object value, String field, Map<String, Object> rule) {
        if (!(value instanceof String s)) {
            throw new Broken(field, "string_type", "Input should be a valid string");
        }
        long length = s.codePointCount(0, s.length()); // code points, as Python counts
        if (rule.get("minLength") instanceof Number min && length < min.longValue()) {
            throw new Broken(field, "string_too_short", "String should have at least " + min + " character");
        }
        if (rule.get("maxLength") instanceof Number max && length > max.longValue()) {
            throw new Broken(field, "string_too_long", "String should have at most " + max + " characters");
        }
        if (rule.get("pattern") instanceof String p && !pattern(p).matcher(s).find()) {
            throw new Broken(field, "string_pattern_mismatch", "String should match pattern '" + p + "'");
        }
        return s;
    }

    /** An optional string: the non-null branch of its anyOf holds the rule. */
    @SuppressWarnings("unchecked")
    private static String nullable(Map<String, ?> o, String key) {
        Object value = o.get(key);
        if (value == null) {
            return null;
        }
        List<Object> anyOf = (List<Object>) at(SCHEMA, "properties", key).get("anyOf");
        return checkString(value, key, (Map<String, Object>) anyOf.get(0));
    }

    /** A JSON integer (a whole double too, as Python reads 1.0 for an int); null otherwise. */
    private static BigInteger integer(Object value) {
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return BigInteger.valueOf(((Number) value).longValue());
        }
        if (value instanceof BigInteger b) {
            return b;
        }
        if (value instanceof Double || value instanceof Float || value instanceof BigDecimal) {
            double d = ((Number) value).doubleValue();
            if (Double.isFinite(d) && d == Math.rint(d)) {
                return new BigDecimal(d).toBigInteger();
            }
        }
        return null;
    }

    private static long intField(Map<String, ?> o, String key, String prefix, Map<String, Object> rule) {
        String field = prefix + key;
        if (!o.containsKey(key)) {
            throw new Broken(field, "missing", "Field required");
        }
        BigInteger n = integer(o.get(key));
        if (n == null) {
            throw new Broken(field, "int_type", "Input should be a valid integer");
        }
        if (rule.get("minimum") instanceof Number min && n.compareTo(BigInteger.valueOf(min.longValue())) < 0) {
            throw new Broken(field, "greater_than_equal", "Input should be greater than or equal to " + min);
        }
        if (rule.get("maximum") instanceof Number max && n.compareTo(BigInteger.valueOf(max.longValue())) > 0) {
            throw new Broken(field, "less_than_equal", "Input should be less than or equal to " + max);
        }
        return n.longValue();
    }

    private static void noExtra(Map<String, ?> o, Map<String, Object> props, String prefix) {
        for (String key : o.keySet()) {
            if (!props.containsKey(key)) {
                throw new Broken(prefix + key, "extra_forbidden", "Extra inputs are not permitted");
            }
        }
    }

    private static Map<String, Object> readConstraints(Object value, boolean present) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (!present) {
            return out;
        }
        Map<String, ?> o = object(value, "constraints", null);
        for (Map.Entry<String, ?> e : o.entrySet()) {
            Object item = e.getValue();
            if (item instanceof String || item instanceof Boolean) {
                out.put(e.getKey(), item);
                continue;
            }
            BigInteger n = integer(item);
            if (n == null || n.bitLength() >= 64) {
                // Python tries str, int, bool in turn and reports the first: `constraints.KEY.str`.
                throw new Broken("constraints." + e.getKey() + ".str", "string_type", "Input should be a valid string");
            }
            out.put(e.getKey(), n.longValue());
        }
        // Counted after the items are read, as pydantic does (so a bad item is named first).
        if (at(SCHEMA, "properties", "constraints").get("maxProperties") instanceof Number max
                && out.size() > max.longValue()) {
            throw new Broken("constraints", "too_long",
                    "Dictionary should have at most " + max + " items after validation, not more");
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static List<String> readContextRefs(Object value, boolean present) {
        List<String> refs = new ArrayList<>();
        if (!present) {
            return refs;
        }
        if (!(value instanceof List<?> items)) {
            throw new Broken("context_refs", "list_type", "Input should be a valid list");
        }
        Map<String, Object> rule = at(SCHEMA, "properties", "context_refs");
        Map<String, Object> itemRule = (Map<String, Object>) rule.get("items");
        for (int i = 0; i < items.size(); i++) {
            refs.add(checkString(items.get(i), "context_refs." + i, itemRule));
        }
        if (rule.get("maxItems") instanceof Number max && refs.size() > max.longValue()) {
            throw new Broken("context_refs", "too_long",
                    "List should have at most " + max + " items after validation, not " + refs.size());
        }
        return refs;
    }

    private static Budget readBudget(Object value, boolean present) {
        Map<String, Object> def = at(SCHEMA, "$defs", "Budget");
        Map<String, Object> p = at(def, "properties");
        if (!present) {
            throw new Broken("budget", "missing", "Field required");
        }
        Map<String, ?> o = object(value, "budget", (String) def.get("title"));
        long units = intField(o, "units", "budget.", at(p, "units"));
        long toolCalls = intField(o, "tool_calls", "budget.", at(p, "tool_calls"));
        if (!o.containsKey("deadline")) {
            throw new Broken("budget.deadline", "missing", "Field required");
        }
        String deadline = readDeadline(o.get("deadline")).pydantic;
        noExtra(o, p, "budget.");
        return new Budget(units, toolCalls, deadline);
    }

    private static Tenant readTenant(Object value, boolean present) {
        Map<String, Object> def = at(SCHEMA, "$defs", "Tenant");
        Map<String, Object> p = at(def, "properties");
        if (!present) {
            throw new Broken("tenant", "missing", "Field required");
        }
        Map<String, ?> o = object(value, "tenant", (String) def.get("title"));
        Tenant tenant = new Tenant(str(o, "app", "tenant.", at(p, "app")),
                str(o, "user", "tenant.", at(p, "user")), str(o, "session", "tenant.", at(p, "session")));
        noExtra(o, p, "tenant.");
        return tenant;
    }

    // RFC 3339 as pydantic reads it: a date, "T" or a space, hours and minutes, optional
    // seconds and fraction, and a zone (required: AwareDatetime).
    private static final Pattern DATE_TIME = Pattern.compile(
            "^(\\d{4})-(\\d{2})-(\\d{2})[T t](\\d{2}):(\\d{2})(?::(\\d{2})(?:[.,](\\d+))?)?"
                    + "(?:([Zz])|([+-])(\\d{2}):?(\\d{2}))?\\z");

    /** A deadline read: the instant, as Python's model writes it, as isoformat() writes it. */
    private record Deadline(Instant at, String pydantic, String isoformat) {}

    private static Deadline readDeadline(Object value) {
        String field = "budget.deadline";
        if (!(value instanceof String text)) {
            throw new Broken(field, "datetime_type", "Input should be a valid datetime");
        }
        Matcher m = DATE_TIME.matcher(text);
        if (!m.find()) {
            throw new Broken(field, "datetime_from_date_parsing", "Input should be a valid datetime");
        }
        String y = m.group(1), mo = m.group(2), d = m.group(3), h = m.group(4), mi = m.group(5);
        String s = m.group(6) == null ? "00" : m.group(6);
        String frac = m.group(7) == null ? "" : m.group(7);
        String sign = m.group(9), oh = m.group(10), om = m.group(11);
        if (m.group(8) == null && sign == null) {
            throw new Broken(field, "timezone_aware", "Input should have timezone info");
        }
        String micro = (frac.length() > 6 ? frac.substring(0, 6) : frac);
        micro = micro + "000000".substring(micro.length());
        Instant at;
        int offsetMin = 0;
        try {
            if (sign != null) {
                offsetMin = (Integer.parseInt(oh) * 60 + Integer.parseInt(om)) * (sign.equals("-") ? -1 : 1);
            }
            LocalDateTime local = LocalDateTime.of(Integer.parseInt(y), Integer.parseInt(mo),
                    Integer.parseInt(d), Integer.parseInt(h), Integer.parseInt(mi), Integer.parseInt(s),
                    Integer.parseInt(micro) * 1000);
            at = OffsetDateTime.of(local, ZoneOffset.ofTotalSeconds(offsetMin * 60)).toInstant();
        } catch (DateTimeException e) {
            throw new Broken(field, "datetime_from_date_parsing", "Input should be a valid datetime");
        }
        String base = y + "-" + mo + "-" + d + "T" + h + ":" + mi + ":" + s
                + (micro.equals("000000") ? "" : "." + micro);
        String zone = offsetMin == 0 ? "+00:00" : sign + oh + ":" + om;
        return new Deadline(at, base + (offsetMin == 0 ? "Z" : zone), base + zone);
    }
}
