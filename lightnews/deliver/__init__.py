"""Deliver: what Lightnews sends out of itself, above ingestion and below the web.

Watched papers' events pushed once to each target (:mod:`~lightnews.deliver.watch`:
webhooks, ntfy, e-mail); the e-mail digest and the exports (BibTeX, Atom, JSON
Feed) join them here from ``serve/``. The web pages, the MCP server, the worker
and the command line call these; nothing here imports them.
"""
