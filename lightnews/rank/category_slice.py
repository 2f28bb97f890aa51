"""Rank: each reader's slice of the new papers in the categories they follow.

A followed category brings hundreds of papers a day, far more than a feed can
show; which of them reach a reader's candidates decides what they can see.
Taking the newest, the same for everyone, shows each reader the last few
hours of the category and nothing of the days before, however close those
papers are to what they saved. So each reader gets a bounded slice
(``feed_category_slice`` papers, :data:`SLICE_PAPERS` by default) of the papers
of their horizon in the followed categories, chosen by their learned ranker
(:mod:`.learn`): the papers it scores highest, each carrying the interest and
saved paper that brought it. A reader it cannot learn for yet (nothing saved)
gets the newest papers of those categories, and is told so.

Choosing costs little at any library size. The pool (:class:`CategoryPool`)
is the horizon's papers of the followed categories with their stored vectors
(some 10,000 papers and 15 MB at a million papers), shared by every reader and
loaded again only when new vectors are stored (at most every ``refresh``
seconds), reading only the vectors it does not hold yet. A reader's model is
linear over a paper's vector and words, so its vectors' part is one matrix
product over the pool (:meth:`~.learn.ReaderModel.vector_scores`: an exact
maximum-inner-product search, which beats a vector index here because the
index cannot be limited to the horizon: a tenth of a percent of a million
papers); the best ``SHORTLIST`` times the slice are then scored in full, words
and all (the words of a paper, analysed once, are kept in the pool for every
reader). A reader's slice is kept (:class:`Slices`) until their model or the
pool changes, so a feed request reads it, and costs nothing more.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lightnews.embed.index import from_blob
from lightnews.rank.learn import Because, ReaderModel, paper_terms
from lightnews.store import Store
from lightnews.store.readers import ReaderId

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "SLICES",
    "SLICE_FLOOR",
    "SLICE_PAPERS",
    "CategoryPool",
    "Pick",
    "Slices",
    "choose",
    "load_pool",
    "newest_picks",
]

#: Papers of the followed categories each reader's slice brings (the setting's default).
SLICE_PAPERS = 80
#: The papers scored in full, as a multiple of the slice (the vectors choose them).
SHORTLIST = 3
#: A paper the model scores below this (in standard deviations above a random paper of
#: the library) is not brought, however few pass: "like your saves" must mean something.
SLICE_FLOOR = 1.0
#: At most this many papers of the horizon make the pool (the newest).
POOL_MOST = 50_000


@dataclass(frozen=True, slots=True)
class Pick:
    """A paper the slice brings: why (the model's word), or None when it is among the
    newest (the reader has no model yet)."""

    arxiv_id: str
    published: str
    because: Because | None = None


@dataclass(frozen=True, slots=True)
class CategoryPool:
    """The papers of ``categories`` published since ``since`` that have a vector from
    encoder ``model``, newest first, with those vectors (one unit row each)."""

    categories: tuple[str, ...]
    since: str
    model: str
    #: The store's newest vector row when it was read (newer vectors: read it again).
    version: int
    rows: tuple[int, ...]
    arxiv_ids: tuple[str, ...]
    published: tuple[str, ...]
    vectors: npt.NDArray[np.float32]
    #: Papers' terms (:func:`~.learn.paper_terms`), by row id, read when first asked for.
    words: dict[int, Counter[str]] = field(default_factory=dict, compare=False)

    def words_of(self, store: Store, rows: Sequence[int]) -> list[Counter[str]]:
        missing = [r for r in rows if r not in self.words]
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            found = {p: paper_terms(t, a) for p, t, a in store.paper_texts_of(chunk)}
            for row in chunk:
                self.words[row] = found.get(row, Counter())
        return [self.words[r] for r in rows]


def load_pool(
    store: Store,
    categories: Collection[str],
    since: str,
    model: str,
    previous: CategoryPool | None = None,
) -> CategoryPool:
    """The pool as the store has it now; the vectors and words ``previous`` holds are kept."""
    import numpy as np

    version = store.last_vector_row()
    found = store.category_papers(sorted(categories), since, POOL_MOST)
    vectors: dict[int, npt.NDArray[np.float32]] = {}
    words: dict[int, Counter[str]] = {}
    if previous is not None and previous.model == model:
        vectors = {r: previous.vectors[i] for i, r in enumerate(previous.rows)}
        words = dict(previous.words)  # one copy: other requests may be adding to it
    wanted = [r for r, _, _ in found if r not in vectors]
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        vectors.update((p, from_blob(blob)) for p, blob in store.vectors_of(chunk, model))
    kept = [(r, a, p) for r, a, p in found if r in vectors]
    matrix = (
        np.stack([vectors[r] for r, _, _ in kept]) if kept else np.zeros((0, 0), dtype=np.float32)
    )
    rows = tuple(r for r, _, _ in kept)
    held = set(rows)
    return CategoryPool(
        categories=tuple(sorted(categories)),
        since=since,
        model=model,
        version=version,
        rows=rows,
        arxiv_ids=tuple(a for _, a, _ in kept),
        published=tuple(p for _, _, p in kept),
        vectors=matrix,
        words={r: w for r, w in words.items() if r in held},
    )


def choose(
    store: Store,
    model: ReaderModel,
    pool: CategoryPool,
    bound: int,
    leave_out: Collection[str] = frozenset(),
) -> tuple[Pick, ...]:
    """The ``bound`` papers of the pool the reader's model scores highest (ties: the
    newest), each with why, of those at :data:`SLICE_FLOOR` or above; ``leave_out``:
    arXiv ids the reader has already seen."""
    if bound <= 0 or not pool.rows:
        return ()
    import numpy as np

    rough = model.vector_scores(pool.vectors)
    short: list[int] = []
    for index in np.argsort(-rough, kind="stable"):  # the pool is newest first
        if pool.arxiv_ids[index] not in leave_out:
            short.append(int(index))
            if len(short) >= SHORTLIST * bound:
                break
    if not short:
        return ()
    rows = [pool.rows[i] for i in short]
    scored = model.score_features(pool.vectors[short], pool.words_of(store, rows))
    # Among equal scores the lower index first: the newer paper.
    best = sorted(zip(short, scored, strict=True), key=lambda found: (-found[1].score, found[0]))
    return tuple(
        Pick(pool.arxiv_ids[i], pool.published[i], because)
        for i, because in best[:bound]
        if because.score >= SLICE_FLOOR
    )


def newest_picks(
    store: Store, categories: Collection[str], since: str, bound: int
) -> tuple[Pick, ...]:
    """The newest ``bound`` papers of the categories since ``since`` (a reader with no
    model: nothing tells which of them they would want)."""
    if bound <= 0 or not categories:
        return ()
    return tuple(Pick(a, p) for _, a, p in store.category_papers(sorted(categories), since, bound))


@dataclass(slots=True)
class _KeptPool:
    pool: CategoryPool
    loaded: float
    checked: float


class Slices:
    """The pool and each reader's slice, kept between a server's feed requests.

    The pool is checked against the store's newest vector at most every
    ``refresh`` seconds and then reads only what is new; after ``ttl`` seconds,
    or when a request reaches further back than it holds, it is read afresh
    (papers whose text, and so vector, changed). A reader's slice is chosen
    again when their model's version (what it learned from) or the pool changed.
    """

    def __init__(self, refresh: float = 10.0, ttl: float = 600.0, keep: int = 1024) -> None:
        self.refresh, self.ttl, self.keep = refresh, ttl, keep
        self._pools: dict[tuple[str, str, tuple[str, ...]], _KeptPool] = {}
        self._picks: dict[tuple[str, int], tuple[object, CategoryPool, int, tuple[Pick, ...]]] = {}
        self._lock = threading.Lock()

    def forget_readers(self) -> None:
        """Drop every reader's picks (the shared pools stay): a benchmark's first requests."""
        with self._lock:
            self._picks.clear()

    def pool(
        self, store: Store, categories: Collection[str], since: str, model: str
    ) -> CategoryPool:
        key = (str(store.path), model, tuple(sorted(categories)))
        now = time.monotonic()
        with self._lock:
            kept = self._pools.get(key)
        if kept is not None and since >= kept.pool.since and now - kept.loaded < self.ttl:
            if now - kept.checked < self.refresh:
                return kept.pool
            kept.checked = now
            if store.last_vector_row() == kept.pool.version:
                return kept.pool
            pool = load_pool(store, categories, since, model, kept.pool)
            fresh = _KeptPool(pool, kept.loaded, now)
        else:
            pool = load_pool(store, categories, since, model)
            fresh = _KeptPool(pool, now, now)
        with self._lock:
            self._pools[key] = fresh
        return pool

    def picks(
        self,
        store: Store,
        reader: ReaderId,
        version: object,
        model: ReaderModel,
        pool: CategoryPool,
        bound: int,
        leave_out: Collection[str],
    ) -> tuple[Pick, ...]:
        """The reader's slice, chosen again only when ``version`` (their model's) or the
        pool changed."""
        key = (str(store.path), int(reader))
        with self._lock:
            kept = self._picks.get(key)
        if kept is not None and kept[0] == version and kept[1] is pool and kept[2] == bound:
            return kept[3]
        found = choose(store, model, pool, bound, leave_out)
        with self._lock:
            self._picks.pop(key, None)
            self._picks[key] = (version, pool, bound, found)
            while len(self._picks) > self.keep:  # the longest unused goes first
                self._picks.pop(next(iter(self._picks)))
        return found


#: The slices of a process with no server's windows (the CLI, the digest): checked
#: against the store at every request, so a process that stores and ranks sees its own.
SLICES = Slices(refresh=0.0)
