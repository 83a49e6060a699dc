#!/usr/bin/env bash
# `make ts-member`: build the TypeScript risk-check, start it beside commerce and payments
# (Python, `accord serve`) in a fresh data directory, run the contract test kit against it
# with the kit's own token, print the result and stop everything it started.
# BIN: the workspace's .venv/bin. Ports: COMMERCE_PORT, PAYMENTS_PORT, RISK_PORT, by default
# BASE_PORT (18740) and the two after it. Arguments go to `accord contract-test` (--junit F).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:?set BIN to the workspace .venv/bin}"
BASE_PORT="${BASE_PORT:-18740}"
COMMERCE_PORT="${COMMERCE_PORT:-$BASE_PORT}"
PAYMENTS_PORT="${PAYMENTS_PORT:-$((BASE_PORT + 1))}"
RISK_PORT="${RISK_PORT:-$((BASE_PORT + 2))}"
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
  if [ "$status" -eq 0 ] && [ -z "${KEEP_LOGS:-}" ]; then rm -rf "$ACCORD_DATA_DIR"; else echo "logs: $ACCORD_DATA_DIR" >&2; fi
}
trap cleanup EXIT

wait_up() {  # URL: poll until it answers, 30 s at most
  for _ in $(seq 300); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no answer from $1 (logs: $ACCORD_DATA_DIR/*.log)" >&2; return 1
}

# The packages are `make npm`'s; this builds @accord/contract (the member imports its dist)
# and the member.
(cd "$HERE/../../../contracts/ts" && npm run --silent build)
(cd "$HERE" && npm run --silent build)
"$BIN/python" "$HERE/scripts/export_contract.py" "$ACCORD_DATA_DIR/risk-check.json"

# commerce trusts the member by the key set it publishes (its own key, made on its first
# start), and payments trusts commerce (orders.customer_history reads refunds.list): the trust
# entries this run needs (docs/service-keys.md).
export ACCORD_SERVICE_TRUST="$ACCORD_DATA_DIR/trust.yaml"
cat >"$ACCORD_SERVICE_TRUST" <<TRUST
services:
  risk:
    jwks: http://127.0.0.1:$RISK_PORT/.well-known/jwks.json
    grants: [orders.customer_history, orders.lookup]
  commerce:
    grants: [refunds.list]
TRUST
setsid "$BIN/accord" serve payments --port "$PAYMENTS_PORT" \
  >"$ACCORD_DATA_DIR/payments.log" 2>&1 & pids+=($!)
setsid "$BIN/accord" serve commerce --port "$COMMERCE_PORT" \
  >"$ACCORD_DATA_DIR/commerce.log" 2>&1 & pids+=($!)
wait_up "$ACCORD_PAYMENTS_URL/healthz"; wait_up "$ACCORD_COMMERCE_URL/healthz"

# The kit's and the orchestrator's keys, which this agent trusts for refund.risk (the
# orchestrator's is the second credential below).
"$BIN/accord" keys rotate kit >/dev/null
"$BIN/accord" keys rotate orchestrator >/dev/null
KEYS="$ACCORD_KEYS_DIR"
PORT=$RISK_PORT RISK_CONTRACT="$ACCORD_DATA_DIR/risk-check.json" \
  RISK_TRUST="kit=$KEYS/kit/jwks.json,orchestrator=$KEYS/orchestrator/jwks.json" \
  COMMERCE_URL="$ACCORD_COMMERCE_URL/mcp" RISK_KEY_FILE="$ACCORD_DATA_DIR/risk-ts/key.json" \
  setsid node "$HERE/dist/server.js" >"$ACCORD_DATA_DIR/risk-ts.log" 2>&1 & pids+=($!)
wait_up "http://127.0.0.1:$RISK_PORT/healthz"

# The second credential: another trusted service whose token asks for a grant other than
# refund.risk, which the skill's access must refuse before any task (AGENT-009), and which
# must not see the kit's tasks (AGENT-004).
"$BIN/accord" contract-test "http://127.0.0.1:$RISK_PORT" \
  --token "$("$BIN/accord" keys token kit)" \
  --other-token "$("$BIN/accord" keys token orchestrator --scope refund.policy)" "$@"
