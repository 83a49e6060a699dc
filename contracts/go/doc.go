// Package contract is the Accord contract for Go (docs/contracts-go.md): the generated tables
// in accord.dev/contract/generated (statuses and transitions, the error registry with retry
// classes and wire forms, keys, the envelope and contract schemas), and here the hand-written
// rest a Go member needs to serve and call Accord services: the lifecycle's rules over those
// tables, AccordError and its wire forms (JSON-RPC error with ErrorInfo, REST, HTTP, MCP tool
// result with `_meta`), the status metadata beside an A2A state, and the delegation envelope
// (parse, check, child envelope, budget of a turn). Each writes what Accord's Python server
// writes; tests/contracts/test_go_contract.py holds them to it.
package contract
