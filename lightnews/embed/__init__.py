"""Embed: sentence vectors of papers, so search and related papers follow meaning.

This step sits between storing papers and searching them. It is optional:
it needs the ``semantic`` extra (the packaged all-MiniLM-L6-v2 weights and
the libraries that run them); without it, search and related papers stay
lexical and say why. A library's vectors all come from one encoder (the
``semantic`` setting: ``minilm-int8``, ``static`` or ``minilm``, see ``encoders``), whose
name is stored with every vector; queries are encoded by the same one.

:func:`embed_papers` embeds what is not embedded yet, in batches, and keeps
the vector index beside the database current, and with it the word index of
related papers (``lexical``); a refresh calls it for new papers and
``lightnews embed`` runs it over a whole library.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightnews.embed.encoders import (
    ENCODERS,
    INSTALL_HINT,
    Encoder,
    SemanticUnavailable,
    forget_installed,
    load_encoder,
    missing_packages,
)
from lightnews.embed.index import DatabaseVectorIndex, VectorIndex, from_blob, from_blobs, to_blob
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.readers import ReaderId

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ENCODERS",
    "Closeness",
    "EmbedReport",
    "Semantic",
    "SemanticUnavailable",
    "closest_interests",
    "embed_new",
    "embed_papers",
    "forget_interests",
    "open_semantic",
    "paper_text",
]

_encoders: dict[str, Encoder] = {}
_indexes: dict[tuple[str, str], VectorIndex] = {}
_lock = threading.Lock()


def paper_text(title: str, abstract: str) -> str:
    """What is embedded of a paper: its title, then its abstract."""
    return f"{title.strip()}. {abstract.strip()}" if abstract.strip() else title.strip()


def encoder_for(settings: Settings) -> Encoder:
    """The library's encoder (loaded once per process)."""
    name = str(settings.semantic)
    if name == "off":
        raise SemanticUnavailable("semantic search is off (setting semantic = off)")
    with _lock:
        if name not in _encoders:
            _encoders[name] = load_encoder(name)
        return _encoders[name]


def _index_for(store: Store, encoder: Encoder) -> VectorIndex | DatabaseVectorIndex:
    """The store's vector index for ``encoder``, loaded or built once, then kept current
    (the database's own on a backend that indexes vectors: nothing to load)."""
    if store.vectors_indexed:
        return DatabaseVectorIndex(store, encoder.name, encoder.dim)
    key = (str(store.path.resolve()), encoder.name)
    with _lock:
        index = _indexes.get(key)
        if index is None:
            index = VectorIndex.load(store.path, encoder.name, encoder.dim)
            # An index that has seen rows the database does not have belongs to
            # another database (the file was replaced): rebuild it.
            stale = index is not None and index.seen > store.last_vector_row()
            if index is None or stale:  # none yet, or the database was replaced
                index = VectorIndex.build(store, encoder.name, encoder.dim)
                if index.size:
                    index.save(store.path)
            _indexes[key] = index
    index.catch_up(store)
    if index.outgrown():
        with _lock:
            index = VectorIndex.build(store, encoder.name, encoder.dim)
            index.save(store.path)
            _indexes[key] = index
    return index


