"""An MCP session driven by the reference Python SDK's client (PyPI `mcp`), for tests/mcp.rs.

Usage: python client.py PLAN.json. The plan names the server's command and arguments, the
client's mode ("auto": the newest revision the server offers, 2026-07-28 found with
server/discover; "legacy": the initialize handshake) and the tool calls to make; the script
prints one JSON document: the revision spoken, the server's description, the tools listed,
and each call's result (or the JSON-RPC error it got). The SDK checks each structured result
against the tool's output schema; a mismatch is recorded as clientError.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


async def session(plan):
    params = StdioServerParameters(
        command=plan["command"], args=plan["args"], env=plan.get("env"), cwd=plan.get("cwd")
    )
    out = {"calls": []}
    async with Client(params, mode=plan["mode"]) as c:
        out["protocolVersion"] = str(c.protocol_version)
        out["serverInfo"] = c.server_info.model_dump(mode="json", by_alias=True)
        out["instructions"] = c.instructions
        listed = await c.list_tools()
        out["tools"] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
        for call in plan["calls"]:
            try:
                r = await c.call_tool(call["tool"], call.get("arguments", {}))
                out["calls"].append({
                    "isError": bool(r.is_error),
                    "structured": r.structured_content,
                    "texts": [b.text for b in r.content if getattr(b, "type", "") == "text"],
                })
            except MCPError as e:
                out["calls"].append({"protocolError": {"code": e.code, "message": e.message}})
            except RuntimeError as e:
                out["calls"].append({"clientError": str(e)})
    return out


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    print(json.dumps(asyncio.run(session(plan))))


if __name__ == "__main__":
    main()
