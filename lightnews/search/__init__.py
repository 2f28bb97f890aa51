"""Search: find papers by words, names or ids.

Lexical search over the store's full-text index (title weighted over authors
over abstract). A query that is an arXiv id or URL finds that paper first.
User text is parsed here into neutral terms (``"exact phrases"``, a trailing
``*`` for a prefix, ``-word`` to exclude); the store turns them into its own
full-text syntax, so no query can be a syntax error on any backend.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lightnews.link import find_arxiv_mentions
from lightnews.model import QueryTerm, SearchFilters
from lightnews.store import SQLiteStore

__all__ = ["SearchHit", "parse_query", "search_papers"]

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


def parse_query(query: str) -> list[QueryTerm]:
    """The terms of a user's query; backends turn them into their own syntax."""
    terms: list[QueryTerm] = []
    for match in _TOKEN_RE.finditer(query):
        if match[2] is not None:
            words = " ".join(re.findall(r"\w+", match[2]))
            if words:
                terms.append(QueryTerm(words, exclude=bool(match[1])))
            continue
        word = match[4]
        parts = re.findall(r"\w+", word)
        if not parts:
            continue
        if match[3]:  # -excluded: the whole compound
            terms.append(QueryTerm(" ".join(parts), prefix=word.endswith("*"), exclude=True))
            continue
        # "Text-to-Image" is its words, not a phrase: phrases of common words are
        # slow to match and titles write compounds with and without hyphens.
        for n, part in enumerate(parts):
            last = n == len(parts) - 1
            terms.append(QueryTerm(part, prefix=last and word.endswith("*")))
    return terms


def search_papers(
    store: SQLiteStore,
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    filters: SearchFilters | None = None,
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
    terms = parse_query(query)
    if not any(not t.exclude for t in terms):
        return hits
    seen = {h.arxiv_id for h in hits}
    for row in store.search_papers(terms, limit, offset, filters):
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
