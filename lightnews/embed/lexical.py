"""Embed: the word index, papers related by every word of their title and abstract.

Related papers used to ask the full-text index for the eight most telling
words of a paper: most of the abstract was thrown away, and the result was
worse than TF-IDF cosine, the simplest tool a user would pick instead. This
is a real sparse lexical model over the whole title and abstract: Okapi
BM25 (``K1`` and ``B``), Porter stems, English function words left out,
the title's words counted ``TITLE_WEIGHT`` times (a title is the paper's
own summary). The three knobs, with the fusion's share of meaning
(``lightnews.search.related``), are chosen by leave-one-out over the
development queries of ``bench/relatedness_eval.py``. A paper's query is
the paper itself: each of its words weighs its count times its IDF.

Where it lives and how it stays current
---------------------------------------
The *base* is an inverted index (term -> papers and their BM25 term
weights) written beside the database as one file (``<db>.lexical``: a JSON
header, then the arrays), read memory-mapped: a query touches only the postings of
its own words. What the database gained since the base was built is the
*delta*, held in memory by each process and caught up with one cheap query
before every use: papers with a newer row id, and papers whose title or
abstract changed (they were re-embedded: a vector row newer than the base
names them; their base postings are then ignored). New words get their own
entries in the delta.

IDF is computed at query time from the base's document frequencies plus the
delta's, over the base's papers plus the new ones, so a word that becomes
common is weighed as common at once. What is frozen at build time, and so
only approximately right until the next rebuild: the average paper length in
BM25's length normalisation, the document frequencies of words a revised
paper no longer uses, and words found in only one paper at build time (left
out: they relate nothing; a later paper using one finds it again after the
rebuild). The base is rebuilt from scratch when the delta passes
``REBUILD_SHARE`` of it, by the step that embeds new papers
(:func:`keep_lexical_current`, from ``lightnews embed`` and every refresh),
never inside a page request on a large library.

Bounded work: a word's postings are stored heaviest first (impact order) and
a query reads at most ``TERM_POSTINGS`` of one word, taking its words by
weight (count in the paper times IDF) until ``POSTINGS_BUDGET`` postings are
read; a word that would pass the budget is skipped for lighter, rarer ones.
At a million papers that leaves out the lightest postings of common words
and the common words the paper uses once, the ones BM25 weighs least.
"""

from __future__ import annotations

import contextlib
import json
import math
import mmap
import os
import re
import tempfile
import threading
import time
import unicodedata
from array import array
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightnews.normalize.stems import porter_stem
from lightnews.store import Store

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "K1",
    "POSTINGS_BUDGET",
    "TERM_POSTINGS",
    "TITLE_WEIGHT",
    "B",
    "LexicalIndex",
    "WordScores",
    "analyze",
    "catch_up_in_background",
    "forget_lexical",
    "keep_lexical_current",
    "open_lexical",
    "words",
]

#: BM25's term-frequency saturation and length normalisation, and how many times a
#: title's words count against an abstract's: what leave-one-out selects on the
#: development queries (bench/relatedness_eval.py; the textbook 1.2 and 0.75 until
#: 2026-12-06). The index header records them: a change rebuilds ``<db>.lexical``.
K1 = 1.6
B = 0.5
TITLE_WEIGHT = 6
#: Most postings one query reads of one word (a common word's papers that use it
#: most), and of all its words (about 15 ms of work at a million papers).
TERM_POSTINGS = 50_000
POSTINGS_BUDGET = 1_000_000
#: Rebuild the base once the delta holds this share of it.
REBUILD_SHARE = 0.1
#: Libraries up to this many papers get a base built on first use, in the request
#: (about a second); larger ones only from ``keep_lexical_current``.
BUILD_INLINE_UP_TO = 50_000
_BATCH = 20_000
_FORMAT = 2
_MAGIC = b"LNLEX\x00\x00\x01"

