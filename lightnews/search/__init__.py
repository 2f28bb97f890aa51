"""Search: find papers by words, names, ids and meaning.

Two rankings are fused by rank (``fusion``): the store's full-text index
(title weighted over authors over abstract) and, when the semantic extra is
installed and the library is embedded (``lightnews.embed``), the papers
whose sentence vectors are nearest the query's (FAISS beside an SQLite
library; on PostgreSQL pgvector's HNSW index, which applies the filters and
excluded words while it scans). Without vectors, search is
lexical and the results say why. A query that is an arXiv id or URL finds
that paper first. User text is parsed here into neutral terms (``"exact
phrases"``, a trailing ``*`` for a prefix, ``-word`` to exclude); the store
turns them into its own full-text syntax, so no query can be a syntax error
on any backend.

Every search is bounded: repeated terms count once, a query searches at most
``MAX_TERMS`` terms and ``MAX_PREFIXES`` prefixes of at least ``MIN_PREFIX``
characters (``a*`` alone reads the postings of every word starting with a:
seconds on a large library). A query past these is narrowed, not refused, and
the results' note says how, so a well-formed query always answers (the API
description can promise it). The store stops a search that still reads for
longer than the ``search_budget_ms`` setting (counted in CPU where the
backend reads in this process: a busy machine's wait is not the query's
cost): :class:`~lightnews.errors.TooExpensive` ("narrow it"), never a
stalled server.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from lightnews.embed import Semantic, SemanticUnavailable, open_semantic
from lightnews.embed.index import to_blob
from lightnews.link import find_arxiv_mentions
from lightnews.model import QueryTerm, SearchFilters
from lightnews.search.fusion import fuse
from lightnews.search.related import DEPTH, fuse_scores, related_by_words_fts
from lightnews.search.said import ItemHit, matches, search_said, snippet
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.views import PaperHit, PaperPage, PaperSummary

__all__ = [
    "ITEMS_MIN_BUDGET",
    "MAX_PREFIXES",
    "MAX_TERMS",
    "MEANING_FLOOR",
    "MIN_PREFIX",
    "BoundedQuery",
    "ItemHit",
    "SearchHit",
    "SearchResults",
    "bounded_terms",
    "described",
    "parse_query",
    "related_papers",
    "search_papers",
]

# A paper found by meaning alone (the query's words did not find it) below
# this cosine similarity is noise, not a result: a made-up word or a surname
# has nearest papers too. Fitted on real title and phrase queries against
# made-up words and everyday phrases as the lowest similarity at which 95 in
# 100 hits kept are right ones, reported on held-out queries
# (bench/meaning_floor.py, docs/benchmarks.md). The static encoder's
# similarities run high: its floor is higher. Keyed by encoder name: a new
# encoder adds its own entry (one without gets 0.6, the stricter side).
# minilm-int8 gives MiniLM's own vectors within a cosine of 0.99: its floor.
MEANING_FLOOR = {"static": 0.57, "minilm": 0.33, "minilm-int8": 0.33}
# How far the nearest-by-meaning list is trusted against the words' list when
# they are fused: half, the better of 0.5 and 1 for both encoders on both tasks
# of bench/embedding_eval.py. Meaning still decides alone when no words match.
MEANING_WEIGHT = 0.5
# A filter allowing at most this many papers is searched exactly by meaning.
EXACT_FILTER_CAP = 20_000
# What one search may ask of the full-text index. Measured on a 150k-paper library
# (FTS5 directly, each term): a one-letter prefix 0.9 s to find the window and
# 1.8 s to rank, two letters up to 1.2 s, three letters up to 0.4 s, a plain word
# a few milliseconds; against a live server: bench/search_bounds.py.
MAX_TERMS = 16
MAX_PREFIXES = 4
MIN_PREFIX = 3
# Posts, articles and notes are searched after the papers in what is left of the
# search's time budget, and at least this share of it: a whole search, papers and
# items, reads for at most 1.25 budgets.
ITEMS_MIN_BUDGET = 0.25

_TOKEN_RE = re.compile(r'(-?)"([^"]+)"|(-?)([\w][\w.\'-]*\*?)', re.UNICODE)


#: Authors a search hit names (the rest are counted: a collaboration lists hundreds).
HIT_AUTHORS = 8

_WHY = {"id": "its arXiv id", "words": "words", "meaning": "meaning"}


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A paper a search found: what a result shows of it and why it matched.

    ``matched`` is how it was found (``id``, ``words``, ``meaning``, or words and
    meaning both); ``words`` the query's words its title or abstract holds, marked
    in ``snippet`` (the part of the abstract that holds most of them) at
    ``highlights`` (``(start, end)`` in the snippet) and in the title at
    ``title_highlights``.
    """

    arxiv_id: str
    title: str
    score: float
    published: str | None = None
    primary_category: str | None = None
    matched: tuple[str, ...] = ("words",)  # "id", "words", "meaning"
    authors: tuple[str, ...] = ()
    author_count: int = 0
    snippet: str = ""
    highlights: tuple[tuple[int, int], ...] = ()
    title_highlights: tuple[tuple[int, int], ...] = ()
    words: tuple[str, ...] = ()

    @classmethod
    def from_row(
        cls, row: PaperHit | PaperSummary, score: float, matched: tuple[str, ...]
    ) -> SearchHit:
        return cls(row.arxiv_id, row.title, score, row.published, row.primary_category, matched)

    @property
    def why(self) -> str:
        """Why it matched, in words: "words", "meaning", "words and meaning", "its arXiv id"."""
        return " and ".join(_WHY.get(m, m) for m in self.matched)

    @property
    def snippet_parts(self) -> list[tuple[str, bool]]:
        """The snippet cut at its highlights: ``(text, marked)`` in order."""
        return _parts(self.snippet, self.highlights)

    @property
    def title_parts(self) -> list[tuple[str, bool]]:
        return _parts(self.title, self.title_highlights)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "paper",
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "score": round(self.score, 4),
            "published": self.published,
            "primary_category": self.primary_category,
            "matched": list(self.matched),
            "why": self.why,
            "words": list(self.words),
            "authors": list(self.authors),
            "author_count": self.author_count,
            "snippet": self.snippet,
            "highlights": [list(span) for span in self.highlights],
        }


