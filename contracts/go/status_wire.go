// Hand-written: what an Accord agent writes on the A2A wire beside the A2A state, and reading
// it back, exactly as Python's accord.protocol.a2a.wire does (docs/a2a-server.md, "Status
// metadata"). The `dev.accord/status` entry goes in the metadata of the TaskStatusUpdateEvent
// (an A2A server merges it into the Task's); a status has a message only when it says
// something to a person, and that message repeats the entry in its own metadata. Values are
// wire JSON (Object), which a2a-go's Metadata and DataPart hold as they are.

package contract

import (
	g "accord.dev/contract/generated"
)

// StatusSaid is what qualifies a status on the wire: its error (a failure's) and the node.
type StatusSaid struct {
	Error *AccordError
	Node  string
}

// StatusMeta is the value stored under `dev.accord/status` (camelCase keys, contract 2.0).
func StatusMeta(state State, said StatusSaid) Object {
	meta := Object{"status": string(state.Status), g.WaitingReasonKey: nil, "error": nil, "node": nil}
	if state.WaitingReason != "" {
		meta[g.WaitingReasonKey] = string(state.WaitingReason)
	}
	if said.Error != nil {
		meta["error"] = said.Error.ToDict()
	}
	if said.Node != "" {
		meta["node"] = said.Node
	}
	return meta
}

// StatusMetadata is the metadata of a status update (and of its task) carrying its status.
func StatusMetadata(state State, said StatusSaid) Object {
	return Object{g.StatusMetaKey: StatusMeta(state, said)}
}

// ErrorData is the DataPart body that repeats a failed task's error.
func ErrorData(err *AccordError) Object {
	data := err.ToDict()
	data["kind"] = g.ErrorDataKind
	return data
}

// DataPart is a DataPart of JSON data (A2A 1.0 wire JSON).
func DataPart(data Object) Object { return Object{"data": data, "mediaType": "application/json"} }

// StatusWords is what a status message says, besides the state it reports.
type StatusWords struct {
	StatusSaid
	TaskID    string
	ContextID string
	MessageID string // a fresh one per message (Python writes uuid4().hex)
	Text      string
	Data      Object   // nil: no data part
	Parts     []Object // parts before the text
}

// StatusMessage is the agent message of a status update (wire JSON): Parts, the text, the
// data, then the error DataPart (which a failure always has); nil when there is nothing to
// say (A2A 1.0 requires a message to have a part, and a filler would be shown as words).
func StatusMessage(state State, words StatusWords) Object {
	parts := []any{}
	for _, p := range words.Parts {
		parts = append(parts, p)
	}
	if words.Text != "" {
		parts = append(parts, Object{"text": words.Text})
	}
	if words.Data != nil {
		parts = append(parts, DataPart(words.Data))
	}
	if words.Error != nil {
		parts = append(parts, DataPart(ErrorData(words.Error)))
	}
	if len(parts) == 0 {
		return nil
	}
	return Object{
		"messageId": words.MessageID, "contextId": words.ContextID, "taskId": words.TaskID,
		"role": "ROLE_AGENT", "parts": parts, "metadata": StatusMetadata(state, words.StatusSaid),
	}
}

// TaskStatus is the TaskStatus (wire JSON) of a contract state: its A2A state, and its
// message when it has one.
func TaskStatus(state State, words StatusWords) (Object, error) {
	a2a, err := ToA2AState(state)
	if err != nil {
		return nil, err
	}
	status := Object{"state": string(a2a)}
	if message := StatusMessage(state, words); message != nil {
		status["message"] = message
	}
	return status, nil
}

// -- reading -----------------------------------------------------------------------------

func entry(metadata any) Object {
	if m, ok := asObject(metadata); ok {
		if found, ok := asObject(m[g.StatusMetaKey]); ok {
			return found
		}
	}
	return nil
}

// ReadStatusMeta is the `dev.accord/status` entry of a status: from metadata (the task's or
// the status update's), else from its message's (agents of 0.1 and 0.2 wrote it there only).
func ReadStatusMeta(message Object, metadata Object) Object {
	if found := entry(metadata); found != nil {
		return found
	}
	return entry(message["metadata"])
}

// MetaWaitingReason is the waiting reason an entry names (contract 1.0's snake_case key when
// it has no other).
func MetaWaitingReason(meta Object) any {
	if reason, ok := meta[g.WaitingReasonKey]; ok && reason != nil {
		return reason
	}
	return meta[g.WaitingReasonKeyDeprecated]
}

// ReadError is the contract error of a status: metadata first, then its message's error
// DataPart; nil when it names none.
func ReadError(message Object, metadata Object) *AccordError {
	if meta := ReadStatusMeta(message, metadata); meta != nil {
		if e, ok := asObject(meta["error"]); ok {
			return ErrorFromDict(e)
		}
	}
	parts, _ := message["parts"].([]any)
	for _, part := range parts {
		p, _ := asObject(part)
		if data, ok := asObject(p["data"]); ok && data["kind"] == g.ErrorDataKind {
			return ErrorFromDict(data)
		}
	}
	return nil
}

// ReadContractState is the contract state of an A2A TaskStatus (wire JSON) with the metadata
// of its task or status update, and its error when it failed (TASK_STATE_REJECTED reads as
// failed and declined). A peer that is not Accord gets the contract's defaults; an unknown A2A
// state reads as failed with CONTRACT_VIOLATION; a failure without a readable error gets one
// of its code.
func ReadContractState(status Object, metadata Object) (State, *AccordError) {
	raw, present := status["state"]
	if !present {
		raw = string(g.A2AStateSubmitted)
	}
	message, _ := asObject(status["message"])
	meta := ReadStatusMeta(message, metadata)
	err := ReadError(message, metadata)
	var code any
	if err != nil {
		code = string(err.Code)
	}
	name, _ := raw.(string)
	state, unknown := FromA2AState(g.A2AState(name), MetaWaitingReason(meta), code)
	if unknown != nil {
		// TASK_STATE_UNSPECIFIED or a name a foreign peer made up, as Python reads it.
		state = State{Status: g.StatusFailed, ErrorCode: g.ErrorCodeContractViolation}
	}
	// Only a status an error qualifies (failed) has a code: FromA2A gives it its default.
	if state.ErrorCode == "" {
		return state, nil
	}
	if err == nil || err.Code != state.ErrorCode {
		err = NewError(state.ErrorCode, "", nil)
	}
	return state, err
}