# English function words and the boilerplate of abstracts (they relate nothing).
_STOP = frozenset(
    """a about above after again against all almost also although always am among an and
    another any are as at be because been before being below between both but by can
    could did do does doing done down during each either else etc even ever every few
    for from further had has have having he her here hers herself him himself his how
    however i if in into is it its itself just least less many may me might more most
    much must my myself neither no nor not now of off often on once one only or other
    others otherwise our ours ourselves out over own per perhaps rather same several she
    should since so some such than that the their theirs them themselves then there
    therefore these they this those though through thus to too under until up upon us
    very via was we well were what whatever when where whether which while who whom
    whose why will with within without would yet you your yours yourself yourselves
    paper propose proposed show shows shown present presents presented""".split()
)
_TOKEN = re.compile(r"[a-z][a-z0-9]+")
#: Papers counted and put in the delta at a time (the index answers between two batches).
_APPLY = 500
#: How far behind (papers stored plus vectors made since it looked) a serving process's
#: index may be and still catch up inside the request; further behind, a thread of its
#: own catches up (see :func:`catch_up_in_background`).
CATCH_UP_INLINE = 2_000
#: Seconds that thread rests between two batches, so that requests keep their pace.
BACKGROUND_PAUSE = 0.02

_cache: dict[str, LexicalIndex] = {}
_lock = threading.Lock()
_background = False


@lru_cache(maxsize=500_000)
def _stem(word: str) -> str:
    return porter_stem(word)


def words(text: str) -> list[str]:
    """The stems of ``text`` that can relate papers: lower case, accents folded, no stop words."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return [_stem(w) for w in _TOKEN.findall(text.lower()) if w not in _STOP]


def analyze(title: str, abstract: str) -> Counter[str]:
    """A paper's words and their counts (the title's counted ``TITLE_WEIGHT`` times)."""
    counts = Counter(words(abstract))
    for word in words(title):
        counts[word] += TITLE_WEIGHT
    return counts


def _tf_weight(tf: Any, length: Any, avgdl: float) -> Any:
    """BM25's term-frequency part (scalars or numpy arrays)."""
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl))


@dataclass(frozen=True, slots=True)
class WordScores:
    """One query's BM25 scores over the library, and their spread (for fusion by z-score)."""

    top: list[tuple[int, float]]  # (paper id, score), best first
    mean: float  # over every paper of the library, those sharing no word included
    std: float
    _scores: npt.NDArray[np.float64]

    def score(self, paper_id: int) -> float:
        return float(self._scores[paper_id]) if 0 <= paper_id < len(self._scores) else 0.0

    def z(self, paper_id: int) -> float:
        return (self.score(paper_id) - self.mean) / self.std if self.std > 0 else 0.0


@dataclass(slots=True)
class _Base:
    """The inverted index on disk: terms, document frequencies and postings by term."""

    terms: dict[str, int]
    df: npt.NDArray[np.int32]
    indptr: npt.NDArray[np.int64]
    docs: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float16]
    papers: int  # papers indexed
    avgdl: float
    seen_paper: int  # newest paper row id read
    seen_vector: int  # newest vector row id when it was read

    def postings(self, term_id: int, most: int) -> tuple[Any, Any]:
        """The papers with this word and their weights, the ``most`` heaviest."""
        lo, hi = int(self.indptr[term_id]), int(self.indptr[term_id + 1])
        hi = min(hi, lo + most)
        return self.docs[lo:hi], self.weights[lo:hi]


def _empty_base() -> _Base:
    import numpy as np

    return _Base(
        {},
        np.zeros(0, np.int32),
        np.zeros(1, np.int64),
        np.zeros(0, np.int32),
        np.zeros(0, np.float16),
        0,
        1.0,
        0,
        0,
    )


