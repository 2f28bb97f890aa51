"""Deliver: what Lightnews sends out of itself, above ingestion and below the web.

Watched papers' events pushed once to each target (:mod:`~lightnews.deliver.watch`:
webhooks, ntfy, e-mail); the e-mail digest (``digest``: Markdown, HTML, SMTP, the
workers' schedule); the exports (``export``: Atom, JSON Feed, BibTeX, OPML, the
user's JSON export and its import). They are made from the ranked feed and the
store. The web pages, the MCP server, the worker and the command line call these;
nothing here imports them.
"""
