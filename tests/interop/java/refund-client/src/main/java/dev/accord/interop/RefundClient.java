package dev.accord.interop;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.accord.contract.AccordError;
import dev.accord.contract.Contract;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Errors;
import dev.accord.contract.generated.Keys;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The refund conversation from Java, A2A 1.0 over JSON-RPC with java.net.http and Jackson,
 * against the Accord orchestrator of a running mesh:
 *
 * <ol>
 *   <li>a customer asks for a large refund (skill refund.request): the task waits for an approver;
 *   <li>the customer may not approve it: refund.approve is refused with PERMISSION_DENIED;
 *   <li>an approver approves it (a new message, skill refund.approve, {task_id, decision, note});
 *   <li>the customer reads the task again: completed, refunded, with a receipt;
 *   <li>another customer's damage claim waits for evidence; the answer continues the same task.
 * </ol>
 *
 * <p>Why no A2A SDK: the 1.x SDK is not served as {@code org.a2aproject.sdk}, and the
 * {@code io.github.a2asdk} 1.0.0.Alpha3 client cannot read Accord's tasks (its metadata mapper
 * collects into a map that refuses JSON nulls: NullPointerException on the first task) and
 * names the version header X-A2A-Version (docs/interop.md). The contract package
 * (dev.accord:accord-contract) supplies the keys, the error registry and the typed error.
 *
 * <p>Usage: {@code java -jar refund-client.jar URL CUSTOMER_TOKEN APPROVER_TOKEN MUG_TOKEN}. It
 * prints one JSON object on its last line (what it saw at each step);
 * tests/interop/test_refund_java.py asserts on it. Exit status 1 on any failure.
 */
