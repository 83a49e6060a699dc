#!/usr/bin/env bash
# `make java-member`: build the Java commerce server (one `mvn package` of tools/java: the
# contract package and the member), start it beside payments (Python, `accord serve`) in a fresh
# data directory, run the contract test kit against it with the kit's own token and the three
# tool contracts, print the result and stop everything it started.
# BIN: the workspace's .venv/bin. Ports: PAYMENTS_PORT, COMMERCE_PORT, by default BASE_PORT
# (18750) and the one after it. JAR=path skips the build (a jar built once per CI run).
# Arguments go to `accord contract-test` (--junit F).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
BIN="${BIN:?set BIN to the workspace .venv/bin}"
BASE_PORT="${BASE_PORT:-18750}"
PAYMENTS_PORT="${PAYMENTS_PORT:-$BASE_PORT}"
COMMERCE_PORT="${COMMERCE_PORT:-$((BASE_PORT + 1))}"
# A run of its own: no ACCORD_* setting of the caller's (a test session's keys or trust table)
# reaches these services; the shipped development trust table and fresh keys are used.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^ACCORD_' || true)
export ACCORD_DATA_DIR="$(mktemp -d)"
export ACCORD_KEYS_DIR="$ACCORD_DATA_DIR/keys"
export ACCORD_PAYMENTS_URL="http://127.0.0.1:$PAYMENTS_PORT"
pids=()
cleanup() {  # stop what it started; keep the logs of a run that failed
  local status=$?
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  if [ "$status" -eq 0 ]; then rm -rf "$ACCORD_DATA_DIR"; else echo "logs: $ACCORD_DATA_DIR" >&2; fi
}
trap cleanup EXIT

wait_up() {  # URL: poll until it answers, 60 s at most
  for _ in $(seq 600); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no answer from $1 (logs: $ACCORD_DATA_DIR/*.log)" >&2; return 1
}

if [ -z "${JAR:-}" ]; then
  (cd "$HERE/.." && mvn -q -B package -DskipTests)
  JAR="$HERE/target/commerce-java.jar"
fi

setsid "$BIN/accord" serve payments --port "$PAYMENTS_PORT" \
  >"$ACCORD_DATA_DIR/payments.log" 2>&1 & pids+=($!)
wait_up "$ACCORD_PAYMENTS_URL/healthz"

# commerce's own key, which signs its token for refunds.list (payments trusts svc:commerce by
# ACCORD_KEYS_DIR/commerce/jwks.json); the kit's key, which commerce trusts by the same table.
"$BIN/accord" keys rotate commerce >/dev/null
"$BIN/accord" keys rotate kit >/dev/null
TRUST="$ROOT/agents/accord/agents/refund/trust.yaml"
PORT=$COMMERCE_PORT ACCORD_SERVICE_TRUST="$TRUST" \
  setsid java -jar "$JAR" >"$ACCORD_DATA_DIR/commerce-java.log" 2>&1 & pids+=($!)
wait_up "http://127.0.0.1:$COMMERCE_PORT/healthz"

TOOLS="$ROOT/contracts/refund/accord/refund_contracts/specs/tools"
"$BIN/accord" contract-test "http://127.0.0.1:$COMMERCE_PORT/mcp" \
  --token "$("$BIN/accord" keys token kit)" \
  --contract "$TOOLS/orders.lookup.yaml" --contract "$TOOLS/customers.history.yaml" \
  --contract "$TOOLS/orders.customer_history.yaml" "$@"
