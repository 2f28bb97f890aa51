"""Deliver: the library going out to readers and their other tools, beyond the web page.

The e-mail digest (``digest``: Markdown, HTML, SMTP, the workers' schedule)
and the exports (``export``: Atom, JSON Feed, BibTeX, OPML, the user's JSON
export and its import) are made here from the ranked feed and the store. They
sit below the web (``serve`` and the CLI both use them) and above the ranking
and the store they read, so that the web layer holds pages alone and the
settings can check a digest schedule without importing the web.
"""
