"""Drives one MCP server with the official MCP Python SDK, as an agent's
client would: initialize, list the tools, then make the calls given. Over
stdio (the server started from "command"), or over Streamable HTTP ("url",
with optional "headers", such as an Authorization bearer token, and "ca", the
CA certificates an https:// server's certificate must chain to).

Usage: python mcp_client.py PLAN.json
PLAN: {"command": [...] | "url": URL, "headers": {...}, "env": {...}, "calls": [{"tool": ..., "arguments": {...},
       "after": PATH (optional: sent only once PATH exists)}],
       "concurrent": bool (optional: every call in flight at once, each sent when its
       "after" file appears, so a test orders them from outside),
       "repeat": N (optional: time every call N times, for the benchmark),
       "sessions": N (optional, over "url" only: N sessions at once, each its
       own client making every call in turn, as N agents on one gateway)}
Prints one JSON object: {"tools": [names], "listed": [{"name", "meta"}], "results":
[{"error": bool, "text": str, "structured": any, "micros": wall time}], "micros":
[per-call wall time, only with repeat]}. With sessions, the results of every
session one after another, and "failed": [what ended a session early].
"""

import asyncio
import json
import os
import sys
import time

from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def summarize(result):
    texts = [getattr(block, "text", "") for block in result.content]
    return {
        "error": bool(getattr(result, "is_error", False)),
        "text": "\n".join(texts),
        "structured": getattr(result, "structured_content", None),
    }


async def one(session, call):
    after = call.get("after")
    while after and not os.path.exists(after):
        await asyncio.sleep(0.02)
    began = time.perf_counter_ns()
    result = summarize(await session.call_tool(call["tool"], call["arguments"]))
    result["micros"] = (time.perf_counter_ns() - began) / 1000.0
    return result


@asynccontextmanager
async def transport(plan):
    if "url" in plan:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        verify = True
        if "ca" in plan:
            import ssl

            verify = ssl.create_default_context(cafile=plan["ca"])
        async with httpx2.AsyncClient(headers=plan.get("headers", {}), timeout=120, verify=verify) as http:
            async with streamable_http_client(plan["url"], http_client=http) as streams:
                yield streams[0], streams[1]
        return
    params = StdioServerParameters(command=plan["command"][0], args=plan["command"][1:], env=plan.get("env"))
    async with stdio_client(params) as (reader, writer):
        yield reader, writer


async def drive(plan):
    sessions = plan.get("sessions", 1)
    if sessions == 1:
        return await drive_one(plan)
    if "url" not in plan:
        raise SystemExit("sessions: several sessions need a url (over stdio each would start its own server)")

    async def guarded():
        try:
            return await drive_one(plan)
        except Exception as error:  # one agent's failure is reported, the others go on
            return {"tools": [], "results": [], "micros": [], "failed": repr(error)}

    outs = await asyncio.gather(*(guarded() for _ in range(sessions)))
    merged = {"tools": outs[0]["tools"], "results": [], "micros": [], "failed": []}
    for out in outs:
        merged["results"].extend(out["results"])
        merged["micros"].extend(out["micros"])
        if "failed" in out:
            merged["failed"].append(out["failed"])
    return merged


async def drive_one(plan):
    out = {"tools": [], "results": [], "micros": []}
    async with transport(plan) as (reader, writer):
        async with ClientSession(reader, writer) as session:
            await session.initialize()
            listed = await session.list_tools()
            out["tools"] = [t.name for t in listed.tools]
            out["listed"] = [{"name": t.name, "meta": t.meta} for t in listed.tools]
            repeat = plan.get("repeat")
            if plan.get("concurrent"):
                out["results"] = list(await asyncio.gather(*(one(session, call) for call in plan["calls"])))
                return out
            for call in plan["calls"]:
                if repeat:
                    for _ in range(repeat):
                        began = time.perf_counter_ns()
                        await session.call_tool(call["tool"], call["arguments"])
                        out["micros"].append((time.perf_counter_ns() - began) / 1000.0)
                else:
                    out["results"].append(await one(session, call))
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        plan = json.load(handle)
    print(json.dumps(asyncio.run(drive(plan))))


if __name__ == "__main__":
    main()
