#!/usr/bin/env bash
# `make ts-tools`: build the TypeScript tickets tool server, start it in a fresh data directory
# with a trust table of its own (the kit's and the orchestrator's keys), run the contract test
# kit against it with its contracts and probes, print the result and stop what it started.
# BIN: the workspace's .venv/bin. TICKETS_PORT (default 18750). Arguments go to
# `accord contract-test` (--junit F). KEEP_LOGS=1 keeps the data directory.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:?set BIN to the workspace .venv/bin}"
PORT="${TICKETS_PORT:-18750}"
# A run of its own: no ACCORD_* setting of the caller's reaches the kit or the keys it signs.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^ACCORD_' || true)
export ACCORD_DATA_DIR="$(mktemp -d)"
export ACCORD_KEYS_DIR="$ACCORD_DATA_DIR/keys"
pids=()
cleanup() {  # stop what it started; keep the logs of a run that failed
  local status=$?
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  if [ "$status" -eq 0 ] && [ -z "${KEEP_LOGS:-}" ]; then rm -rf "$ACCORD_DATA_DIR"; else echo "logs: $ACCORD_DATA_DIR" >&2; fi
}
trap cleanup EXIT

(cd "$HERE/../../../contracts/ts" && npm run --silent build)
(cd "$HERE" && npm run --silent build)

# The keys of the two services the server trusts: the kit (both tools) and the orchestrator
# (tickets.get only; its token below asks for another grant, so it may call neither).
"$BIN/accord" keys rotate kit >/dev/null
"$BIN/accord" keys rotate orchestrator >/dev/null
TRUST="$ACCORD_DATA_DIR/trust.json"
cat >"$TRUST" <<TRUST
{"services": {
  "kit": {"jwks": "$ACCORD_KEYS_DIR/kit/jwks.json", "grants": ["tickets.open", "tickets.get"]},
  "orchestrator": {"jwks": "$ACCORD_KEYS_DIR/orchestrator/jwks.json", "grants": ["tickets.get"]}
}}
TRUST
PORT=$PORT TICKETS_TRUST="$TRUST" TICKETS_DB="$ACCORD_DATA_DIR/tickets.db" \
  setsid node "$HERE/dist/server.js" >"$ACCORD_DATA_DIR/tickets-ts.log" 2>&1 & pids+=($!)
for _ in $(seq 300); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" || { echo "tickets did not start" >&2; exit 1; }

"$BIN/accord" contract-test "http://127.0.0.1:$PORT/mcp" \
  --contract "$HERE/contracts/tickets.open.yaml" --contract "$HERE/contracts/tickets.get.yaml" \
  --probe "$HERE/probes.json" \
  --token "$("$BIN/accord" keys token kit)" \
  --other-token "$("$BIN/accord" keys token orchestrator --scope refund.policy)" "$@"
