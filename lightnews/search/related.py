"""Search: related papers, the whole paper's words fused with its nearest by meaning.

Two rankings of the library against one paper: BM25 over every word of its
title and abstract (``lightnews.embed.lexical``) and the cosine similarity of
its sentence vector (``lightnews.embed``). They are fused by *score*, not by
rank: each is turned into a z-score against the whole library (how far above
an ordinary paper this one is, in that ranking's own spread) and the two are
averaged, ``MEANING_SHARE`` going to meaning (CombSUM over standardised
scores, Montague and Aslam 2001). Unlike rank fusion, a paper that one side
finds far more alike than anything else keeps that lead. The BM25 spread is
exact (every paper's score is computed); the cosine spread is measured on a
fixed random sample of the library's vectors.

Measured on CSFCube's development queries by ``bench/relatedness_eval.py``,
next to TF-IDF cosine, MiniLM cosine and their rank fusion
(``docs/benchmarks.md``). Without numpy (no semantic extra) related papers
fall back to the full-text index's most telling words, and say so.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lightnews.embed import Semantic
from lightnews.store import Store
from lightnews.store.views import PaperHit, PaperPage

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from lightnews.embed.lexical import WordScores

__all__ = ["DEPTH", "MEANING_SHARE", "Candidate", "fuse_scores", "related_by_words_fts"]

#: Share of the fused score that goes to meaning (the rest to words): what
#: leave-one-out selects on the development queries, with the word index's knobs
#: (bench/relatedness_eval.py; 0.3 until 2026-12-06).
MEANING_SHARE = 0.1
#: How many papers each side proposes before the fusion.
DEPTH = 100
#: Vectors sampled to measure how similar an ordinary paper is.
SAMPLE = 2000
# Fallback (no numpy): distinct words weighed, and the count from which a word is common.
RELATED_WORDS_READ = 40
COMMON_AT = 1_000

_samples: dict[tuple[str, str], tuple[int, Any]] = {}
_sample_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Candidate:
    paper_id: int
    score: float
    matched: tuple[str, ...]


def _sample(semantic: Semantic) -> npt.NDArray[np.float32]:
    """A fixed random sample of the library's vectors (taken again when it doubles)."""
    import numpy as np

    from lightnews.embed.index import from_blob

    store, model = semantic.store, semantic.encoder.name
    key = (str(store.path), model)
    size = store.text_marks()[0]
    with _sample_lock:
        cached = _samples.get(key)
        if cached is not None and size <= 2 * cached[0]:
            return cached[1]
        rng = np.random.default_rng(0)
        ids = sorted({int(i) for i in rng.integers(1, max(size, 1) + 1, SAMPLE * 2)})
        rows = store.vectors_of(ids, model)[:SAMPLE]
        matrix = (
            np.stack([from_blob(b) for _, b in rows])
            if rows
            else np.zeros((0, semantic.encoder.dim), np.float32)
        )
        _samples[key] = (max(size, 1), matrix)
        return matrix


def fuse_scores(
    words: WordScores | None,
    semantic: Semantic | None,
    found: tuple[int, Any] | None,
    depth: int = DEPTH,
    share: float = MEANING_SHARE,
) -> list[Candidate]:
    """Candidates of both sides, best first, by ``(1 - share) * z(words) + share * z(meaning)``."""
    matched: dict[int, list[str]] = {}
    for paper_id, _ in words.top if words else []:
        matched.setdefault(paper_id, []).append("words")
    meaning: dict[int, float] = {}
    z_meaning: dict[int, float] = {}
    if semantic is not None and found is not None:
        import numpy as np

        paper_id, vector = found
        for other, similarity in semantic.nearest_to_vector(vector, depth + 1):
            if other != paper_id:
                meaning[other] = similarity
                matched.setdefault(other, []).append("meaning")
        missing = [p for p in matched if p not in meaning]
        meaning.update(semantic.exact(vector, missing))
        sample = np.einsum("ij,j->i", _sample(semantic), vector)  # no BLAS thread team
        mean = float(np.mean(sample)) if len(sample) else 0.0
        std = float(np.std(sample)) if len(sample) > 1 else 1.0
        z_meaning = {p: (s - mean) / std if std > 0 else 0.0 for p, s in meaning.items()}
    if words is None:  # meaning alone
        share = 1.0
    elif not z_meaning:
        share = 0.0
    scored = []
    for paper_id, origins in matched.items():
        z_words = words.z(paper_id) if words else 0.0
        fused = (1 - share) * z_words + share * z_meaning.get(paper_id, 0.0)
        scored.append(Candidate(paper_id, fused, tuple(origins)))
    scored.sort(key=lambda c: c.score, reverse=True)
    return scored


def related_by_words_fts(store: Store, paper: PaperPage, depth: int) -> list[PaperHit]:
    """Without numpy: papers sharing the most telling words, from the full-text index.

    Telling words are the ones few other papers use (counted by the
    full-text index up to ``COMMON_AT`` papers); the eight most telling make
    an OR query ranked by BM25. Bounded work at any library size, but most
    of the abstract is not used: the word index does better (and says so).
    """
    from lightnews.link.title_words import stems

    total = max(store.paper_count(), 1)
    found = re.findall(r"[^\W_]{3,}", f"{paper.title} {paper.abstract}")
    ranked: dict[str, float] = {}
    seen: set[str] = set()
    for word in found:
        stem = next(iter(stems(word)), "")
        if not stem or stem in seen:
            continue
        seen.add(stem)
        if len(seen) > RELATED_WORDS_READ:
            break
        df = store.word_doc_freq(word, COMMON_AT)
        if 2 <= df < COMMON_AT:
            ranked[word.lower()] = math.log((total + 1) / (df + 0.5))
    telling = [w for w, _ in sorted(ranked.items(), key=lambda kv: kv[1], reverse=True)][:8]
    if not telling:
        return []
    return store.related_candidates(telling, paper.arxiv_id, depth)
