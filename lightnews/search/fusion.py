"""Search: reciprocal rank fusion of ranked lists (words and meaning).

Full-text scores (BM25) and cosine similarities are not on one scale, so
they are fused by rank, not by score: a paper's fused score is the sum over
the lists it appears in of ``weight / (K + rank)``. With ``K = 60``
(Cormack, Clarke and Büttcher, SIGIR 2009) a paper near the top of both
lists beats a paper at the very top of one; a list's long tail adds little.
A list's weight says how far it is trusted (see ``MEANING_WEIGHT`` in
``lightnews.search``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["K", "fuse"]

K = 60
Key = TypeVar("Key", bound=Hashable)


def fuse(
    lists: Mapping[str, Sequence[Key]],
    weights: Mapping[str, float] | None = None,
    k: int = K,
) -> list[tuple[Key, float, list[str]]]:
    """``(key, fused score, names of the lists it came from)``, best first.

    Lists without a weight weigh 1. Ties keep the order of first appearance
    (lists in the order given).
    """
    scores: dict[Key, float] = {}
    origins: dict[Key, list[str]] = {}
    for name, ranked in lists.items():
        weight = (weights or {}).get(name, 1.0)
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            origins.setdefault(key, []).append(name)
    order = sorted(scores, key=lambda key: scores[key], reverse=True)
    return [(key, scores[key], origins[key]) for key in order]
