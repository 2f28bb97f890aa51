"""Search: what scholars said — posts, threads, blog articles and notes.

Papers are half of what a library holds; the other half is what people
wrote about them. This module finds posts, articles and notes by the same
query terms as paper search (the store's full-text index over items: FTS5
on SQLite, a tsvector with GIN on PostgreSQL), narrowed by the filters that
apply to them (dates, scholar, source kind; a subject is a paper's and
leaves items out), and shows a thread once: the posts of one conversation
are one hit, the best-matching post's, marked ``thread`` when the
conversation has more than one stored post (an article read through two
feeds is shown once too). A thread is searched as one text too: its posts
may hold the query's words between them (listed after the items that hold
them all).

Items are listed after the papers, not interleaved with them: the two
indexes score on different collections (a BM25 over abstracts and one over
posts are not one scale), papers are fused with meaning and items are not,
and paging through papers stays what it was. Every hit says its kind and
links to the item's page (``/item/ID``) and to where it was said (``url``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lightnews.model import QueryTerm, SearchFilters
from lightnews.normalize.stems import porter_stem
from lightnews.store import Store
from lightnews.store.views import ItemMatch, SaidItem

__all__ = [
    "NEAR_CHARS",
    "SNIPPET_CHARS",
    "ItemHit",
    "matches",
    "near",
    "search_said",
    "snippet",
]

#: Characters of an item's text a hit shows around the query's words.
SNIPPET_CHARS = 240
#: Most items one search reads from the index (posts of one thread count once each).
MAX_DEPTH = 600
#: The words of a query of several words must stand within this many characters of
#: each other (about 30 words) somewhere in the item: a long article holds most
#: words somewhere, and "recommender systems" found 20 articles about neither
#: (bench/said_search.py). Papers are not held to it: an abstract is short.
NEAR_CHARS = 200
#: Most candidates whose text is read to check that their words stand together.
MAX_CHECKED = 200
#: A query of at most this many words also finds threads that hold its words in
#: different posts, reading at most ``THREAD_DEPTH`` posts per word.
THREAD_TERMS = 4
THREAD_DEPTH = 200


@lru_cache(maxsize=50_000)
def _stem(word: str) -> str:
    return porter_stem(word.lower())  # the stems FTS5's porter tokenizer makes


@dataclass(frozen=True, slots=True)
class ItemHit:
    """A post, thread, article or note a search found (``kind`` says which)."""

    item_id: int
    kind: str  # "post", "thread", "article", "note"
    title: str
    snippet: str
    url: str | None
    author: str | None
    published: str | None
    source_kind: str
    source: str
    score: float
    thread_posts: int = 0
    #: Whether ``published`` is the item's own date, not when the library first saw it.
    dated: bool = True

    @property
    def link(self) -> str:
        """The item's page in Lightnews."""
        return f"/item/{self.item_id}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "item_id": self.item_id,
            "link": self.link,
            "url": self.url,
            "title": self.title,
            "snippet": self.snippet,
            "author": self.author,
            "published": self.published,
            "dated": self.dated,
            "source_kind": self.source_kind,
            "source": self.source,
            "thread_posts": self.thread_posts,
            "score": round(self.score, 4),
        }