def _parts(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[str, bool]]:
    parts: list[tuple[str, bool]] = []
    at = 0
    for start, end in spans:
        if start < at:  # overlapping spans: the first wins
            continue
        if start > at:
            parts.append((text[at:start], False))
        parts.append((text[start:end], True))
        at = end
    if at < len(text):
        parts.append((text[at:], False))
    return parts


def described(
    store: Store, hits: Sequence[SearchHit], terms: Sequence[QueryTerm]
) -> list[SearchHit]:
    """``hits`` with their authors, a snippet of the abstract around the query's words, and
    which words each holds (one read of the page's papers: their cards)."""
    cards = store.card_papers([h.arxiv_id for h in hits])
    found = []
    for hit in hits:
        card = cards.get(hit.arxiv_id)
        abstract = " ".join((card.abstract if card else "").split())
        cut = snippet(abstract, terms) if abstract else ""
        marks, in_snippet = matches(cut, terms)
        title_marks, in_title = matches(hit.title, terms)
        _, in_abstract = matches(abstract, terms)
        words = tuple(dict.fromkeys((*in_title, *in_snippet, *in_abstract)))
        names = tuple(a.name for a in card.authorships) if card else ()
        found.append(
            replace(
                hit,
                authors=names[:HIT_AUTHORS],
                author_count=len(names),
                snippet=cut,
                highlights=marks,
                title_highlights=title_marks,
                words=words,
            )
        )
    return found


class SearchResults(list[SearchHit]):
    """Paper hits, best first, with how they were found (``hybrid`` or ``lexical``) and
    why; ``items``: the posts, threads, articles and notes found, best first (listed
    after the papers: :mod:`lightnews.search.said` says why)."""

    def __init__(
        self,
        hits: list[SearchHit],
        mode: str,
        note: str | None = None,
        items: list[ItemHit] | None = None,
    ) -> None:
        super().__init__(hits)
        self.mode = mode
        self.note = note
        self.items: list[ItemHit] = items or []

    def about(self) -> dict[str, Any]:
        return {"mode": self.mode, "note": self.note}


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


@dataclass(frozen=True, slots=True)
class BoundedQuery:
    """A query's terms within what one search may ask of the index, and how it was narrowed."""

    terms: tuple[QueryTerm, ...]
    note: str | None = None  # what was narrowed, said to the user beside the results