@dataclass(slots=True)
class Semantic:
    """One library's encoder and vector index: nearest papers to a text or a paper."""

    store: Store
    encoder: Encoder
    index: VectorIndex | DatabaseVectorIndex

    def nearest_to_text(self, text: str, k: int) -> list[tuple[int, float]]:
        return self.index.search(self.encoder.encode([text])[0], k)

    def nearest_to_vector(self, vector: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        return self.index.search(vector, k)

    def vector_of(self, arxiv_id: str) -> tuple[int, npt.NDArray[np.float32]] | None:
        found = self.store.paper_vector(arxiv_id, self.encoder.name)
        return (found[0], from_blob(found[1])) if found else None

    def exact(
        self, vector: npt.NDArray[np.float32], paper_ids: list[int]
    ) -> list[tuple[int, float]]:
        """Similarity to exactly these papers (a narrow filter), nearest first."""
        import numpy as np

        if isinstance(self.index, DatabaseVectorIndex):
            return self.index.exact(vector, paper_ids)
        rows = self.store.vectors_of(paper_ids, self.encoder.name)
        if not rows:
            return []
        matrix = np.stack([from_blob(blob) for _, blob in rows])
        scores = matrix @ vector
        order = np.argsort(-scores)
        return [(rows[i][0], float(scores[i])) for i in order]

    def pending(self, cap: int | None = None) -> int:
        return self.store.count_unembedded(cap)


def open_semantic(store: Store, settings: Settings) -> Semantic:
    """Semantic search over ``store``, or :class:`SemanticUnavailable` saying why not."""
    encoder = encoder_for(settings)
    if not store.has_vectors(encoder.name):
        raise SemanticUnavailable(
            f"no paper has a {encoder.name} vector yet: run `lightnews embed`"
        )
    return Semantic(store, encoder, _index_for(store, encoder))


def semantic_unavailable(settings: Settings) -> str | None:
    """Why meaning-based search cannot run with these settings, or None when it can."""
    name = str(settings.semantic)
    if name == "off":
        return "semantic search is off (setting semantic = off)"
    missing = missing_packages(name)
    if missing:
        return f"the {name} encoder needs {', '.join(missing)}: {INSTALL_HINT}"
    return None


# Cosine similarity from which two papers can count as close: the 95th
# percentile of random pairs of ML papers for each encoder (measured on the
# real 11k corpus: the static encoder's similarities run high). Among many
# stories only the closest fifth count (CLOSE_SHARE): the nearest of several
# hundred interest papers is always fairly near. minilm-int8: random pairs of
# 800 papers' title and abstract have p50 0.30, p95 0.52 (static by the same
# measure: p95 0.83), a paper's nearest neighbour p50 0.66.
CLOSE_FROM = {"static": 0.80, "minilm": 0.57, "minilm-int8": 0.50}
CLOSE_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class Closeness:
    """The paper the user cares about that a story's paper is nearest to."""

    similarity: float
    strength: float  # 0 at the closeness floor, 1 for the same text
    arxiv_id: str
    title: str
    scholar: str | None  # whose paper it is; None for a paper the user saved


_interest_cache: dict[tuple[str, int, str, float], tuple[Any, float, Any, Any]] = {}
INTEREST_TTL = 300.0
#: While writers change the library (a snapshot merge or a refresh stores papers and
#: vectors every moment), the interests are read again at most this often; a change
#: of the reader's own (a follow, a save) is seen at once.
INTEREST_REFRESH = 30.0


def _interests(store: Store, reader: ReaderId, model: str, bar: float) -> tuple[list[Any], Any]:
    """The user's interest papers and their vectors as one matrix, kept between requests.

    Reading them costs tens of milliseconds on a large library; they change
    only when follows, attributions, saves or vectors do (or after
    ``INTEREST_TTL`` seconds, for changes the version cannot see). The library's
    part of the version moves with every paper a writer stores: within
    ``INTEREST_REFRESH`` seconds of the last read, only the reader's own part
    counts (a merge otherwise made every feed request read them again).
    """
    key = (str(store.path), reader, model, bar)
    version = store.interest_version(reader)
    cached = _interest_cache.get(key)
    age = time.monotonic() - cached[1] if cached else math.inf
    if (
        cached
        and age < INTEREST_TTL
        and (cached[0] == version or (cached[0][1] == version[1] and age < INTEREST_REFRESH))
    ):
        return cached[2], cached[3]
    interests = store.interest_vectors(reader, model, bar)
    dim = len(interests[0][2]) // 2 if interests else 1
    matrix = from_blobs([blob for _, _, blob in interests], dim)
    slim = [(paper_id, scholar_id, b"") for paper_id, scholar_id, _ in interests]
    _interest_cache[key] = (version, time.monotonic(), slim, matrix)
    return slim, matrix


#: Each reader's papers' nearest interest (row id, cosine, interest's row in the matrix;
#: None: no vector), kept as long as the interest matrix it was worked out against.
_nearest: dict[
    tuple[str, int, str, float], tuple[Any, dict[str, tuple[int, float, int] | None]]
] = {}
#: Papers kept per reader (a few feeds' candidates).
NEAREST_MOST = 5_000


def forget_interests() -> None:
    """Drop every reader's kept interests and their papers' nearest (a benchmark's first
    requests: what a process knows of a reader it has not served)."""
    _interest_cache.clear()
    _nearest.clear()


def _nearest_interest(
    store: Store, key: tuple[str, int, str, float], matrix: Any, arxiv_ids: list[str]
) -> dict[str, tuple[int, float, int] | None]:
    """Each paper's nearest interest, worked out only for papers not asked about since
    the reader's interests were last read: a reader's candidates are mostly the same at
    each request, and the product of their vectors with every interest was a fifth of
    a feed request on a library of a million papers."""
    kept = _nearest.get(key)
    memo = kept[1] if kept is not None and kept[0] is matrix else {}
    if len(memo) > NEAREST_MOST:
        memo = {}
    todo = [a for a in arxiv_ids if a not in memo]
    if todo:
        theirs = store.vectors_by_arxiv_id(todo, key[2])
        found = [a for a in todo if a in theirs]
        if found:
            similarity = from_blobs([theirs[a][1] for a in found], matrix.shape[1]) @ matrix.T
            best = similarity.argmax(axis=1)
            values = similarity[range(len(found)), best]
            for a, v, b in zip(found, values, best, strict=True):
                memo[a] = (theirs[a][0], float(v), int(b))
        memo.update((a, None) for a in todo if a not in theirs)
    _nearest[key] = (matrix, memo)
    return memo


def closest_interests(
    store: Store, reader: ReaderId, settings: Settings, arxiv_ids: list[str], bar: float
) -> dict[str, Closeness]:
    """For each paper, the closest paper by a followed scholar or saved, when close enough.

    Close enough: above the encoder's floor and among the closest fifth of the
    papers asked about.

    Empty without the semantic extra or vectors: the feed then ranks without
    this signal (and says nothing about it).
    """
    # Stored vectors are all this needs: no encoder to load, no index to open.
    if semantic_unavailable(settings):
        return {}
    import numpy as np

    model = str(settings.semantic)
    interests, matrix = _interests(store, reader, model, bar)
    if not interests:
        return {}
    memo = _nearest_interest(store, (str(store.path), reader, model, bar), matrix, arxiv_ids)
    # Papers that are themselves the user's (a followed scholar's, or saved) say
    # so in their own words; closeness is for the others.
    own = {paper_id for paper_id, _, _ in interests}
    nearest = {a: n for a in arxiv_ids if (n := memo.get(a)) is not None and n[0] not in own}
    if not nearest:
        return {}
    values = np.array([v for _, v, _ in nearest.values()], dtype=np.float32)
    floor = max(CLOSE_FROM.get(model, 0.8), float(np.quantile(values, 1 - CLOSE_SHARE)))
    chosen = {a: (v, interests[b]) for a, (_, v, b) in nearest.items() if v >= floor}
    papers = store.papers_by_rowids([paper_id for _, (paper_id, _, _) in chosen.values()])
    names = store.scholar_names(s for _, (_, s, _) in chosen.values() if s is not None)
    found: dict[str, Closeness] = {}
    for arxiv_id, (value, (paper_id, scholar_id, _)) in chosen.items():
        paper = papers.get(paper_id)
        if paper is None:
            continue
        strength = min(1.0, (value - floor) / max(1e-6, 1 - floor))
        scholar = names.get(scholar_id, "a scholar you follow") if scholar_id is not None else None
        found[arxiv_id] = Closeness(value, strength, paper.arxiv_id, paper.title, scholar)
    return found


@dataclass(slots=True)
class EmbedReport:
    encoder: str
    embedded: int = 0
    seconds: float = 0.0
    remaining: int = 0

    @property
    def per_second(self) -> float:
        return self.embedded / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "encoder": self.encoder,
            "embedded": self.embedded,
            "seconds": round(self.seconds, 2),
            "per_second": round(self.per_second, 1),
            "remaining": self.remaining,
        }


