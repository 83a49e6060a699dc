// Answers tests/contracts/test_java_contract.py's questions with the Java contract package
// (contracts/java: the generated tables and the hand-written rules, compiled by javac alone, no
// dependency) and prints every answer as one JSON document, compared there with the Python
// contract's own answers. Questions come on stdin, one a line, tab-separated; "~" is null.
// With one argument, a class name, it prints that class's String constants instead (the
// skills' schemas of `codegen java-app`). With the argument "helpers" it reads one JSON
// document of cases (status metadata, envelopes, the budget guard, a child envelope, a tool
// call's _meta) and prints what the hand-written helpers answer to each.
import dev.accord.contract.AccordError;
import dev.accord.contract.Contract;
import dev.accord.contract.ContractState;
import dev.accord.contract.Envelope;
import dev.accord.contract.Json;
import dev.accord.contract.StatusWire;
import dev.accord.contract.generated.A2AState;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Errors;
import dev.accord.contract.generated.Keys;
import dev.accord.contract.generated.RetryClass;
import dev.accord.contract.generated.Schemas;
import dev.accord.contract.generated.Status;
import dev.accord.contract.generated.WaitingReason;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

public final class JavaContractFacts {
    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        PrintStream print = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (args.length == 1 && args[0].equals("helpers")) {
            String text = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
            print.println(Json.pythonDumps(helpers((Map<String, Object>) Json.parse(text))));
            return;
        }
        if (args.length == 1) {  // an application's generated class: its schema constants
            print.println(json(strings(Class.forName(args[0]))));
            return;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> statuses = new LinkedHashMap<>();
        for (Status s : Status.values()) {
            List<Object> to = new ArrayList<>();
            for (Status t : Status.values()) {
                if (Contract.canTransition(s, t)) {
                    to.add(t.wire());
                }
            }
            to.sort(null);
            statuses.put(s.wire(), Map.of("terminal", Contract.isTerminal(s), "transitions", to));
        }
        out.put("statuses", statuses);
        out.put("waiting_reasons", wires(WaitingReason.values()));
        out.put("a2a_states", wires(A2AState.values()));
        out.put("retry_classes", wires(RetryClass.values()));
        Map<String, Object> codes = new LinkedHashMap<>();
        for (ErrorCode c : ErrorCode.values()) {
            var spec = Contract.specOf(c);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("code", spec.code().wire());
            row.put("retry", spec.retry().wire());
            row.put("meaning", spec.meaning());
            row.put("jsonrpc_code", spec.jsonrpcCode());
            row.put("rest_status", spec.restStatus());
            row.put("rest_reason", spec.restReason());
            row.put("http_status", spec.httpStatus());
            row.put("retry_class", Contract.retryClassOf(c).wire());
            row.put("parsed", Contract.parseCode(c.wire()).wire());
            codes.put(c.wire(), row);
        }
        out.put("codes", codes);
        out.put("error_domains", List.of(Errors.ERROR_DOMAIN, Errors.A2A_ERROR_DOMAIN));
        Map<String, Object> reasons = new LinkedHashMap<>();
        Errors.A2A_REASONS.forEach((k, v) -> reasons.put(String.valueOf(k), v));
        out.put("a2a_reasons", reasons);
        out.put("keys", strings(Keys.class));
        out.put("schemas", strings(Schemas.class));

        Map<String, List<Object>> answers = new LinkedHashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] q = line.split("\t", -1);
            Object answer = switch (q[0]) {
                case "to_a2a" -> Contract.toA2AState(new ContractState(
                        Status.fromWire(q[1]).orElseThrow(),
                        WaitingReason.fromWire(nul(q[2])).orElse(null),
                        ErrorCode.fromWire(nul(q[3])).orElse(null),
                        Boolean.parseBoolean(q[4]))).wire();
                case "from_a2a" -> state(Contract.fromA2AState(
                        A2AState.fromWire(q[1]).orElseThrow(), nul(q[2]), nul(q[3])));
                case "parse" -> Contract.parseCode(q[1].startsWith("s:") ? q[1].substring(2)
                        : q[1].equals("~") ? null : (Object) Integer.valueOf(q[1])).wire();
                case "jsonrpc" -> Contract.codeForJsonRpc(Integer.parseInt(q[1]))
                        .map(ErrorCode::wire).orElse(null);
                case "http" -> Contract.codeForHttpStatus(Integer.parseInt(q[1])).wire();
                case "error" -> {
                    AccordError e = new AccordError(ErrorCode.fromWire(q[1]).orElseThrow(), nul(q[2]));
                    yield Map.of("dict", e.toDict(), "meta", e.toolErrorMeta(),
                            "read", AccordError.fromDict(e.toDict()).toDict());
                }
                default -> throw new IllegalArgumentException("unknown question " + q[0]);
            };
            answers.computeIfAbsent(q[0], k -> new ArrayList<>()).add(answer);
        }
        out.putAll(answers);
        print.println(json(out));
    }

    // -- the hand-written helpers (envelope, status metadata) --------------------------------

    @SuppressWarnings("unchecked")
    private static Map<String, Object> helpers(Map<String, Object> ask) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> status = new ArrayList<>();
        for (Object c : (List<Object>) ask.get("status")) {
            Map<String, Object> k = (Map<String, Object>) c;
            Map<String, Object> s = (Map<String, Object>) k.get("state");
            ContractState state = new ContractState(
                    Status.fromWire(s.get("status")).orElseThrow(),
                    WaitingReason.fromWire(s.get("waiting_reason")).orElse(null),
                    ErrorCode.fromWire(s.get("error_code")).orElse(null),
                    Boolean.TRUE.equals(s.get("declined")));
            AccordError error = k.get("error") == null ? null
                    : AccordError.fromDict((Map<String, Object>) k.get("error"));
            String node = (String) k.get("node");
            var words = new StatusWire.Words("t-1", "c-1", "m-1", (String) k.get("text"),
                    (Map<String, Object>) k.get("data"), null);
            Map<String, Object> taskStatus = StatusWire.taskStatus(state, words, error, node);
            Map<String, Object> metadata = StatusWire.statusMetadata(state, error, node);
            List<Object> read = new ArrayList<>();
            for (StatusWire.Read r : List.of(StatusWire.readContractState(taskStatus, metadata),
                    StatusWire.readContractState(taskStatus, null))) {
                read.add(Arrays.asList(state(r.state()), r.error() == null ? null : r.error().toDict()));
            }
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("metadata", metadata);
            answer.put("message", StatusWire.statusMessage(state, words, error, node));
            answer.put("read", read);
            status.add(answer);
        }
        out.put("status", status);
        for (String key : List.of("envelopes", "bad_dates")) {
            List<Object> found = new ArrayList<>();
            for (Object m : (List<Object>) ask.get(key)) {
                found.add(attempt(() -> Envelope.parse((Map<String, Object>) m).toMetadata()));
            }
            out.put(key, found);
        }
        out.put("envelope_optional", Envelope.parse(Map.of(), false));
        Envelope incoming = Envelope.parse((Map<String, Object>) ask.get("child_of"));
        out.put("child", incoming.child("check risk", 10, 2, "task-9").toMetadata());
        out.put("child_overspent", ((Map<String, Object>) attempt(
                () -> incoming.child("check risk", 41, 0, null).toMetadata())).get("error"));
        List<Object> admit = new ArrayList<>();
        for (Object c : (List<Object>) ask.get("admit")) {
            Map<String, Object> k = (Map<String, Object>) c;
            admit.add(attempt(() -> {
                Envelope e = Envelope.parse(Map.of(
                        dev.accord.contract.generated.Keys.DELEGATION_EXTENSION_URI, k.get("envelope")));
                Envelope.Allowance got = e.admitTurn(num(k, "spent"), num(k, "toolCallsSpent"),
                        num(k, "unitsPerTurn"), num(k, "toolCallsPerTurn"),
                        Instant.ofEpochMilli(num(k, "now")));
                Map<String, Object> a = new LinkedHashMap<>();
                a.put("remainingMs", (long) Math.rint(got.remaining().toNanos() / 1e6));
                a.put("spent", got.spent());
                a.put("toolCallsSpent", got.toolCallsSpent());
                return a;
            }));
        }
        out.put("admit", admit);
        List<Object> toolMeta = new ArrayList<>();
        for (Object c : (List<Object>) ask.get("tool_meta")) {
            Map<String, Object> k = (Map<String, Object>) c;
            Map<String, Object> d = (Map<String, Object>) k.get("delegation");
            Map<String, Object> t = (Map<String, Object>) d.get("tenant");
            toolMeta.add(Envelope.toolCallMeta(
                    new Envelope.Tenant((String) t.get("app"), (String) t.get("user"), (String) t.get("session")),
                    (String) d.get("approved_by"), (String) k.get("traceparent")));
        }
        out.put("tool_meta", toolMeta);
        return out;
    }

    private static long num(Map<String, Object> k, String key) {
        return ((Number) k.get(key)).longValue();
    }

    private static Object attempt(Supplier<Object> run) {
        try {
            return run.get();
        } catch (AccordError e) {
            return Map.of("error", e.toDict());
        }
    }

    private static String nul(String field) {
        return field.equals("~") ? null : field;
    }

    private static Map<String, Object> state(ContractState s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", s.status().wire());
        m.put("waiting_reason", s.waitingReason() == null ? null : s.waitingReason().wire());
        m.put("error_code", s.errorCode() == null ? null : s.errorCode().wire());
        m.put("declined", s.declined());
        return m;
    }

    private static List<Object> wires(Enum<?>[] values) {
        List<Object> found = new ArrayList<>();
        for (Enum<?> v : values) {
            try {
                found.add(v.getClass().getMethod("wire").invoke(v));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        return found;
    }

    private static Map<String, Object> strings(Class<?> holder) throws IllegalAccessException {
        Map<String, Object> found = new LinkedHashMap<>();
        for (Field f : holder.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                found.put(f.getName(), f.get(null));
            }
        }
        return found;
    }

    private static String json(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Boolean || v instanceof Number) {
            return v.toString();
        }
        if (v instanceof String s) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            return b.append('"').toString();
        }
        if (v instanceof Map<?, ?> m) {
            List<String> parts = new ArrayList<>();
            m.forEach((k, x) -> parts.add(json(String.valueOf(k)) + ":" + json(x)));
            return "{" + String.join(",", parts) + "}";
        }
        if (v instanceof List<?> l) {
            List<String> parts = new ArrayList<>();
            l.forEach(x -> parts.add(json(x)));
            return "[" + String.join(",", parts) + "]";
        }
        throw new IllegalArgumentException("not JSON: " + v.getClass() + Arrays.toString(new Object[] {v}));
    }
}
