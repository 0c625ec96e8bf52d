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

root, canary = sys.argv[1], sys.argv[2]
# The report goes to the original stdout; anything the release prints or its
# subprocesses write goes to stderr instead.
report = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_stub  # noqa: E402

sys.path.pop(0)
registered = mcp_stub.install()
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
