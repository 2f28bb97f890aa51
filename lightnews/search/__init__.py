"""Search: find papers by words, names or ids.

Lexical search over the store's full-text index (title weighted over authors
over abstract). A query that is an arXiv id or URL finds that paper first.
User text is turned into a safe FTS5 expression here (every word quoted,
``"exact phrases"`` kept, a trailing ``*`` kept as a prefix search, ``-word``
excluded), so no query can be a syntax error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lightnews.link import find_arxiv_mentions
from lightnews.store import SQLiteStore

__all__ = ["SearchHit", "build_match", "search_papers"]

_TOKEN_RE = re.compile(r'(-?)"([^"]+)"|(-?)([\w][\w.\'-]*\*?)', re.UNICODE)


@dataclass(frozen=True, slots=True)
class SearchHit:
    arxiv_id: str
    title: str
    score: float
    published: str | None = None
    primary_category: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "score": round(self.score, 4),
            "published": self.published,
            "primary_category": self.primary_category,
        }


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def build_match(query: str) -> str | None:
    """An FTS5 MATCH expression for a user's query, or None when it has no words."""
    positive: list[str] = []
    negative: list[str] = []
    for match in _TOKEN_RE.finditer(query):
        if match[2] is not None:
            words = " ".join(re.findall(r"\w+", match[2]))
            target = negative if match[1] else positive
            if words:
                target.append(_quote(words))
            continue
        word = match[4]
        prefix = word.endswith("*")
        parts = re.findall(r"\w+", word)
        if not parts:
            continue
        term = _quote(" ".join(parts)) + ("*" if prefix else "")
        (negative if match[3] else positive).append(term)
    if not positive:
        return None
    expression = " ".join(positive)
    for term in negative:
        expression += f" NOT {term}"
    return expression


def search_papers(
    store: SQLiteStore, query: str, *, limit: int = 20, offset: int = 0
) -> list[SearchHit]:
    """Papers for ``query``, best first; an id or URL in the query comes first."""
    hits: list[SearchHit] = []
    named = [m.arxiv_id for m in find_arxiv_mentions([query]) if m.confidence >= 0.8]
    if named and offset == 0:
        for arxiv_id, row in store.papers_by_ids(named).items():
            hits.append(
                SearchHit(arxiv_id, row["title"], 1000.0, row["published"], row["primary_category"])
            )
        if hits and len(query.split()) == 1:
            return hits
    expression = build_match(query)
    if expression is None:
        return hits
    seen = {h.arxiv_id for h in hits}
    for row in store.search_papers(expression, limit, offset):
        if row["arxiv_id"] not in seen:
            hits.append(
                SearchHit(
                    row["arxiv_id"],
                    row["title"],
                    row["score"],
                    row["published"],
                    row["primary_category"],
                )
            )
    return hits[:limit]
