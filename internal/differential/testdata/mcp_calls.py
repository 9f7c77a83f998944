"""Drives `osb mcp` over stdio with the official Python MCP client, for the
differential suite: stdin holds one tool call per line, {"tool": NAME,
"args": {...}}; a string "$sid" in the arguments is the sandbox id the last
sandbox_create answered. Prints one JSON line per call: whether it failed,
its structured result and its text, as an agent sees them.

  python mcp_calls.py COMMAND [ARG...] < calls
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def substitute(value, sid):
    if value == "$sid":
        return sid
    if isinstance(value, dict):
        return {k: substitute(v, sid) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, sid) for v in value]
    return value


async def main():
    calls = [json.loads(line) for line in sys.stdin if line.strip()]
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env=dict(os.environ))
    sid = None
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            for call in calls:
                res = await session.call_tool(call["tool"], substitute(call.get("args", {}), sid))
                text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
                out = {"tool": call["tool"], "is_error": bool(res.is_error),
                       "structured": res.structured_content, "text": text}
                # The text is most often the structured result again, as JSON:
                # said once, a difference shows once.
                try:
                    if res.structured_content is not None and json.loads(text) == res.structured_content:
                        out["text"] = "(the structured result)"
                except ValueError:
                    pass
                if call["tool"] == "sandbox_create" and not res.is_error:
                    sid = (res.structured_content or {}).get("sandbox_id")
                print(json.dumps(out, sort_keys=True), flush=True)


asyncio.run(main())
