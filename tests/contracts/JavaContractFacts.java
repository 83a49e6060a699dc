// Answers tests/contracts/test_java_contract.py's questions with the Java contract package
// (contracts/java: the generated tables and the hand-written rules, compiled by javac alone, no
// dependency) and prints every answer as one JSON document, compared there with the Python
// contract's own answers. Questions come on stdin, one a line, tab-separated; "~" is null.
// With one argument, a class name, it prints that class's String constants instead (the
// skills' schemas of `codegen java-app`).
import dev.accord.contract.AccordError;
import dev.accord.contract.Contract;
import dev.accord.contract.ContractState;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class JavaContractFacts {
    public static void main(String[] args) throws Exception {
        PrintStream print = new PrintStream(System.out, true, StandardCharsets.UTF_8);
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
