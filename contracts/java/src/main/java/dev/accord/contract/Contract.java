// Hand-written: the rules over the generated tables (package dev.accord.contract.generated).
// Every status, code, transition and mapping is data there; nothing here names one, so a
// regeneration (`make contracts-java`) is all a change of the Python contract needs.
package dev.accord.contract;

import dev.accord.contract.generated.A2AState;
import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.ErrorSpec;
import dev.accord.contract.generated.Errors;
import dev.accord.contract.generated.FromA2ARow;
import dev.accord.contract.generated.RetryClass;
import dev.accord.contract.generated.Status;
import dev.accord.contract.generated.StatusTables;
import dev.accord.contract.generated.ToA2ARow;
import dev.accord.contract.generated.WaitingReason;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** Statuses, transitions and codes as accord.contracts answers them. */
public final class Contract {
    private Contract() {}

    /** The code an unreadable or unknown value reads as (accord.contracts.errors.parse_code). */
    public static final ErrorCode FALLBACK_CODE = ErrorCode.INTERNAL;

    private static final Map<Integer, ErrorCode> JSONRPC_CODES = Errors.REGISTRY.values().stream()
            .collect(Collectors.toUnmodifiableMap(ErrorSpec::jsonrpcCode, ErrorSpec::code));

    /** True for a status a task never leaves. */
    public static boolean isTerminal(Status status) {
        return StatusTables.TERMINAL_STATUSES.contains(status);
    }

    /** True when the lifecycle lets a task go from {@code current} to {@code target} (STATUS-003). */
    public static boolean canTransition(Status current, Status target) {
        return StatusTables.TRANSITIONS.get(current).contains(target);
    }

    /** The registry row of a code: its retry class and wire forms. */
    public static ErrorSpec specOf(ErrorCode code) {
        return Errors.REGISTRY.get(code);
    }

    /** What a caller does with an error of this code: retry, replan or stop. */
    public static RetryClass retryClassOf(ErrorCode code) {
        return specOf(code).retry();
    }

    /** Read a code from a wire value; an unknown value becomes INTERNAL, never a crash. */
    public static ErrorCode parseCode(Object value) {
        return ErrorCode.fromWire(value).orElse(FALLBACK_CODE);
    }

    /** The contract code of a JSON-RPC error code (ours, A2A's or JSON-RPC's), if it has one. */
    public static Optional<ErrorCode> codeForJsonRpc(int code) {
        ErrorCode ours = JSONRPC_CODES.get(code);
        return Optional.ofNullable(ours != null ? ours : Errors.FOREIGN_JSONRPC_CODES.get(code));
    }

    /** The contract code of an HTTP error status that came without a contract body. */
    public static ErrorCode codeForHttpStatus(int status) {
        ErrorCode exact = Errors.HTTP_STATUS_CODES.get(status);
        if (exact != null) {
            return exact;
        }
        return Errors.HTTP_STATUS_CLASS_CODES.getOrDefault((status / 100) + "xx", FALLBACK_CODE);
    }

    /** The A2A TaskState that reports a contract state: the first row of TO_A2A that fits it. */
    public static A2AState toA2AState(ContractState state) {
        for (ToA2ARow row : StatusTables.TO_A2A) {
            if (row.status() != state.status()) {
                continue;
            }
            if (Boolean.TRUE.equals(row.declined()) != state.declined()) {
                continue;
            }
            if (row.waitingReason() != null && row.waitingReason() != state.waitingReason()) {
                continue;
            }
            String code = row.errorCode();
            if (code != null && !code.equals("*")) {  // "*": any code the rows before did not name
                if (state.errorCode() == null || !code.equals(state.errorCode().wire())) {
                    continue;
                }
            }
            return row.a2a();
        }
        throw new IllegalArgumentException("no A2A state reports status " + state.status());
    }

    /**
     * Read a peer's A2A TaskState (with the qualifiers its status metadata says, when it is an
     * Accord agent) as a contract state. A qualifier the state cannot carry, or an unknown one,
     * reads as the state's default, never as a crash.
     */
    public static ContractState fromA2AState(A2AState a2a, Object waitingReason, Object errorCode) {
        FromA2ARow row = StatusTables.FROM_A2A.get(a2a);
        WaitingReason reason = row.defaultWaitingReason() == null ? null
                : kept(WaitingReason.fromWire(waitingReason), row.keptWaitingReasons(),
                        row.defaultWaitingReason());
        ErrorCode code = row.defaultErrorCode() == null ? null
                : kept(ErrorCode.fromWire(errorCode), row.keptErrorCodes(), row.defaultErrorCode());
        return new ContractState(row.status(), reason, code, Boolean.TRUE.equals(row.declined()));
    }

    private static <T> T kept(Optional<T> said, List<T> keep, T fallback) {
        return said.filter(v -> keep != null && keep.contains(v)).orElse(fallback);
    }
}
