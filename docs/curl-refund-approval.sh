#!/bin/sh
# The whole refund conversation with nothing but curl (A2A 1.0 over JSON-RPC), approval included:
#   1. the customer asks for a refund (skill refund.request); a large refund waits for an approver
#   2. an approver approves it: a NEW message with skill refund.approve and {task_id, decision, note}
#   3. the customer reads their task again: completed, decision "refunded", with a receipt
# Each step prints the JSON-RPC answer on one line of standard output.
#
#   ACCORD_URL             the orchestrator (default http://127.0.0.1:8700)
#   ACCORD_TOKEN           the customer's bearer token (docs/curl.md shows how to mint one)
#   ACCORD_APPROVER_TOKEN  a bearer token with the approver role, of someone other than the customer
#   ACCORD_REQUEST         what the customer says, without double quotes
#                          (default: the laptop of order O-1004, which belongs to customer C-03)
#
# The A2A-Version header is required: without it the server speaks protocol 0.3 and answers
# these methods with error -32009.
set -eu
URL="${ACCORD_URL:-http://127.0.0.1:8700}"
REQUEST="${ACCORD_REQUEST:-I changed my mind about the laptop, refund order O-1004}"

rpc() { # rpc TOKEN BODY
  curl -sS --fail-with-body "$URL/" \
    -H 'Content-Type: application/json' \
    -H 'A2A-Version: 1.0' \
    -H "Authorization: Bearer $1" \
    -d "$2"
  echo
}

# 1. The customer asks. The answer is the task, in TASK_STATE_INPUT_REQUIRED with the contract
#    status {"status": "waiting", "waitingReason": "approval"} in its status message metadata.
ASKED=$(rpc "$ACCORD_TOKEN" '{
  "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
  "params": {"message": {
    "messageId": "curl-ask-'"$$"'", "role": "ROLE_USER",
    "metadata": {"skill": "refund.request"},
    "parts": [{"text": "'"$REQUEST"'"}]
  }}
}')
echo "$ASKED"
# The task id is the first "id" string of the answer (the JSON-RPC id is a number).
TASK_ID=$(printf '%s' "$ASKED" | grep -o '"id": *"[^"]*"' | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/')
if [ -z "$TASK_ID" ]; then
  echo "no task in the answer" >&2
  exit 1
fi

# 2. An approver decides. The customer's own token would get PERMISSION_DENIED here.
rpc "$ACCORD_APPROVER_TOKEN" '{
  "jsonrpc": "2.0", "id": 2, "method": "SendMessage",
  "params": {"message": {
    "messageId": "curl-approve-'"$$"'", "role": "ROLE_USER",
    "metadata": {"skill": "refund.approve"},
    "parts": [{"data": {"task_id": "'"$TASK_ID"'", "decision": "approve", "note": "verified by phone"}}]
  }}
}'

# 3. The customer's task now holds the outcome: its artifact's DataPart has the decision and
#    the receipt (amounts in integer cents; A2A carries numbers as doubles, e.g. 129900.0).
rpc "$ACCORD_TOKEN" '{"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "'"$TASK_ID"'"}}'
