"""Drives an MCP server with the official Python MCP client, for the Go
test in internal/e2e/mcp_test.go. Each mode prints one JSON object on
stdout; the Go test makes every assertion.

  tools COMMAND [ARG...]           the tools a stdio server lists
  workflow-stdio COMMAND [ARG...]  create, run, write, read, kill over stdio
  workflow-http URL TOKEN          the same over streamable HTTP
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from opensandbox.models.execd import Execution


def stdio(argv):
    # The server gets the test's environment (osb's connection settings).
    import os
    return stdio_client(StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ)))


async def list_tools(session):
    tools = (await session.list_tools()).tools
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)["inputSchema"] for t in tools}


async def call(session, name, args):
    res = await session.call_tool(name, args)
    text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
    out = {"is_error": bool(res.is_error), "structured": res.structured_content, "text": text}
    if name == "command_run" and not res.is_error:
        # What a program reading the result with the official SDK's model sees.
        out["sdk_text"] = Execution.model_validate(res.structured_content).text
    return out


async def workflow(session):
    steps = {}
    created = await call(session, "sandbox_create", {"image": "python:3.11"})
    steps["create"] = created
    sid = (created["structured"] or {}).get("sandbox_id")
    steps["run"] = await call(session, "command_run", {"sandbox_id": sid, "command": "echo from-python; echo second; exit 4"})
    steps["write"] = await call(session, "file_write", {"sandbox_id": sid, "path": "/workspace/py.txt", "content": "written by python\n"})
    steps["read"] = await call(session, "file_read", {"sandbox_id": sid, "path": "/workspace/py.txt"})
    steps["unregistered"] = await call(session, "command_run", {"sandbox_id": "not-registered", "command": "true"})
    steps["kill"] = await call(session, "sandbox_kill", {"sandbox_id": sid})
    return steps


async def run(session_cm, body):
    async with session_cm as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await body(session)


async def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "tools":
        out = await run(stdio(args), list_tools)
    elif mode == "workflow-stdio":
        out = await run(stdio(args), workflow)
    elif mode == "workflow-http":
        url, token = args
        http = create_mcp_http_client(headers={"Authorization": "Bearer " + token})
        async with http:
            out = await run(streamable_http_client(url, http_client=http), workflow)
    else:
        raise SystemExit("unknown mode " + mode)
    json.dump(out, sys.stdout, sort_keys=True)


asyncio.run(main())
