"""Store: query terms in FTS5's syntax, shared by every full-text query."""

from __future__ import annotations

from lightnews.model import QueryTerm

__all__ = ["quoted"]


def quoted(term: QueryTerm) -> str:
    """One term as an FTS5 string: quoted, so no user text is ever a syntax error."""
    return '"' + term.words.replace('"', '""') + '"' + ("*" if term.prefix else "")
