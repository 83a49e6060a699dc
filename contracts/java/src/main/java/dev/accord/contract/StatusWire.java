// Hand-written: what an Accord agent writes on the A2A wire beside the A2A state, and reading
// it back, exactly as Python's accord.protocol.a2a.wire does (docs/a2a-server.md, "Status
// metadata"); the TypeScript and Go packages' status_wire, in Java. The `dev.accord/status`
// entry goes in the metadata of the TaskStatusUpdateEvent (an A2A server merges it into the
// Task's); a status has a message only when it says something to a person, and that message
// repeats the entry in its own metadata. Values are wire JSON (Json's plain Java values), which
// the A2A Java SDK's metadata and DataPart hold as they are.
package dev.accord.contract;

import dev.accord.contract.generated.A2AState;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Keys;
import dev.accord.contract.generated.Status;
import dev.accord.contract.generated.StatusTables;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The {@code dev.accord/status} metadata and the status message of an Accord agent. */
public final class StatusWire {
    private StatusWire() {}

    /**
     * What a status message says besides the state it reports.
     *
     * @param messageId a fresh one per message (Python writes {@code uuid4().hex})
     * @param text "" or null: no text part
     * @param data null: no data part
     * @param parts parts before the text (wire JSON), null for none
     */
    public record Words(String taskId, String contextId, String messageId, String text,
            Map<String, Object> data, List<Map<String, Object>> parts) {}

    /** A contract state read from the wire, and its error when it failed (else null). */
    public record Read(ContractState state, AccordError error) {}

    /** The value stored under {@code dev.accord/status} (camelCase keys, contract 2.0). */
    public static Map<String, Object> statusMeta(ContractState state, AccordError error, String node) {
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("status", state.status().wire());
        meta.put(Keys.WAITING_REASON_KEY, state.waitingReason() == null ? null : state.waitingReason().wire());
        meta.put("error", error == null ? null : error.toDict());
        meta.put("node", node);
        return meta;
    }

