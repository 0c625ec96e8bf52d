"""A stand-in for the MCP SDK, just large enough for a low-level dispatcher.

`install()` puts modules `mcp`, `mcp.server` and `mcp.types` in place whose
`Server(...).call_tool()` decorator records the function it decorates, and
returns that list, so a driver can import a release's server module, run its
`serve()` and call the dispatcher it registered; `dispatcher(root)` does all
of that for a driver.
"""
import asyncio
import importlib
import json
import os
import sys
import types


def dispatcher(root):
    """The dispatcher the release at `root` registers, and the driver's report stream.

    The report is the original stdout; anything the release prints, or its
    subprocesses write, goes to stderr instead. A release that does not load
    (an edited one may not) reports `load_error` and ends the driver.
    """
    report = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    registered = install()
    sys.path.insert(0, root)
    try:
        module = importlib.import_module("mcp_server_git.server")
        asyncio.run(module.serve(None))
        return registered[-1], report
    except BaseException as e:
        print(json.dumps({"load_error": repr(e)}), file=report)
        sys.exit(0)


def install():
    registered = []

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
    return registered
