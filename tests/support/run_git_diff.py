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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_stub  # noqa: E402

sys.path.pop(0)

dispatch, report = mcp_stub.dispatcher(root)

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
