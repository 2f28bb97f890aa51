"""Benchmark: related papers in time on a large library (target p95 < 100 ms at 1M).

Builds (or reuses) ``bench/out/import-N.db`` from the synthetic snapshot of
``bench/make_snapshot.py`` (real titles and abstracts spliced; see there),
then times :func:`lightnews.search.related_papers` (``limit=10``, as the CLI
and the story page call it) for 200 papers drawn with a fixed seed, after one
warm-up pass, ``--passes`` times each. Also reported: the word half alone
(BM25 over the word index: the paper's words, their postings, the top
hundred), how long the word index took to build and its size on disk.

Vectors: with ``--fake-vectors`` every paper without a vector of the
configured encoder (the default's unless ``LIGHTNEWS_SEMANTIC`` says
otherwise) gets a random unit vector of that encoder's size (stored as the
encoder would, float16) instead of being embedded, because embedding a
million papers takes longer than this benchmark should. The vector index's
work per query does not depend on what the vectors mean (an inverted-file
index probes a fixed number of lists), so the timing holds; the *neighbours*
are meaningless and are not looked at.

    .venv/bin/python bench/related_latency.py --records 1000000 --fake-vectors
    .venv/bin/python bench/related_latency.py --db bench/out/import-200000.db --fake-vectors
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from lightnews.embed import encoder_for, open_semantic  # noqa: E402
from lightnews.embed.index import to_blob  # noqa: E402
from lightnews.embed.lexical import LexicalIndex, analyze, keep_lexical_current  # noqa: E402
from lightnews.search import related_papers  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.store import SQLiteStore  # noqa: E402


def fake_vectors(store: SQLiteStore, model: str, dim: int, chunk: int = 50_000) -> int:
    """Random unit vectors for every queued paper (timing only: they mean nothing)."""
    rng = np.random.default_rng(0)
    written = 0
    while True:
        batch = store.unembedded_papers(chunk)
        if not batch:
            return written
        vectors = rng.standard_normal((len(batch), dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = [(row[0], to_blob(v)) for row, v in zip(batch, vectors, strict=True)]
        store.save_vectors(model, rows)
        written += len(batch)
        print(f"  {written:,} fake vectors", file=sys.stderr, flush=True)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--db", type=Path)
    where.add_argument("--records", type=int, help="build (or reuse) bench/out/import-N.db")
    parser.add_argument("--fake-vectors", action="store_true")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--papers", type=int, default=200)
    args = parser.parse_args()
    if args.records:
        from search_latency import build_db

        db = build_db(args.records)
    else:
        db = args.db
    settings = Settings(environ={k: v for k, v in os.environ.items() if k == "LIGHTNEWS_SEMANTIC"})
    store = SQLiteStore(db)
    encoder = encoder_for(settings)
    if args.fake_vectors and not store.has_vectors(encoder.name):
        store.requeue_all_papers()  # vectors of another encoder only
    if args.fake_vectors and store.count_unembedded():
        started = time.perf_counter()
        written = fake_vectors(store, encoder.name, encoder.dim)
        print(f"fake {encoder.name} vectors: {written:,} in {time.perf_counter() - started:.0f}s")
    started = time.perf_counter()
    semantic = open_semantic(store, settings)  # builds the vector index if missing
    print(
        f"vector index: {semantic.index.size:,} vectors, ready in "
        f"{time.perf_counter() - started:.1f}s"
    )
    started = time.perf_counter()
    lexical = keep_lexical_current(store)
    assert lexical is not None
    size = LexicalIndex.path(db).stat().st_size
    print(
        f"word index: {lexical.papers:,} papers, {len(lexical.base.terms):,} words, "
        f"{len(lexical.base.docs):,} postings, {size / 1e6:,.0f} MB, ready in "
        f"{time.perf_counter() - started:.0f}s"
    )
    top = store.text_marks()[0]
    rng = random.Random(1)
    ids: list[str] = []
    while len(ids) < args.papers:
        row = store.db.execute(
            "SELECT arxiv_id FROM papers WHERE id >= ? AND title != '' LIMIT 1",
            (rng.randint(1, top),),
        ).fetchone()
        if row:
            ids.append(row[0])
    for arxiv_id in ids:  # warm-up
        related_papers(store, arxiv_id, limit=10, settings=settings)
    whole: list[float] = []
    words: list[float] = []
    cpu = {"whole": 0.0, "words": 0.0}
    load = os.getloadavg()[0]
    for _ in range(args.passes):
        for arxiv_id in ids:
            started, ticks = time.perf_counter(), time.process_time()
            related_papers(store, arxiv_id, limit=10, settings=settings)
            whole.append((time.perf_counter() - started) * 1000)
            cpu["whole"] += time.process_time() - ticks
            paper = store.get_paper(arxiv_id)
            started, ticks = time.perf_counter(), time.process_time()
            lexical.scores(analyze(paper.title, paper.abstract), None, 100)
            words.append((time.perf_counter() - started) * 1000)
            cpu["words"] += time.process_time() - ticks
    load = (load + os.getloadavg()[0]) / 2
    print(
        f"\n{db.name}: {len(ids)} papers x {args.passes} passes; load average {load:.1f} "
        f"on {os.cpu_count()} CPUs (other programs)"
    )
    print("| what | p50 ms | p95 ms | p99 ms | max ms | mean CPU ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, key, values in (
        ("related_papers (words + meaning, fused)", "whole", whole),
        ("word half alone (BM25 top 100)", "words", words),
    ):
        print(
            f"| {name} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} | "
            f"{percentile(values, 0.99):.1f} | {max(values):.1f} | "
            f"{cpu[key] / len(values) * 1000:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
