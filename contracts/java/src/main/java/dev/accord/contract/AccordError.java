// Hand-written: the one error type of the contract (accord.contracts.errors.AccordError).
package dev.accord.contract;

import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Keys;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A code from the registry, a message safe to show a remote caller (the code's meaning when
 * none is given) and a small JSON object of details for machines. A handler throws it; the
 * server writes it in the wire form of its protocol ({@link #toDict}, {@link #toolErrorMeta}).
 */
public class AccordError extends RuntimeException {
    private final ErrorCode code;
    private final Map<String, Object> details;

    public AccordError(ErrorCode code, String message, Map<String, Object> details) {
        super(message != null && !message.isEmpty() ? message : Contract.specOf(code).meaning());
        this.code = code;
        // Copied in order, nulls kept: Python keeps both, and a peer's details may hold a null
        // (Map.copyOf refuses one, which made reading such an error crash).
        this.details = details == null ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(details));
    }

    public AccordError(ErrorCode code, String message) {
        this(code, message, null);
    }

    public AccordError(ErrorCode code) {
        this(code, null, null);
    }

    public ErrorCode code() {
        return code;
    }

    public Map<String, Object> details() {
        return details;
    }

    /** The neutral form: {code, retry, message, details} (MCP _meta, A2A metadata, logs). */
    public Map<String, Object> toDict() {
        Map<String, Object> dict = new LinkedHashMap<>();
        dict.put("code", code.wire());
        dict.put("retry", Contract.retryClassOf(code).wire());
        dict.put("message", getMessage());
        dict.put("details", details);
        return dict;
    }

    /** A tool error's {@code _meta}: the neutral form under dev.accord/error (ERR-005). */
    public Map<String, Object> toolErrorMeta() {
        return Map.of(Keys.MCP_ERROR_META_KEY, toDict());
    }

    /** Read the neutral form back; an unknown code is INTERNAL, never a crash. */
    @SuppressWarnings("unchecked")
    public static AccordError fromDict(Map<String, ?> data) {
        Object message = data.get("message");
        Object details = data.get("details");
        return new AccordError(
                Contract.parseCode(data.get("code")),
                message instanceof String s ? s : null,
                details instanceof Map<?, ?> m ? (Map<String, Object>) m : null);
    }
}