def bounded_terms(terms: Sequence[QueryTerm]) -> BoundedQuery:
    """``terms`` once each, narrowed to what one search may ask of the full-text index.

    A prefix shorter than ``MIN_PREFIX`` is searched as the whole word, prefixes past
    ``MAX_PREFIXES`` likewise, and terms past ``MAX_TERMS`` are left out: the search
    answers, within its bounds, and its note says what was narrowed. A well-formed query
    is never refused for its shape; only a read past the time budget is.
    """
    unique = list(dict.fromkeys(terms))
    said: list[str] = []
    short = [t for t in unique if t.prefix and len(t.words) < MIN_PREFIX]
    prefixes = [t for t in unique if t.prefix and len(t.words) >= MIN_PREFIX]
    whole = set(short) | set(prefixes[MAX_PREFIXES:])
    if short:
        shown = ", ".join(f"{t.words}*" for t in short[:3]) + (", …" if len(short) > 3 else "")
        said.append(f"{shown} searched as whole words: a * needs {MIN_PREFIX} characters before it")
    if len(prefixes) > MAX_PREFIXES:
        said.append(
            f"the first {MAX_PREFIXES} of {len(prefixes)} prefixes (word*) searched as "
            "prefixes, the rest as whole words"
        )
    narrowed = list(
        dict.fromkeys(
            QueryTerm(t.words, prefix=False, exclude=t.exclude) if t in whole else t for t in unique
        )
    )
    if len(narrowed) > MAX_TERMS:
        said.append(f"searched the first {MAX_TERMS} of {len(narrowed)} different terms")
        narrowed = narrowed[:MAX_TERMS]
    return BoundedQuery(tuple(narrowed), "; ".join(said) or None)


def _budget(settings: Settings | None) -> float:
    """Seconds a search may read the database (the ``search_budget_ms`` setting)."""
    if settings is None:
        return Settings.search_budget_ms.default / 1000
    return settings.search_budget_ms / 1000


def _semantic(store: Store, settings: Settings | None) -> tuple[Semantic | None, str | None]:
    if settings is None:
        return None, "lexical only: no settings given"
    try:
        semantic = open_semantic(store, settings)
    except SemanticUnavailable as exc:
        return None, f"lexical only: {exc}"
    pending = semantic.pending(cap=10_000)
    many = "over 10,000" if pending > 10_000 else f"{pending:,}"
    note = f"{many} papers not embedded yet: run `lightnews embed`" if pending else None
    return semantic, note


def _weights(semantic: Semantic | None) -> dict[str, float]:
    return {"meaning": MEANING_WEIGHT} if semantic else {}


def _by_meaning(
    semantic: Semantic,
    vector: Any,
    depth: int,
    filters: SearchFilters | None,
    excluded: Sequence[QueryTerm] = (),
    skip: int | None = None,
) -> list[PaperHit]:
    """The papers nearest ``vector`` above the floor that pass the filters, nearest first
    (a paper the words found keeps its words' place below the floor)."""
    store = semantic.store
    model = semantic.encoder.name
    floor = MEANING_FLOOR.get(model, 0.6)
    allowed = store.filtered_paper_ids(filters, EXACT_FILTER_CAP) if filters else None
    if store.vectors_indexed:  # the database's index, filtering as it scans
        blob = to_blob(vector)
        if allowed is not None:  # a narrow filter: every allowed paper, exactly
            nearest = store.nearest_vectors(model, blob, depth + 1, among=allowed)
        else:
            nearest = store.nearest_vectors(
                model, blob, depth + 1, filters=filters, excluded=excluded
            )
    elif allowed is not None:  # a narrow filter: every allowed paper, exactly
        nearest = semantic.exact(vector, allowed)[:depth]
    else:  # the index, with room for what the filters and exclusions drop
        nearest = semantic.nearest_to_vector(vector, depth * (4 if filters or excluded else 1) + 1)
    nearest = [(pid, sim) for pid, sim in nearest if sim >= floor and pid != skip]
    rows = store.papers_by_rowids([pid for pid, _ in nearest], filters, excluded)
    return [rows[pid] for pid, _ in nearest if pid in rows][:depth]


