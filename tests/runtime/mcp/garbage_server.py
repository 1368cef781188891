"""A raw JSON-RPC stdio process that speaks the MCP handshake but answers calls with garbage.

It is not built on the SDK on purpose: SDK servers validate their own results, so only a raw
process can send the client a result that breaks the protocol.
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "junk", "inputSchema": {"type": "object"}},
    {
        "name": "count",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    },
]
RESULTS = {
    "junk": {"content": "not a list", "isError": "maybe"},
    "count": {"content": [], "structuredContent": {"n": "many"}},
}


def reply(message_id: object, result: object = None, error: object = None) -> None:
    body = {"jsonrpc": "2.0", "id": message_id}
    body.update({"error": error} if error is not None else {"result": result})
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, message_id = message.get("method"), message.get("id")
    if message_id is None:
        continue
    if method == "initialize":
        reply(
            message_id,
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "garbage", "version": "0"},
            },
        )
    elif method == "tools/list":
        reply(message_id, {"tools": TOOLS})
    elif method == "tools/call":
        reply(message_id, RESULTS[message["params"]["name"]])
    else:
        reply(message_id, error={"code": -32601, "message": f"method not found: {method}"})