def _build_base(store: Store) -> _Base:
    """Read every titled paper once and index it (about a minute at a million papers)."""
    import numpy as np

    seen_paper, seen_vector = store.text_marks()
    terms: dict[str, int] = {}
    term_col, doc_col, tf_col = array("i"), array("i"), array("f")
    lengths, counted = array("f"), array("i")  # per paper: its length, its distinct words
    after = 0
    while True:
        batch = [row for row in store.paper_texts_after(after, _BATCH) if row[0] <= seen_paper]
        if not batch:
            break
        for paper_id, title, abstract in batch:
            counts = analyze(title, abstract)
            term_col.extend([terms.setdefault(term, len(terms)) for term in counts])
            doc_col.extend([paper_id] * len(counts))
            tf_col.extend(counts.values())
            lengths.append(sum(counts.values()))
            counted.append(len(counts))
        after = batch[-1][0]
    if not lengths:
        base = _empty_base()
        base.seen_paper, base.seen_vector = seen_paper, seen_vector
        return base
    term_ids = np.frombuffer(term_col, dtype=np.int32)
    per_paper = np.frombuffer(lengths, dtype=np.float32)
    length: Any = np.repeat(per_paper, np.frombuffer(counted, np.int32))
    avgdl = float(per_paper.mean()) or 1.0
    weight = _tf_weight(np.frombuffer(tf_col, dtype=np.float32), length, avgdl)
    df = np.bincount(term_ids, minlength=len(terms))
    # A word of one paper relates nothing: left out of the base.
    keep = df >= 2
    renumber = np.cumsum(keep) - 1
    kept = keep[term_ids]
    new_ids = renumber[term_ids[kept]].astype(np.int32)
    # By word, and within a word the papers it weighs most first: a query reads
    # a common word's first ``TERM_POSTINGS`` only (impact order).
    order = np.lexsort((-weight[kept], new_ids))
    kept_df = df[keep].astype(np.int32)
    indptr: Any = np.zeros(len(kept_df) + 1, np.int64)
    np.cumsum(kept_df, out=indptr[1:])
    names = sorted((tid, term) for term, tid in terms.items() if keep[tid])
    return _Base(
        {term: int(renumber[tid]) for tid, term in names},
        kept_df,
        indptr,
        np.frombuffer(doc_col, dtype=np.int32)[kept][order].copy(),
        weight[kept][order].astype(np.float16),
        len(lengths),
        avgdl,
        seen_paper,
        seen_vector,
    )


