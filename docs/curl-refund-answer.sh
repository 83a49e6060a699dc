#!/bin/sh
# A refund whose question is answered in the same task, with nothing but curl (A2A 1.0 over
# JSON-RPC):
#   1. the customer asks for a refund of a damaged item; the task waits for their evidence:
#      TASK_STATE_INPUT_REQUIRED, {"status": "waiting", "waitingReason": "input"} in its
#      metadata, and the question in its status message
#   2. the customer answers with a message naming that task (taskId and contextId): the same
#      task continues and completes, decision "refunded", rule "damage_with_evidence"
# Each step prints the JSON-RPC answer on one line of standard output.
#
#   ACCORD_URL      the orchestrator (default http://127.0.0.1:8700)
#   ACCORD_TOKEN    the customer's bearer token (docs/curl.md shows how to mint one)
#   ACCORD_REQUEST  what the customer says, without double quotes
#                   (default: the mug of order O-1005, which belongs to customer C-01)
#   ACCORD_ANSWER   the answer to the question, without double quotes
#
# The A2A-Version header is required: without it the server speaks protocol 0.3 and answers
# these methods with error -32009.
set -eu
URL="${ACCORD_URL:-http://127.0.0.1:8700}"
REQUEST="${ACCORD_REQUEST:-my mug arrived broken, order O-1005}"
ANSWER="${ACCORD_ANSWER:-the handle snapped off, photo IMG_2291.jpg}"

rpc() { # rpc BODY
  curl -sS --fail-with-body "$URL/" \
    -H 'Content-Type: application/json' \
    -H 'A2A-Version: 1.0' \
    -H "Authorization: Bearer $ACCORD_TOKEN" \
    -d "$1"
  echo
}

# 1. The customer asks; the answer is the task, waiting for the customer's input.
ASKED=$(rpc '{
  "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
  "params": {"message": {
    "messageId": "curl-claim-'"$$"'", "role": "ROLE_USER",
    "metadata": {"skill": "refund.request"},
    "parts": [{"text": "'"$REQUEST"'"}]
  }}
}')
echo "$ASKED"
# The task id is the first "id" string of the answer (the JSON-RPC id is a number).
TASK_ID=$(printf '%s' "$ASKED" | grep -o '"id": *"[^"]*"' | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/')
CONTEXT_ID=$(printf '%s' "$ASKED" | grep -o '"contextId": *"[^"]*"' | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/')
if [ -z "$TASK_ID" ] || [ -z "$CONTEXT_ID" ]; then
  echo "no task in the answer" >&2
  exit 1
fi

# 2. The answer names the task: the same task continues (no skill: the task already has one).
rpc '{
  "jsonrpc": "2.0", "id": 2, "method": "SendMessage",
  "params": {"message": {
    "messageId": "curl-answer-'"$$"'", "role": "ROLE_USER",
    "taskId": "'"$TASK_ID"'", "contextId": "'"$CONTEXT_ID"'",
    "parts": [{"text": "'"$ANSWER"'"}]
  }}
}'