    /** The metadata of a status update (and of its task) carrying its contract status. */
    public static Map<String, Object> statusMetadata(ContractState state, AccordError error, String node) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(Keys.STATUS_META_KEY, statusMeta(state, error, node));
        return out;
    }

    /** The DataPart body that repeats a failed task's error. */
    public static Map<String, Object> errorData(AccordError error) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("kind", Keys.ERROR_DATA_KIND);
        data.putAll(error.toDict());
        return data;
    }

    /** A DataPart of JSON data (A2A 1.0 wire JSON). */
    public static Map<String, Object> dataPart(Map<String, Object> data) {
        Map<String, Object> part = new LinkedHashMap<>();
        part.put("data", data);
        part.put("mediaType", "application/json");
        return part;
    }

    /**
     * The agent message of a status update (wire JSON): the words' parts, the text, the data,
     * then the error DataPart (which a failure always has); null when there is nothing to say
     * (A2A 1.0 requires a message to have a part, and a filler would be shown as words).
     */
    public static Map<String, Object> statusMessage(ContractState state, Words words, AccordError error, String node) {
        List<Object> parts = new ArrayList<>();
        if (words.parts() != null) {
            parts.addAll(words.parts());
        }
        if (words.text() != null && !words.text().isEmpty()) {
            parts.add(Map.of("text", words.text()));
        }
        if (words.data() != null) {
            parts.add(dataPart(words.data()));
        }
        if (error != null) {
            parts.add(dataPart(errorData(error)));
        }
        if (parts.isEmpty()) {
            return null;
        }
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("messageId", words.messageId());
        message.put("contextId", words.contextId());
        message.put("taskId", words.taskId());
        message.put("role", "ROLE_AGENT");
        message.put("parts", parts);
        message.put("metadata", statusMetadata(state, error, node));
        return message;
    }

    /** The TaskStatus (wire JSON) of a contract state: its A2A state, and its message when it has one. */
    public static Map<String, Object> taskStatus(ContractState state, Words words, AccordError error, String node) {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("state", Contract.toA2AState(state).wire());
        Map<String, Object> message = statusMessage(state, words, error, node);
        if (message != null) {
            status.put("message", message);
        }
        return status;
    }

    // -- reading ---------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    private static Map<String, Object> entry(Object metadata) {
        if (metadata instanceof Map<?, ?> m && m.get(Keys.STATUS_META_KEY) instanceof Map<?, ?> found) {
            return (Map<String, Object>) found;
        }
        return null;
    }

    /**
     * The {@code dev.accord/status} entry of a status: from {@code metadata} (the task's or the
     * status update's), else from its message's (agents of 0.1 and 0.2 wrote it there only);
     * null when neither has one.
     */
    public static Map<String, Object> readStatusMeta(Map<String, ?> message, Map<String, ?> metadata) {
        Map<String, Object> found = entry(metadata);
        return found != null ? found : entry(message == null ? null : message.get("metadata"));
    }

    /** The waiting reason an entry names (contract 1.0's snake_case key when it has no other). */
    public static Object metaWaitingReason(Map<String, ?> meta) {
        if (meta == null) {
            return null;
        }
        Object reason = meta.get(Keys.WAITING_REASON_KEY);
        return reason != null ? reason : meta.get(Keys.WAITING_REASON_KEY_DEPRECATED);
    }

    /** The contract error of a status: metadata first, then its message's error DataPart; null when it names none. */
    @SuppressWarnings("unchecked")
    public static AccordError readError(Map<String, ?> message, Map<String, ?> metadata) {
        Map<String, Object> meta = readStatusMeta(message, metadata);
        if (meta != null && meta.get("error") instanceof Map<?, ?> e) {
            return AccordError.fromDict((Map<String, ?>) e);
        }
        if (message != null && message.get("parts") instanceof List<?> parts) {
            for (Object part : parts) {
                if (part instanceof Map<?, ?> p && p.get("data") instanceof Map<?, ?> data
                        && Keys.ERROR_DATA_KIND.equals(data.get("kind"))) {
                    return AccordError.fromDict((Map<String, ?>) data);
                }
            }
        }
        return null;
    }

    /**
     * The contract state of an A2A TaskStatus (wire JSON) with the metadata of its task or
     * status update (null for none), and its error when it failed (TASK_STATE_REJECTED reads as
     * failed and declined). A peer that is not Accord gets the contract's defaults; an unknown
     * A2A state reads as failed with CONTRACT_VIOLATION; a failure without a readable error
     * gets one of its code.
     */
    @SuppressWarnings("unchecked")
    public static Read readContractState(Map<String, ?> status, Map<String, ?> metadata) {
        Object raw = status.containsKey("state") ? status.get("state") : A2AState.TASK_STATE_SUBMITTED.wire();
        Map<String, ?> message = status.get("message") instanceof Map<?, ?> m ? (Map<String, ?>) m : null;
        Map<String, Object> meta = readStatusMeta(message, metadata);
        AccordError error = readError(message, metadata);
        Optional<A2AState> a2a = A2AState.fromWire(String.valueOf(raw));
        ContractState state;
        if (a2a.isPresent() && StatusTables.FROM_A2A.containsKey(a2a.get())) {
            state = Contract.fromA2AState(a2a.get(), metaWaitingReason(meta),
                    error == null ? null : error.code().wire());
        } else {
            // TASK_STATE_UNSPECIFIED or a name a foreign peer made up, as Python reads it.
            state = new ContractState(Status.FAILED, null, ErrorCode.CONTRACT_VIOLATION, false);
        }
        // Only a status an error qualifies (failed) has a code: fromA2AState gives it its default.
        if (state.errorCode() == null) {
            return new Read(state, null);
        }
        if (error == null || error.code() != state.errorCode()) {
            error = new AccordError(state.errorCode());
        }
        return new Read(state, error);
    }
}
