// Hand-written: the lifecycle's rules over the generated tables (generated/status.go). Every
// status, transition and mapping is data there; nothing here names a status.

package contract

import (
	"fmt"
	"slices"

	g "accord.dev/contract/generated"
)

// State is a contract status with what qualifies it: why it waits, or the code of why it
// ended ("" when it has none), and whether a failure is the agent saying no (A2A REJECTED).
type State struct {
	Status        g.Status
	WaitingReason g.WaitingReason
	ErrorCode     g.ErrorCode
	Declined      bool
}

// IsTerminal reports whether a task never leaves status.
func IsTerminal(status g.Status) bool { return slices.Contains(g.TerminalStatuses, status) }

// CanTransition reports whether the lifecycle lets a task go from current to target
// (STATUS-003).
func CanTransition(current, target g.Status) bool {
	return slices.Contains(g.Transitions[current], target)
}

// ToA2AState is the A2A TaskState that reports a contract state: the first row of ToA2A
// that fits it.
func ToA2AState(state State) (g.A2AState, error) {
	for _, row := range g.ToA2A {
		if row.Status != state.Status || row.Declined != state.Declined {
			continue
		}
		if row.WaitingReason != "" && row.WaitingReason != state.WaitingReason {
			continue
		}
		if row.ErrorCode != "" && row.ErrorCode != "*" && g.ErrorCode(row.ErrorCode) != state.ErrorCode {
			continue
		}
		return row.A2A, nil
	}
	return "", fmt.Errorf("no A2A state reports status %q", state.Status)
}

// FromA2AState reads a peer's A2A TaskState (with the waiting reason and error code its
// status metadata names, when it is an Accord agent) as a contract state. A qualifier the
// state cannot carry, or an unknown one, reads as the state's default, never as a crash.
func FromA2AState(a2a g.A2AState, waitingReason, errorCode any) (State, error) {
	row, ok := g.FromA2A[a2a]
	if !ok {
		return State{}, fmt.Errorf("unknown A2A state %q", a2a)
	}
	state := State{Status: row.Status, Declined: row.Declined}
	if row.DefaultWaitingReason != "" {
		state.WaitingReason = row.DefaultWaitingReason
		if reason, ok := waitingReason.(string); ok && slices.Contains(row.KeptWaitingReasons, g.WaitingReason(reason)) {
			state.WaitingReason = g.WaitingReason(reason)
		}
	}
	if row.DefaultErrorCode != "" {
		state.ErrorCode = row.DefaultErrorCode
		if code, ok := errorCode.(string); ok && slices.Contains(row.KeptErrorCodes, g.ErrorCode(code)) {
			state.ErrorCode = g.ErrorCode(code)
		}
	}
	return state, nil
}