public final class RefundClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROTOCOL_VERSION = "1.0";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private static final AtomicLong IDS = new AtomicLong();

    private RefundClient() {}

    /** A call the service answered with a JSON-RPC error: the typed Accord error it carries. */
    static final class Refused extends Exception {
        final AccordError error;

        Refused(AccordError error) {
            super(error.code().wire() + ": " + error.getMessage());
            this.error = error;
        }
    }

    /** One caller of the orchestrator's JSON-RPC endpoint with one bearer token. */
    private record Caller(URI endpoint, String token) {
        Map<String, Object> call(String method, Map<String, Object> params) throws Exception {
            Map<String, Object> body = Map.of(
                    "jsonrpc", "2.0", "id", IDS.incrementAndGet(), "method", method, "params", params);
            HttpRequest request = HttpRequest.newBuilder(endpoint)
                    .timeout(TIMEOUT)
                    .header("Content-Type", "application/json")
                    // Without A2A-Version an A2A 1.0 server speaks 0.3 and refuses these methods.
                    .header("A2A-Version", PROTOCOL_VERSION)
                    .header("Authorization", "Bearer " + token)
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                    .build();
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException(method + ": HTTP " + response.statusCode() + " " + response.body());
            }
            Map<String, Object> answer = object(JSON.readValue(response.body(), Map.class));
            if (answer.get("error") != null) {
                throw new Refused(accordError(object(answer.get("error"))));
            }
            return object(answer.get("result"));
        }

        Map<String, Object> send(Map<String, Object> message) throws Exception {
            Map<String, Object> result = call("SendMessage", Map.of("message", message));
            if (!(result.get("task") instanceof Map<?, ?> task)) {
                throw new IllegalStateException("expected a task, got " + result);
            }
            return object(task);
        }

        Map<String, Object> get(String id) throws Exception {
            return call("GetTask", Map.of("id", id));
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object value) {
        return (Map<String, Object>) value;
    }

    /**
     * The typed Accord error of a JSON-RPC error: the first ErrorInfo of its data that names a
     * contract code (Accord's domain by its reason, A2A's by the code in its metadata), as the
     * Python contract's AccordError.from_jsonrpc_error reads it; else INTERNAL.
     */
    static AccordError accordError(Map<String, Object> error) {
        String message = error.get("message") instanceof String text ? text : null;
        if (error.get("data") instanceof List<?> infos) {
            for (Object raw : infos) {
                if (!(raw instanceof Map<?, ?> info)) {
                    continue;
                }
                Object code = null;
                if (Errors.ERROR_DOMAIN.equals(info.get("domain"))) {
                    code = info.get("reason");
                } else if (Errors.A2A_ERROR_DOMAIN.equals(info.get("domain"))
                        && info.get("metadata") instanceof Map<?, ?> meta) {
                    code = meta.get(Keys.ERROR_INFO_CODE_KEY);
                }
                if (ErrorCode.fromWire(code).isPresent()) {
                    return new AccordError(Contract.parseCode(code), message);
                }
            }
        }
        return new AccordError(Contract.parseCode(null), message);
    }

    /** The JSON-RPC endpoint of A2A 1.0 the orchestrator's Agent Card names. */
    private static URI endpoint(String base) throws Exception {
        URI card = URI.create(base.replaceAll("/+$", "") + "/.well-known/agent-card.json");
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(card).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("agent card: HTTP " + response.statusCode());
        }
        for (Object raw : (List<?>) object(JSON.readValue(response.body(), Map.class)).get("supportedInterfaces")) {
            Map<String, Object> iface = object(raw);
            if ("JSONRPC".equals(iface.get("protocolBinding"))
                    && PROTOCOL_VERSION.equals(iface.get("protocolVersion"))) {
                return URI.create((String) iface.get("url"));
            }
        }
        throw new IllegalStateException("agent card: no JSON-RPC interface of A2A " + PROTOCOL_VERSION);
    }

    private static Map<String, Object> message(String skill, Map<String, Object> part) {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("messageId", UUID.randomUUID().toString());
        message.put("role", "ROLE_USER");
        message.put("parts", List.of(part));
        if (skill != null) {
            message.put("metadata", Map.of(Keys.SKILL_META_KEY, skill));
        }
        return message;
    }

    /** What the test asserts of a task: A2A state, contract status, question, result data. */
    private static Map<String, Object> view(Map<String, Object> task) {
        Map<String, Object> view = new LinkedHashMap<>();
        Map<String, Object> status = object(task.get("status"));
        view.put("id", task.get("id"));
        view.put("state", status.get("state"));
        Map<String, Object> metadata = task.get("metadata") == null ? Map.of() : object(task.get("metadata"));
        view.put("meta", metadata.get(Keys.STATUS_META_KEY));
        List<String> texts = new ArrayList<>();
        if (status.get("message") instanceof Map<?, ?> said && said.get("parts") instanceof List<?> parts) {
            for (Object part : parts) {
                if (object(part).get("text") instanceof String text) {
                    texts.add(text);
                }
            }
        }
        view.put("question", String.join("\n", texts));
        Object answer = null;
        if (task.get("artifacts") instanceof List<?> artifacts) {
            for (Object raw : artifacts) {
                Map<String, Object> artifact = object(raw);
                if (Keys.RESULT_ARTIFACT_NAME.equals(artifact.get("name"))) {
                    for (Object part : (List<?>) artifact.get("parts")) {
                        if (object(part).containsKey("data")) {
                            answer = object(part).get("data");
                        }
                    }
                }
            }
        }
        view.put("answer", answer);
        return view;
    }

    static Map<String, Object> run(String url, String customerToken, String approverToken, String mugToken)
            throws Exception {
        URI endpoint = endpoint(url);
        Caller customer = new Caller(endpoint, customerToken);
        Caller approver = new Caller(endpoint, approverToken);
        Caller mug = new Caller(endpoint, mugToken);
        Map<String, Object> out = new LinkedHashMap<>();

        // 1. The customer asks; a refund this large waits for an approver.
        Map<String, Object> asked = customer.send(message("refund.request",
                Map.of("text", "I changed my mind about the laptop, refund order O-1004")));
        String taskId = (String) asked.get("id");
        out.put("ask", view(asked));

        // 2. The customer's own approval is refused before any task exists: a typed error.
        try {
            customer.send(message("refund.approve",
                    Map.of("data", Map.of("task_id", taskId, "decision", "approve"))));
            throw new IllegalStateException("the customer's own approval was not refused");
        } catch (Refused refused) {
            Map<String, Object> own = new LinkedHashMap<>();
            own.put("code", refused.error.code().wire());
            own.put("message", refused.error.getMessage());
            out.put("own", own);
        }

        // 3. An approver approves: a new message naming the waiting task.
        Map<String, Object> decided = approver.send(message("refund.approve", Map.of("data", Map.of(
                "task_id", taskId, "decision", "approve", "note", "verified by phone"))));
        out.put("approve", view(decided));

        // 4. The customer's task now holds the outcome and the receipt.
        out.put("final", view(customer.get(taskId)));

        // 5. A damage claim asks for evidence; the answer continues the SAME task.
        Map<String, Object> claim = mug.send(message("refund.request",
                Map.of("text", "my mug arrived broken, order O-1005")));
        Map<String, Object> reply = message(null, Map.of("text", "the handle snapped off, photo IMG_2291.jpg"));
        reply.put("taskId", claim.get("id"));
        reply.put("contextId", claim.get("contextId"));
        Map<String, Object> answered = mug.send(reply);
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("asked", view(claim));
        evidence.put("answered", view(answered));
        evidence.put("sameTask", claim.get("id").equals(answered.get("id")));
        out.put("evidence", evidence);
        return out;
    }

    public static void main(String[] args) {
        if (args.length != 4) {
            System.err.println("usage: refund-client URL CUSTOMER_TOKEN APPROVER_TOKEN MUG_TOKEN");
            System.exit(2);
        }
        try {
            System.out.println(JSON.writeValueAsString(run(args[0], args[1], args[2], args[3])));
        } catch (Exception error) {
            error.printStackTrace();
            System.exit(1);
        }
    }
}
