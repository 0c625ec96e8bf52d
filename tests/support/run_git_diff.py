"""Runs a materialized git_diff fixture's dispatcher for real, to observe effects.

Usage: run_git_diff.py RELEASE_ROOT CANARY < calls.json
The MCP SDK is replaced by a stub just large enough for the dispatcher to
register itself; GitPython and git are the real ones. For every call, prints
whether the canary file was written and the error the handler raised, if any.
"""
import asyncio
import json
import os
import sys
import types

root, canary = sys.argv[1], sys.argv[2]
registered = []
# The report goes to the original stdout; anything the release prints or its
# subprocesses write goes to stderr instead.
report = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


class Server:
    def __init__(self, *args, **kwargs):
        pass

    def call_tool(self, *args, **kwargs):
        def register(fn):
            registered.append(fn)
            return fn
        return register

    def list_tools(self, *args, **kwargs):
        return lambda fn: fn


class TextContent:
    def __init__(self, type, text):
        self.type, self.text = type, text


stub_server = types.ModuleType("mcp.server")
stub_server.Server = Server
stub_types = types.ModuleType("mcp.types")
stub_types.TextContent = TextContent
sys.modules.update({"mcp": types.ModuleType("mcp"), "mcp.server": stub_server, "mcp.types": stub_types})
sys.path.insert(0, root)

try:
    import importlib

    module = importlib.import_module("mcp_server_git.server")
    asyncio.run(module.serve(None))
    dispatch = registered[-1]
except BaseException as e:  # the edited release may not even load
    print(json.dumps({"load_error": repr(e)}), file=report)
    sys.exit(0)

results = {}
for name, arguments in json.loads(sys.stdin.read()).items():
    if os.path.exists(canary):
        os.remove(canary)
    try:
        asyncio.run(dispatch("git_diff", arguments))
        error = None
    except BaseException as e:
        error = repr(e)
    results[name] = {"wrote": os.path.exists(canary), "error": error}
print(json.dumps({"calls": results}), file=report)