def search_papers(
    store: Store,
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    filters: SearchFilters | None = None,
    settings: Settings | None = None,
    items: bool = False,
) -> SearchResults:
    """Papers for ``query``, best first: words and meaning fused; a named id comes first.

    With ``items``, also the posts, threads, articles and notes the query's
    words find (``SearchResults.items``, paged as the papers are).
    Bounded (see the module's docstring): a query asking too much of the index is
    narrowed and the note says how; :class:`TooExpensive` when it still reads too long.
    """
    hits: list[SearchHit] = []
    budget = _budget(settings)
    started = store.budget_clock()

    def left() -> float:  # of the budget: the store's work in its budgeted reads so far
        return max(budget - (store.budget_clock() - started), 0.0)

    named = [m.arxiv_id for m in find_arxiv_mentions([query]) if m.confidence >= 0.8]
    if named and offset == 0:
        for row in store.papers_by_ids(named).values():
            hits.append(SearchHit.from_row(row, 1000.0, ("id",)))
        if hits and len(query.split()) == 1:
            return SearchResults(described(store, hits, ()), "id")
    bounded = bounded_terms(parse_query(query))
    terms = list(bounded.terms)
    wanted = [t for t in terms if not t.exclude]
    if not wanted:
        note = None if hits else "no words to search for: -word only leaves out what has it"
        return SearchResults(
            hits, "lexical", "; ".join(n for n in (note, bounded.note) if n) or None
        )
    depth = max(50, 2 * (offset + limit))
    with store.time_budget(left(), "this search"):
        lexical = store.search_papers(terms, depth, 0, filters)
    semantic, note = _semantic(store, settings)  # loading an index is not the query's cost
    lists: dict[str, list[str]] = {"words": [r.arxiv_id for r in lexical]}
    rows = {r.arxiv_id: r for r in lexical}
    if semantic is not None:
        excluded = [t for t in terms if t.exclude]
        vector = semantic.encoder.encode([" ".join(t.words for t in wanted)])[0]
        with store.time_budget(left(), "this search"):
            meaning = _by_meaning(semantic, vector, depth, filters, excluded)
        lists["meaning"] = [r.arxiv_id for r in meaning]
        rows.update({r.arxiv_id: r for r in meaning})
        if not lexical and not meaning and not hits:
            floor = MEANING_FLOOR.get(semantic.encoder.name, 0.6)
            note = (
                f"no results: no paper has these words, and none is close enough in "
                f"meaning (similarity {floor:.2f} needed)"
            )
    seen = {h.arxiv_id for h in hits}
    fused = [f for f in fuse(lists, _weights(semantic)) if f[0] not in seen]
    for arxiv_id, score, origins in fused[offset : offset + limit]:
        hits.append(SearchHit.from_row(rows[arxiv_id], score, tuple(origins)))
    said: list[ItemHit] = []
    if items:
        seconds = max(left(), ITEMS_MIN_BUDGET * budget)
        said = search_said(
            store, terms, limit=limit, offset=offset, filters=filters, seconds=seconds
        )
        if said and note and note.startswith("no results"):
            note = note.replace("no results", "no papers", 1)
    note = "; ".join(n for n in (note, bounded.note) if n) or None
    shown = described(store, hits[:limit], terms)
    return SearchResults(shown, "hybrid" if semantic else "lexical", note, said)


def related_papers(
    store: Store,
    arxiv_id: str,
    *,
    limit: int = 10,
    settings: Settings | None = None,
    paper: PaperPage | None = None,
) -> SearchResults:
    """Papers like this one: every word of its title and abstract (BM25) fused with
    its nearest by meaning (``lightnews.search.related``).

    ``paper`` is the stored paper when the caller has it already.
    """
    from lightnews.embed.lexical import analyze, open_lexical

    paper = paper or store.get_paper(arxiv_id)
    semantic, note = _semantic(store, settings)
    found = semantic.vector_of(paper.arxiv_id) if semantic else None
    if semantic is not None and found is None:
        note = "by words only: this paper has no vector yet (run `lightnews embed`)"
    lexical = open_lexical(store)
    if lexical is None:
        return _related_by_telling_words(store, paper, limit, semantic, found, note)
    paper_id = found[0] if found else store.paper_row_id(paper.arxiv_id)
    words = lexical.scores(analyze(paper.title, paper.abstract), paper_id, DEPTH)
    fused = fuse_scores(words, semantic if found else None, found)[: limit + 1]
    rows = store.papers_by_rowids([c.paper_id for c in fused])
    hits = [
        SearchHit.from_row(rows[c.paper_id], c.score, c.matched)
        for c in fused
        if c.paper_id in rows and c.paper_id != paper_id
    ]
    return SearchResults(hits[:limit], "hybrid" if found is not None else "lexical", note)


def _related_by_telling_words(
    store: Store,
    paper: PaperPage,
    limit: int,
    semantic: Semantic | None,
    found: tuple[int, Any] | None,
    note: str | None,
) -> SearchResults:
    """Related papers where the word index cannot run (no numpy): the full-text index's
    eight most telling words, rank-fused with meaning when there is a vector."""
    depth = max(30, 3 * limit)
    lexical = related_by_words_fts(store, paper, depth)
    lists: dict[str, list[str]] = {"words": [r.arxiv_id for r in lexical]}
    rows = {r.arxiv_id: r for r in lexical}
    if semantic is not None and found is not None:
        meaning = _by_meaning(semantic, found[1], depth, None, skip=found[0])
        lists["meaning"] = [r.arxiv_id for r in meaning]
        rows.update({r.arxiv_id: r for r in meaning})
    hits = [
        SearchHit.from_row(rows[key], score, tuple(origins))
        for key, score, origins in fuse(lists, _weights(semantic))[:limit]
    ]
    note = note or "by the full-text index's most telling words (no word index: install numpy)"
    return SearchResults(hits, "hybrid" if found is not None else "lexical", note)
