"""A stand-in for the MCP SDK, just large enough for a low-level dispatcher.

`install()` puts modules `mcp`, `mcp.server` and `mcp.types` in place whose
`Server(...).call_tool()` decorator records the function it decorates, and
returns that list, so a driver can import a release's server module, run its
`serve()` and call the dispatcher it registered.
"""
import sys
import types


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
