"""Drives an MCP server with the official Python MCP client, for the Go
test in internal/e2e/mcp_test.go. Each mode prints one JSON object on
stdout; the Go test makes every assertion.

  tools COMMAND [ARG...]           the tools a stdio server lists
  workflow-stdio COMMAND [ARG...]  create, run, write, read, kill over stdio
  workflow-http URL TOKEN          the same over streamable HTTP
  compare COMMAND [ARG...]         command_run results of a set of commands,
                                   to hold one server's against another's
  agent-stdio COMMAND [ARG...]     what an agent meets: tool order, a null
                                   argument, long and cut output, shells
  agent-http URL TOKEN             the same over streamable HTTP

Every call goes through ClientSession.call_tool, which checks structured
content against the tool's output schema; a failed check is reported as
client_error.
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
    try:
        res = await session.call_tool(name, args)
    except Exception as e:  # the client's own checks, the output schema's among them
        return {"client_error": str(e)}
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


# Commands whose command_run results two servers over the same
# OpenSandbox server must give alike: lines, empty lines, CRLF, a last
# line without newline, stderr, an exit code, no output, a long line.
COMPARED = [
    "echo hello; echo; echo bye",
    "printf 'a\\r\\nb\\n\\n\\nc'; echo err1 >&2; echo >&2; echo err2 >&2; exit 3",
    "true",
    "seq 1 40",
    "printf '%05000d\\n' 7",
    "for i in 1 2 3; do echo line$i; done; printf 'no newline'",
]


async def compare(session):
    created = await call(session, "sandbox_create", {"image": "python:3.11"})
    sid = (created["structured"] or {}).get("sandbox_id")
    runs = [await call(session, "command_run", {"sandbox_id": sid, "command": c}) for c in COMPARED]
    await call(session, "sandbox_kill", {"sandbox_id": sid})
    return {"create": created, "runs": runs}


async def agent(session):
    steps = {"tools": [t.name for t in (await session.list_tools()).tools]}
    created = await call(session, "sandbox_create", {"image": "python:3.11"})
    sid = (created["structured"] or {}).get("sandbox_id")
    steps["sandbox_id"] = sid
    steps["null"] = await call(session, "command_run", {"sandbox_id": None, "command": "true"})
    steps["long_line"] = await call(session, "command_run", {"sandbox_id": sid, "command": "head -c 70000 /dev/zero | tr '\\0' a"})
    steps["many_lines"] = await call(session, "command_run", {"sandbox_id": sid, "command": "seq 1 100000"})
    steps["shell_end"] = await call(session, "shell_exec", {"sandbox_id": sid, "input": "exit 3\n", "end": True, "idle_ms": 1})
    # A shell left running: the server must end it when it exits.
    steps["shell_left"] = await call(session, "shell_exec", {"sandbox_id": sid, "input": "echo up; sleep 600\n", "until": "up\r\n"})
    return steps


async def run(session_cm, body):
    async with session_cm as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await body(session)


async def over_http(args, body):
    url, token = args
    http = create_mcp_http_client(headers={"Authorization": "Bearer " + token})
    async with http:
        return await run(streamable_http_client(url, http_client=http), body)


async def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "tools":
        out = await run(stdio(args), list_tools)
    elif mode == "workflow-stdio":
        out = await run(stdio(args), workflow)
    elif mode == "workflow-http":
        out = await over_http(args, workflow)
    elif mode == "compare":
        out = await run(stdio(args), compare)
    elif mode == "agent-stdio":
        out = await run(stdio(args), agent)
    elif mode == "agent-http":
        out = await over_http(args, agent)
    else:
        raise SystemExit("unknown mode " + mode)
    json.dump(out, sys.stdout, sort_keys=True)


asyncio.run(main())
