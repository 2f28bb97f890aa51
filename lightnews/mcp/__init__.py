"""The library to an assistant, over the Model Context Protocol (``lightnews mcp``).

Beside the web (``serve``) rather than inside it: the MCP server speaks JSON-RPC
over standard input and output, not HTTP, and shares with the web only the store
reads, the ranking and the pages' JSON shapes. ``server`` holds the tools,
the resource and the stdio loop.
"""