def embed_papers(
    store: Store,
    settings: Settings,
    *,
    limit: int | None = None,
    batch_size: int = 1024,
    progress: Callable[[EmbedReport], None] | None = None,
) -> EmbedReport:
    """Embed papers that have no vector from the library's encoder yet; safe to re-run.

    Each batch is committed as it is done, so an interrupted run keeps its
    work and the next run goes on from there. Vectors of another encoder
    (the setting was changed) are dropped first: one library, one space.
    """
    encoder = encoder_for(settings)
    if store.other_models(encoder.name):
        with store.transaction():
            store.drop_vectors(keep_model=encoder.name)
            store.requeue_all_papers()
    elif not store.has_vectors(encoder.name) and store.count_unembedded() == 0:
        store.requeue_all_papers()  # vectors lost or never made
    report = EmbedReport(encoder.name)
    started = time.perf_counter()
    queued = store.count_unembedded()
    expected = queued if limit is None else min(queued, limit)
    memory = int(settings.index_build_memory)
    # A large backlog (a library imported whole): a database that indexes vectors
    # builds its index once at the end, not vector by vector (see the store).
    with store.vectors_in_bulk(encoder.name, encoder.dim, expected, memory):
        while limit is None or report.embedded < limit:
            want = batch_size if limit is None else min(batch_size, limit - report.embedded)
            batch = store.unembedded_papers(want)
            if not batch:
                break
            vectors = encoder.encode([paper_text(title, abstract) for _, title, abstract in batch])
            store.save_vectors(
                encoder.name,
                [(row[0], to_blob(v)) for row, v in zip(batch, vectors, strict=True)],
            )
            report.embedded += len(batch)
            report.seconds = time.perf_counter() - started
            if progress:
                progress(report)
    if store.vectors_indexed and store.has_vectors(encoder.name):
        # Vectors stored without their index (a library copied in, an embed stopped
        # half way) get it now, not at the next new paper.
        store.ensure_vector_index(encoder.name, encoder.dim, memory)
    report.seconds = time.perf_counter() - started
    report.remaining = store.count_unembedded()
    if report.embedded and str(store.path) != ":memory:" and not store.vectors_indexed:
        index = _index_for(store, encoder)
        # Saving a large index costs a second or two: worth it once enough is new
        # (other processes catch up on the rest from the database).
        if (
            report.embedded >= min(1000, index.size // 100)
            or not index.paths(store.path, encoder.name)[0].exists()
        ):
            index.save(store.path)
    # The word index of related papers follows the same papers (built when
    # missing, rebuilt when outgrown: the minute it takes at a million papers
    # belongs here, not in a page request).
    from lightnews.embed.lexical import keep_lexical_current

    keep_lexical_current(store)
    return report


def forget_cached(db_path: Path | None = None) -> None:
    """Drop in-process indexes (of one database, or all): tests and database swaps."""
    with _lock:
        for key in [k for k in _indexes if db_path is None or k[0] == str(db_path.resolve())]:
            del _indexes[key]
    from lightnews.embed.lexical import forget_lexical

    forget_lexical(db_path)
    if db_path is None:  # what is installed is asked again
        forget_installed()


def embed_new(store: Store, settings: Settings) -> EmbedReport | str:
    """Embed the papers new or changed since the last run; or why it cannot here.

    Without the semantic extra (or with ``semantic = off``) nothing happens and
    the reason is returned: search then stays lexical and says so.
    """
    reason = semantic_unavailable(settings)
    if reason:
        return reason
    try:
        return embed_papers(store, settings)
    except SemanticUnavailable as error:
        return str(error)