class LexicalIndex:
    """The base on disk and the delta in memory; BM25 scores of a paper against the library."""

    def __init__(self, base: _Base, stamp: int = 0) -> None:
        self.base = base
        self.stamp = stamp  # the pointer file's mtime when loaded (0: not from disk)
        # The delta: papers read since the base, by paper id; postings by word.
        self._papers: dict[int, Counter[str]] = {}
        self._postings: dict[str, dict[int, float]] = {}
        self._superseded: set[int] = set()  # base papers whose words changed
        self._seen_paper = base.seen_paper
        self._seen_vector = base.seen_vector
        self._lock = threading.Lock()
        self._catching = threading.Lock()
        self._worker: threading.Thread | None = None

    # -- size -------------------------------------------------------------------

    @property
    def papers(self) -> int:
        """Papers indexed: the base's and the delta's new ones."""
        return self.base.papers + sum(1 for p in self._papers if p > self.base.seen_paper)

    @property
    def delta_size(self) -> int:
        return len(self._papers)

    def outgrown(self) -> bool:
        return self.delta_size > max(1000, REBUILD_SHARE * self.base.papers)

    # -- building and keeping up -------------------------------------------------

    @classmethod
    def build(cls, store: Store) -> LexicalIndex:
        index = cls(_build_base(store))
        index.catch_up(store)
        return index

    def catch_up(self, store: Store, pause: float = 0.0) -> int:
        """Read the papers stored or revised since this index last looked; how many.

        Words are counted outside the index's lock and put in ``_APPLY`` papers
        at a time, so a query meanwhile is answered from what the index had;
        ``pause`` seconds between batches leave the processor to other threads.
        """
        newest_paper, newest_vector = store.text_marks()
        if newest_paper <= self._seen_paper and newest_vector <= self._seen_vector:
            return 0
        with self._catching:  # one catch-up at a time
            seen_paper, seen_vector = self._seen_paper, self._seen_vector
            if newest_paper <= seen_paper and newest_vector <= seen_vector:
                return 0  # another thread caught up while this one waited
            rows: list[tuple[int, str, str]] = []
            if newest_vector > seen_vector:
                revised = store.revised_papers(seen_vector, seen_paper)
                for start in range(0, len(revised), 10_000):
                    rows += store.paper_texts_of(revised[start : start + 10_000])
            after = seen_paper
            while after < newest_paper:
                batch = store.paper_texts_after(after, _BATCH)
                rows += [row for row in batch if row[0] <= newest_paper]
                if not batch or batch[-1][0] >= newest_paper:
                    break
                after = batch[-1][0]
            for start in range(0, len(rows), _APPLY):
                counted = [
                    (p, analyze(title, abstract))
                    for p, title, abstract in rows[start : start + _APPLY]
                ]
                with self._lock:
                    for paper_id, counts in counted:
                        self._add(paper_id, counts)
                if pause:
                    time.sleep(pause)
            with self._lock:
                self._seen_paper, self._seen_vector = newest_paper, newest_vector
        return len(rows)

    def keep_up(self, store: Store) -> None:
        """Catch up before a query: inline, unless this process serves pages
        (:func:`catch_up_in_background`) and the index is far behind; then a
        thread of its own catches up, and queries meanwhile are answered from the
        index as it was (the words of papers revised since: their earlier ones).
        """
        worker = self._worker
        if worker is not None and worker.is_alive():
            return
        if _background:
            newest_paper, newest_vector = store.text_marks()
            behind = max(0, newest_paper - self._seen_paper)
            behind += max(0, newest_vector - self._seen_vector)
            if behind > CATCH_UP_INLINE:
                with self._lock:
                    if self._worker is None or not self._worker.is_alive():
                        self._worker = threading.Thread(
                            target=self._catch_up_quietly,
                            args=(store,),
                            daemon=True,
                            name="lexical-catch-up",
                        )
                        self._worker.start()
                return
        self.catch_up(store)

    def _catch_up_quietly(self, store: Store) -> None:
        # The store was closed, or could not answer: a later query tries again.
        with contextlib.suppress(Exception):
            self.catch_up(store, pause=BACKGROUND_PAUSE)

    def _add(self, paper_id: int, counts: Counter[str]) -> None:
        old = self._papers.pop(paper_id, None)
        for term in old or ():
            self._postings[term].pop(paper_id, None)
        if paper_id <= self.base.seen_paper:
            self._superseded.add(paper_id)
        length = sum(counts.values())
        self._papers[paper_id] = counts
        for term, tf in counts.items():
            weight = _tf_weight(tf, length, self.base.avgdl)
            self._postings.setdefault(term, {})[paper_id] = weight

    # -- asking -------------------------------------------------------------------

    def scores(self, counts: Counter[str], exclude: int | None, depth: int) -> WordScores:
        """BM25 of every paper against a paper's words; the ``depth`` best, without ``exclude``."""
        import numpy as np

        with self._lock:
            total = max(self.papers, 1)
            chosen = []
            for term, qtf in counts.items():
                term_id = self.base.terms.get(term)
                delta = self._postings.get(term)
                df = (int(self.base.df[term_id]) if term_id is not None else 0) + len(delta or ())
                if df == 0:
                    continue
                idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
                chosen.append((df, idf * qtf, term_id, dict(delta) if delta else None))
            superseded = np.fromiter(self._superseded, np.int32) if self._superseded else None
        chosen.sort(key=lambda c: -c[1])  # heaviest words first, within the budget
        docs: list[Any] = []
        weights: list[Any] = []
        read = 0
        for df, weight, term_id, delta in chosen:
            if read + min(df, TERM_POSTINGS) > POSTINGS_BUDGET:
                continue  # a lighter, rarer word may still fit
            read += min(df, TERM_POSTINGS)
            if term_id is not None:
                ids, tf_part = self.base.postings(term_id, TERM_POSTINGS)
                if superseded is not None:
                    live = ~np.isin(ids, superseded)
                    ids, tf_part = ids[live], tf_part[live]
                docs.append(ids)
                weights.append(tf_part.astype(np.float32) * np.float32(weight))
            if delta:
                docs.append(np.fromiter(delta.keys(), np.int32, len(delta)))
                weights.append(np.fromiter(delta.values(), np.float32, len(delta)) * weight)
        if not docs:
            return WordScores([], 0.0, 0.0, np.zeros(0))
        scores = np.bincount(np.concatenate(docs), weights=np.concatenate(weights))
        mean = float(scores.sum()) / total
        # einsum, not dot: BLAS would start a thread team for one sum (tens of ms
        # on a busy two-CPU machine).
        squares = float(np.einsum("i,i->", scores, scores))
        std = math.sqrt(max(squares / total - mean * mean, 0.0))
        ranked = scores.copy()
        if exclude is not None and exclude < len(ranked):
            ranked[exclude] = 0.0
        found = int(np.count_nonzero(ranked))
        depth = min(depth, found)
        if depth <= 0:
            return WordScores([], mean, std, scores)
        best = np.argpartition(-ranked, depth - 1)[:depth]
        best = best[np.argsort(-ranked[best], kind="stable")]
        return WordScores([(int(i), float(ranked[i])) for i in best], mean, std, scores)

    # -- on disk --------------------------------------------------------------------

    @staticmethod
    def path(db_path: Path) -> Path:
        return Path(f"{db_path}.lexical")

    def save(self, db_path: Path) -> None:
        """Write the base beside the database as one file (atomically: readers see the
        old file or the new one; one already mapped stays readable)."""
        base = self.base
        names = sorted(base.terms, key=base.terms.__getitem__)
        blobs = {"terms": "\n".join(names).encode("utf-8")}
        specs: dict[str, Any] = {}
        offset = 0
        for name in ("df", "indptr", "docs", "weights"):
            array_ = getattr(base, name)
            blobs[name] = array_.tobytes()
            specs[name] = {"dtype": array_.dtype.str, "count": int(array_.size)}
        for name, blob in blobs.items():
            specs.setdefault(name, {})["offset"] = offset
            specs[name]["bytes"] = len(blob)
            offset += -(-len(blob) // 64) * 64  # each array 64-byte aligned
        meta = {
            "format": _FORMAT,
            "k1": K1,
            "b": B,
            "title_weight": TITLE_WEIGHT,
            "arrays": specs,
            "papers": base.papers,
            "avgdl": base.avgdl,
            "seen_paper": base.seen_paper,
            "seen_vector": base.seen_vector,
        }
        header = json.dumps(meta).encode("utf-8")
        start = -(-(16 + len(header)) // 64) * 64
        path = self.path(db_path)
        # A name of its own: two web processes saving at once must not write one file.
        handle, name_ = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        tmp = Path(name_)
        try:
            os.fchmod(handle, 0o644)  # as open() made it: readable by another service user
            with os.fdopen(handle, "wb") as out:
                out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
                for name, blob in blobs.items():
                    out.seek(start + specs[name]["offset"])
                    out.write(blob)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self.stamp = path.stat().st_mtime_ns

    @classmethod
    def load(cls, db_path: Path) -> LexicalIndex | None:
        """The saved base, if there is a usable one (made with today's settings)."""
        import numpy as np

        path = cls.path(db_path)
        try:
            stamp = path.stat().st_mtime_ns
            with path.open("rb") as file:
                head = file.read(16)
                if head[:8] != _MAGIC:
                    return None
                size = int.from_bytes(head[8:], "little")
                meta = json.loads(file.read(size))
            if (meta["format"], meta["k1"], meta["b"], meta["title_weight"]) != (
                _FORMAT,
                K1,
                B,
                TITLE_WEIGHT,
            ):
                return None
            start = -(-(16 + size) // 64) * 64
            with path.open("rb") as file:
                # Plain arrays over the mapping (numpy's memmap class costs
                # microseconds on every slice: a query takes a hundred).
                mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            arrays: dict[str, Any] = {}
            for name, spec in meta["arrays"].items():
                dtype = np.dtype("u1" if name == "terms" else spec["dtype"])
                arrays[name] = np.frombuffer(
                    mapped, dtype, spec["bytes"] // dtype.itemsize, start + spec["offset"]
                )
            text = arrays.pop("terms").tobytes().decode("utf-8")
        except (OSError, ValueError, KeyError, TypeError):
            return None
        names = text.split("\n") if text else []
        if len(names) != len(arrays["df"]) or len(arrays["indptr"]) != len(names) + 1:
            return None
        base = _Base(
            dict(zip(names, range(len(names)), strict=True)),
            np.array(arrays["df"]),
            arrays["indptr"],
            arrays["docs"],
            arrays["weights"],
            int(meta["papers"]),
            float(meta["avgdl"]),
            int(meta["seen_paper"]),
            int(meta["seen_vector"]),
        )
        return cls(base, stamp)

    def replaced_on_disk(self, db_path: Path) -> bool:
        """True when another process saved a newer base since this one was loaded."""
        try:
            return self.path(db_path).stat().st_mtime_ns != self.stamp
        except OSError:
            return self.stamp != 0


def _on_disk(store: Store) -> bool:
    return str(store.path) != ":memory:"


def open_lexical(store: Store, build_up_to: int | None = BUILD_INLINE_UP_TO) -> LexicalIndex | None:
    """The library's word index, current; None when numpy is missing, or when there is
    none yet and the library is larger than ``build_up_to`` papers (None: any size)."""
    try:
        import numpy  # noqa: F401
    except ImportError:  # pragma: no cover - the semantic extra brings numpy
        return None
    key = str(store.path.resolve()) if _on_disk(store) else f":memory:{id(store)}"
    with _lock:
        index = _cache.get(key)
        if index is None or (_on_disk(store) and index.replaced_on_disk(store.path)):
            index = LexicalIndex.load(store.path) if _on_disk(store) else None
            # A base that has seen rows the database does not have belongs to
            # another database (the file was replaced): build again.
            if index is not None and index.base.seen_paper > store.text_marks()[0]:
                index = None
            if index is None:
                if build_up_to is not None and store.text_marks()[0] > build_up_to:
                    return None
                index = LexicalIndex.build(store)
                if _on_disk(store):
                    index.save(store.path)
            _cache[key] = index
    index.keep_up(store)
    return index


def catch_up_in_background(on: bool) -> None:
    """In this process (a web server), an index far behind the library catches up in a
    thread of its own instead of inside the request that found it behind.

    A snapshot merge re-embeds tens of thousands of papers; counting their words
    took a story page 6 s of processor time on the 150k-paper library (and every
    other request of the process waited for its turn at the interpreter).
    """
    global _background
    _background = on


def keep_lexical_current(store: Store) -> LexicalIndex | None:
    """Build the word index if there is none, rebuild it when its delta has outgrown it.

    Called where new papers are embedded (``lightnews embed``, every refresh):
    the place where a minute of work at a million papers is expected.
    """
    index = open_lexical(store, build_up_to=None)
    if index is None or not index.outgrown():
        return index
    rebuilt = LexicalIndex.build(store)
    if _on_disk(store):
        rebuilt.save(store.path)
    with _lock:
        _cache[str(store.path.resolve()) if _on_disk(store) else f":memory:{id(store)}"] = rebuilt
    return rebuilt


def forget_lexical(db_path: Path | None = None) -> None:
    """Drop in-process word indexes (of one database, or all): tests and database swaps."""
    with _lock:
        for key in [k for k in _cache if db_path is None or k == str(db_path.resolve())]:
            del _cache[key]
