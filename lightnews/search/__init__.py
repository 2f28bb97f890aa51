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

__all__ = ["SearchHit", "parse_query", "related_papers", "search_papers"]

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


def related_papers(store: SQLiteStore, arxiv_id: str, *, limit: int = 10) -> list[SearchHit]:
    """Papers like this one, by the telling words of its title and abstract (lexical).

    The most telling words (inverse document frequency over the library) of
    the paper's title, then abstract, make an OR query ranked by BM25 with the
    title weighted most. Semantic similarity (sentence embeddings) is the
    upgrade this function leaves room for; without it, related is lexical.
    """
    from lightnews.link.titles import stems, title_weights

    paper = store.get_paper(arxiv_id)
    weight = title_weights(store)
    words = re.findall(r"[^\W_]{3,}", f"{paper['title']} {paper['title']} {paper['abstract']}")
    ranked: dict[str, float] = {}
    seen: set[str] = set()
    for word in words:
        stem = next(iter(stems(word)), "")
        if not stem or stem in seen:
            continue
        seen.add(stem)
        # Words no other paper has cannot relate it to anything.
        if store.title_doc_freq(stem) >= 2:
            ranked[word.lower()] = weight(stem)
    telling = [w for w, _ in sorted(ranked.items(), key=lambda kv: kv[1], reverse=True)][:12]
    if not telling:
        return []
    rows = store.related_candidates(telling, paper["arxiv_id"], limit)
    return [SearchHit(r["arxiv_id"], r["title"], r["score"], r["published"],
                      r["primary_category"]) for r in rows]  # fmt: skip
