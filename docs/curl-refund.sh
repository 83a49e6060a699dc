#!/bin/sh
# Ask policy-check whether a refund is allowed, with nothing but curl (A2A 1.0, JSON-RPC).
#   ACCORD_URL    the agent (default http://127.0.0.1:8701)
#   ACCORD_TOKEN  a bearer token (see docs/curl.md for a development token)
# The A2A-Version header is required: without it the server speaks protocol 0.3.
curl -sS "${ACCORD_URL:-http://127.0.0.1:8701}/" \
  -H 'Content-Type: application/json' \
  -H 'A2A-Version: 1.0' \
  -H "Authorization: Bearer ${ACCORD_TOKEN}" \
  -d '{
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {
      "message": {
        "messageId": "curl-1",
        "role": "ROLE_USER",
        "parts": [{"data": {
          "order": {"order_id": "O-1001", "total_cents": 5999, "refunded_cents": 0,
                    "refundable_cents": 5999, "final_sale": false,
                    "days_since_delivery": 5, "status": "delivered"},
          "reason": "wrong_size"
        }}]
      }
    }
  }'
