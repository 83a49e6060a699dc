// Hand-written: a contract state, the value the lifecycle rules (Contract) read and answer.
package dev.accord.contract;

import dev.accord.contract.generated.ErrorCode;
import dev.accord.contract.generated.Status;
import dev.accord.contract.generated.WaitingReason;

/**
 * A contract status with what qualifies it: why it waits, or the code of why it ended.
 *
 * @param waitingReason null unless the task waits
 * @param errorCode null unless the task failed
 * @param declined a failure that is the agent saying no (A2A REJECTED on the wire)
 */
public record ContractState(
        Status status, WaitingReason waitingReason, ErrorCode errorCode, boolean declined) {

    public static ContractState of(Status status) {
        return new ContractState(status, null, null, false);
    }
}
