"""Normalize: turn what sources wrote into the canonical forms the rest relies on.

arXiv ids without versions, names and titles with TeX accents resolved to
Unicode, HTML sanitized against an allow-list, times in ISO 8601 UTC; the
identifiers a text writes (arXiv ids, DOIs, code repositories:
``identifiers``) and the "Surname: short title" references it makes
(``references``), read the same way by every source and by the linker. Pure
functions only: no I/O.
"""

from lightnews.normalize.arxiv_ids import ArxivId, parse_arxiv_id
from lightnews.normalize.tex import tex_to_unicode
from lightnews.normalize.text import clean_text, html_to_text, iso_utc, sanitize_html

__all__ = [
    "ArxivId",
    "clean_text",
    "html_to_text",
    "iso_utc",
    "parse_arxiv_id",
    "sanitize_html",
    "tex_to_unicode",
]
