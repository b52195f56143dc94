"""A real MCP server over stdio (the ``mcp`` package's FastMCP) with one ``search`` tool, for the AutoGen tier's
``McpWorkbench`` tests. ``SEARCH_ANSWERS=same`` answers every search alike (a loop's result), ``new`` with a fresh
update each time (a status being polled). Each call appends its query to the file ``SEARCH_LOG`` names, so a test
counts the calls that reached the server (a vetoed call never does)."""

from __future__ import annotations

import os

from mcp.server.fastmcp import FastMCP

server = FastMCP("search")


@server.tool()
def search(query: str) -> str:
    """Search the web."""
    with open(os.environ["SEARCH_LOG"], "a", encoding="utf-8") as log:
        log.write(query + "\n")
    with open(os.environ["SEARCH_LOG"], encoding="utf-8") as log:
        calls = sum(1 for _ in log)
    if os.environ.get("SEARCH_ANSWERS") == "new":
        return f"update #{calls}: still raining"
    return "Paris: sunny, 18C"


if __name__ == "__main__":
    server.run()  # stdio