def _stem_pattern(word: str) -> str:
    """A regular expression finding ``word`` and its inflections (cache, caches, caching)."""
    word = word.lower()
    for suffix in ("ing", "es", "ed", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return r"\b" + re.escape(word)


def snippet(text: str, terms: Sequence[QueryTerm], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around the place most of ``terms`` appear.

    Pure and backend-neutral (SQLite's ``snippet()`` and PostgreSQL's
    ``ts_headline`` cut differently): the window holding the most distinct
    query words wins, the earliest of equals; the text's start when none is found.
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    words = [w for t in terms if not t.exclude for w in t.words.split()]
    found: list[tuple[int, int]] = []  # (position, word number)
    for number, word in enumerate(dict.fromkeys(words)):
        found += [(m.start(), number) for m in re.finditer(_stem_pattern(word), flat, re.I)]
    found = sorted(found)[:400]  # a long article's commonest word: enough to place it
    best_start, best_count = 0, 0
    for start, _ in found:
        count = len({n for pos, n in found if start <= pos < start + width * 2 // 3})
        if count > best_count:
            best_start, best_count = start, count
    begin = max(0, best_start - width // 3)
    if begin:  # start at a word
        space = flat.find(" ", begin)
        begin = space + 1 if 0 <= space < best_start else begin
    end = min(len(flat), begin + width)
    if end < len(flat):
        space = flat.rfind(" ", begin, end)
        end = space if space > begin + width // 2 else end
    return ("…" if begin else "") + flat[begin:end] + ("…" if end < len(flat) else "")


def matches(
    text: str, terms: Sequence[QueryTerm]
) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...]]:
    """Where the wanted words of ``terms`` stand in ``text`` (``(start, end)`` spans, in
    order), and which of them were found, in the query's order.

    Words are compared as the full-text index compares them (Porter stems; a prefix
    term by its start), so "caching" is marked for the query word "cache".
    """
    spans: list[tuple[int, int]] = []
    found: list[str] = []
    for term in terms:
        if term.exclude:
            continue
        for word in term.words.split():
            word = word.lower()
            stem = word if term.prefix else _stem(word)
            head = re.escape(stem[: max(3, min(len(stem), 4))] if len(stem) >= 3 else stem)
            hit = False
            for token in re.finditer(rf"\b{head}\w*", text, re.I):
                got = token.group().lower()
                if got.startswith(stem) if term.prefix else _stem(got) == stem:
                    spans.append(token.span())
                    hit = True
            if hit and word not in found:
                found.append(word)
    return tuple(sorted(set(spans))), tuple(found)


def near(text: str, terms: Sequence[QueryTerm], within: int | None = None) -> bool:
    """Whether every wanted term of ``terms`` occurs in ``text`` within ``within``
    (default ``NEAR_CHARS``) characters of one occurrence of each of the others
    (True for a single term).

    Words are compared by their Porter stems, as the full-text index compares
    them; a phrase counts by its first word (the index has checked the phrase).
    """
    wanted = list(
        dict.fromkeys((t.words.split() or [""])[0].lower() for t in terms if not t.exclude)
    )
    if len(wanted) < 2:
        return True
    within = NEAR_CHARS if within is None else within
    places: list[tuple[int, int]] = []
    for number, word in enumerate(wanted):
        prefix = next((t.prefix for t in terms if t.words.lower().startswith(word)), False)
        stem = word if prefix else _stem(word)
        head = re.escape(stem[: max(3, min(len(stem), 4))])
        for found in re.finditer(rf"\b{head}\w*", text, re.I):
            token = found.group().lower()
            if token.startswith(stem) if prefix else _stem(token) == stem:
                places.append((found.start(), number))
    places.sort()
    counts = [0] * len(wanted)
    missing = len(wanted)
    left = 0
    for position, number in places:  # slide to the shortest window holding every word
        counts[number] += 1
        missing -= counts[number] == 1
        while missing == 0:
            if position - places[left][0] <= within:
                return True
            counts[places[left][1]] -= 1
            missing += counts[places[left][1]] == 0
            left += 1
    return False


def _across_posts(
    store: Store, terms: Sequence[QueryTerm], filters: SearchFilters | None, known: set[str]
) -> list[ItemMatch]:
    """Threads whose posts hold the query's words between them though no post holds
    them all ("SwiGLU" in one post of a thread, "DCLM" in another), after those
    that do: each word is looked up among posts on its own (``THREAD_DEPTH``
    posts at most, for queries of two to ``THREAD_TERMS`` words)."""
    wanted = [t for t in terms if not t.exclude]
    if not 2 <= len(wanted) <= THREAD_TERMS:
        return []
    excluded = [t for t in terms if t.exclude]
    per_word: list[dict[str, ItemMatch]] = []
    for term in wanted:
        threads: dict[str, ItemMatch] = {}
        for match in store.search_items([term, *excluded], THREAD_DEPTH, filters):
            if match.kind == "post" and match.unit not in known:
                threads.setdefault(match.unit, match)
        per_word.append(threads)
    common = set(per_word[0]).intersection(*per_word[1:])
    return [m for unit, m in per_word[0].items() if unit in common]


def search_said(
    store: Store,
    terms: Sequence[QueryTerm],
    *,
    limit: int,
    offset: int = 0,
    filters: SearchFilters | None = None,
    seconds: float,
) -> list[ItemHit]:
    """Posts (a thread once), articles and notes for ``terms``, best first.

    ``terms`` are already bounded (:func:`lightnews.search.bounded_terms`);
    the store stops reading after ``seconds`` (:class:`~lightnews.errors.TooExpensive`).
    """
    if filters is not None and filters.subject:
        return []  # a subject is a paper's: no post or article has one
    depth = min(MAX_DEPTH, 3 * (offset + limit) + 20)
    with store.time_budget(seconds, "this search"):
        matches = store.search_items(terms, depth, filters)
        best: dict[str, ItemMatch] = {}
        for match in matches:  # best first: the first post of a thread is its best
            best.setdefault(match.unit, match)
        spread = _across_posts(store, terms, filters, set(best))
    units = list(best.values()) + spread
    apart = {m.item_id for m in spread}
    kept: list[tuple[ItemMatch, SaidItem]] = []
    checked = 0
    while units and len(kept) < offset + limit and checked < MAX_CHECKED:
        chunk, units = units[: limit + 10], units[limit + 10 :]
        checked += len(chunk)
        rows = store.said_items([m.item_id for m in chunk])
        for match in chunk:
            row = rows.get(match.item_id)  # None: deleted since the index was read
            if row is None:
                continue
            if match.item_id in apart or near(f"{row.title}\n{row.text}", terms):
                kept.append((match, row))
    hits: list[ItemHit] = []
    for match, row in kept[offset : offset + limit]:
        kind = "thread" if row.kind == "post" and row.thread_posts > 1 else row.kind
        text = snippet(row.text or row.title, terms)
        hit = ItemHit(
            row.item_id,
            kind,
            row.title,
            text,
            row.url,
            row.author,
            row.published,
            row.source_kind,
            row.source,
            match.score,
            row.thread_posts,
            row.dated,
        )
        hits.append(hit)
    return hits
