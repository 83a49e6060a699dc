#!/usr/bin/env bash
# `make go-member`: build the Go policy-check (go build, module download included), start it
# beside commerce and payments (Python, `accord serve`) in a fresh data directory, run the
# contract test kit against it with the kit's own token, print the result and stop everything
# it started.
# BIN: the workspace's .venv/bin. GO: the go command (default: on PATH, else /usr/local/go).
# Ports: COMMERCE_PORT, PAYMENTS_PORT, POLICY_PORT, by default BASE_PORT (18750) and the two
# after it. Arguments go to `accord contract-test` (--junit F).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:?set BIN to the workspace .venv/bin}"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
BASE_PORT="${BASE_PORT:-18750}"
COMMERCE_PORT="${COMMERCE_PORT:-$BASE_PORT}"
PAYMENTS_PORT="${PAYMENTS_PORT:-$((BASE_PORT + 1))}"
POLICY_PORT="${POLICY_PORT:-$((BASE_PORT + 2))}"
# A run of its own: no ACCORD_* setting of the caller's (a test session's keys or trust table)
# reaches these services; the shipped development trust table and fresh keys are used.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^ACCORD_' || true)
export ACCORD_DATA_DIR="$(mktemp -d)"
export ACCORD_KEYS_DIR="$ACCORD_DATA_DIR/keys"
export ACCORD_COMMERCE_URL="http://127.0.0.1:$COMMERCE_PORT"
export ACCORD_PAYMENTS_URL="http://127.0.0.1:$PAYMENTS_PORT"
pids=()
cleanup() {  # stop what it started; keep the logs of a run that failed
  local status=$?
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  if [ "$status" -eq 0 ]; then rm -rf "$ACCORD_DATA_DIR"; else echo "logs: $ACCORD_DATA_DIR" >&2; fi
}
trap cleanup EXIT

wait_up() {  # URL: poll until it answers, 30 s at most
  for _ in $(seq 300); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no answer from $1 (logs: $ACCORD_DATA_DIR/*.log)" >&2; return 1
}

# The build downloads the pinned modules (go.sum) through the Go module proxy when the module
# cache lacks them.
(cd "$HERE" && "$GO" build -o "$ACCORD_DATA_DIR/policy-check" .)
"$BIN/python" "$HERE/scripts/export_contract.py" "$ACCORD_DATA_DIR/policy-check.json"

# commerce trusts the member by the key set it publishes (its own key, made on its first
# start), and payments trusts commerce: the trust entries this run needs (docs/service-keys.md).
export ACCORD_SERVICE_TRUST="$ACCORD_DATA_DIR/trust.yaml"
cat >"$ACCORD_SERVICE_TRUST" <<TRUST
services:
  policy:
    jwks: http://127.0.0.1:$POLICY_PORT/.well-known/jwks.json
    grants: [orders.lookup]
    tenants: ["*"]
  commerce:
    grants: [refunds.list]
    tenants: ["*"]
TRUST
setsid "$BIN/accord" serve payments --port "$PAYMENTS_PORT" \
  >"$ACCORD_DATA_DIR/payments.log" 2>&1 & pids+=($!)
setsid "$BIN/accord" serve commerce --port "$COMMERCE_PORT" \
  >"$ACCORD_DATA_DIR/commerce.log" 2>&1 & pids+=($!)
wait_up "$ACCORD_PAYMENTS_URL/healthz"; wait_up "$ACCORD_COMMERCE_URL/healthz"

# The kit's and the orchestrator's keys, which this agent trusts for refund.policy (the
# orchestrator's is the second credential below).
"$BIN/accord" keys rotate kit >/dev/null
"$BIN/accord" keys rotate orchestrator >/dev/null
KEYS="$ACCORD_KEYS_DIR"
PORT=$POLICY_PORT POLICY_CONTRACT="$ACCORD_DATA_DIR/policy-check.json" \
  POLICY_TRUST="kit=$KEYS/kit/jwks.json,orchestrator=$KEYS/orchestrator/jwks.json" \
  COMMERCE_URL="$ACCORD_COMMERCE_URL/mcp" POLICY_KEY_FILE="$ACCORD_DATA_DIR/policy-go/key.json" \
  setsid "$ACCORD_DATA_DIR/policy-check" >"$ACCORD_DATA_DIR/policy-go.log" 2>&1 & pids+=($!)
wait_up "http://127.0.0.1:$POLICY_PORT/healthz"

# The second credential: another trusted service whose token asks for a grant other than
# refund.policy, which the skill's access must refuse before any task (AGENT-009), and which
# must not see the kit's tasks (AGENT-004).
"$BIN/accord" contract-test "http://127.0.0.1:$POLICY_PORT" \
  --token "$("$BIN/accord" keys token kit)" \
  --other-token "$("$BIN/accord" keys token orchestrator --scope refund.risk)" "$@"
