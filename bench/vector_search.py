"""Benchmark: nearest papers by meaning, pgvector's HNSW index (PostgreSQL) beside FAISS (SQLite).

The meaning half of a hybrid search asks for the ``depth + 1`` (51) nearest
papers to the query's vector. On PostgreSQL that is
``PostgresStore.nearest_vectors`` (the encoder's HNSW index, cosine over
halfvec, filters applied during the scan); on SQLite the FAISS index beside
the file (``lightnews.embed.index.VectorIndex``, exact up to 20,000 vectors,
then IVF). Both get the same ``--papers`` unit vectors of 384 dimensions (the
size of MiniLM's) in topics of about 100 papers, and the same queries (a
topic's direction with noise, near its papers as a real query is). Reported per backend: build time,
query p50/p95/p99 (unfiltered, and filtered to a subject a quarter of the
papers have), recall of the exact ten nearest, and the load average.

    .venv/bin/python bench/vector_search.py --papers 50000
    .venv/bin/python bench/vector_search.py --papers 1000000 --queries 300
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _measure import OUT, machine

MODEL = "bench-encoder"
DIM = 384
K = 51
TOPIC_SIZE = 100  # papers per topic


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(pick(0.95) * 1000, 2),
        "p99_ms": round(pick(0.99) * 1000, 2),
    }


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--index-memory", type=int, default=2048, help="index_build_memory (MB) of the HNSW build"
    )
    args = parser.parse_args(argv)

    import numpy as np

    from lightnews.embed.index import VectorIndex
    from lightnews.model import SearchFilters
    from lightnews.store.pg_vectors import hnsw_build_memory_mb
    from lightnews.store.postgres import PostgresStore, test_server

    rng = np.random.default_rng(args.seed)

    def unit(rows: Any) -> Any:
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    # Papers come in topics (as real ones do: uniform random vectors have no
    # near neighbours, and no index finds what is not there): a paper is its
    # topic's direction plus noise (cosine ~0.7 to it, ~0.5 to a neighbour).
    topics = unit(rng.normal(size=(max(args.papers // TOPIC_SIZE, 1), DIM)))
    members = rng.integers(0, len(topics), args.papers)
    vectors = unit(topics[members] + rng.normal(scale=0.05, size=(args.papers, DIM)))
    vectors = vectors.astype(np.float16).astype(np.float32)
    asked = rng.integers(0, len(topics), args.queries)
    queries = unit(topics[asked] + rng.normal(scale=0.05, size=(args.queries, DIM)))
    queries = queries.astype(np.float32)
    robots = np.arange(args.papers) % 4 == 0  # a quarter of the papers: subject cs.RO
    exact10 = [set(np.argsort(-(vectors @ q))[:10].tolist()) for q in queries]
    exact_robots = [
        set(np.flatnonzero(robots)[np.argsort(-(vectors[robots] @ q))[:10]].tolist())
        for q in queries
    ]
    info = machine()
    rows: list[dict[str, Any]] = []

    # -- FAISS, as SQLite libraries use it --------------------------------------------
    started, load = time.perf_counter(), _load()
    index = VectorIndex._layout(args.papers, DIM)
    if not index.is_trained:
        index.train(vectors[:: max(1, args.papers // (index.nlist * 40))])
    index.add_with_ids(vectors, np.arange(args.papers, dtype=np.int64))
    faiss_index = VectorIndex(MODEL, DIM, index, 0, args.papers)
    build = time.perf_counter() - started
    times, recall = [], []
    for q, want in zip(queries, exact10, strict=True):
        t = time.perf_counter()
        found = faiss_index.search(q, K)
        times.append(time.perf_counter() - t)
        recall.append(len({i for i, _ in found[:10]} & want) / 10)
    layout = "exact" if args.papers <= 20_000 else "IVF"
    rows.append(
        {
            "backend": f"SQLite: FAISS {layout}",
            "query": "unfiltered",
            "build_s": round(build, 1),
            **_percentiles(times),
            "recall10": round(float(np.mean(recall)), 3),
            "load": f"{load}–{_load()}",
        }
    )
    # (a filter on SQLite: 4x the depth asked of the index, then the filter; see search/)
    times, recall = [], []
    for q, want in zip(queries, exact_robots, strict=True):
        t = time.perf_counter()
        found = [(i, s) for i, s in faiss_index.search(q, 4 * K) if robots[i]][:K]
        times.append(time.perf_counter() - t)
        recall.append(len({i for i, _ in found[:10]} & want) / 10)
    rows.append(
        {
            "backend": rows[-1]["backend"],
            "query": "subject filter (1 in 4)",
            "build_s": "",
            **_percentiles(times),
            "recall10": round(float(np.mean(recall)), 3),
            "load": _load(),
        }
    )
    print(json.dumps(rows[-2:]), file=sys.stderr, flush=True)

    # -- pgvector's HNSW, as PostgreSQL libraries use it ---------------------------------
    with (
        tempfile.TemporaryDirectory(prefix="lightnews-bench-pg-") as folder,
        test_server(folder) as url,
    ):
        store = PostgresStore(url, pool_size=2)
        db = store.db
        db.execute(
            "INSERT INTO papers (arxiv_id, title, categories, primary_category, first_seen, "
            "modified) SELECT format('9901.%s', n), format('Paper %s', n), "
            "CASE WHEN n % 4 = 0 THEN 'cs.RO' ELSE 'cs.LG' END, "
            "CASE WHEN n % 4 = 0 THEN 'cs.RO' ELSE 'cs.LG' END, 'now', 'now' "
            "FROM generate_series(0, ?) AS n ORDER BY n",
            (args.papers - 1,),
        )
        first = int(db.execute("SELECT min(id) FROM papers").fetchone()[0])
        db.execute("TRUNCATE embed_queue")
        with db.conn.cursor().copy(
            "COPY paper_vectors (paper_id, model, vector) FROM STDIN"
        ) as copy:
            for n, v in enumerate(vectors):
                copy.write_row((first + n, MODEL, "[" + ",".join(f"{x:.5f}" for x in v) + "]"))
        started, load = time.perf_counter(), _load()
        # The product's build over stored vectors (as `lightnews embed` ends, and `db copy`):
        # maintenance_work_mem sized to hold the graph, bounded by index_build_memory.
        store.ensure_vector_index(MODEL, DIM, args.index_memory)
        build = time.perf_counter() - started
        build_memory = hnsw_build_memory_mb(args.papers, DIM, args.index_memory)
        print(
            json.dumps({"hnsw_build_s": round(build, 1), "memory_mb": build_memory}),
            file=sys.stderr,
            flush=True,
        )
        db.execute("ANALYZE")
        for label, filters, wanted in (
            ("unfiltered", None, exact10),
            ("subject filter (1 in 4)", SearchFilters(subject="cs.RO"), exact_robots),
        ):
            times, recall = [], []
            for q, want in zip(queries, wanted, strict=True):
                blob = q.astype("<f2").tobytes()
                t = time.perf_counter()
                found = store.nearest_vectors(MODEL, blob, K, filters=filters)
                times.append(time.perf_counter() - t)
                recall.append(len({i - first for i, _ in found[:10]} & want) / 10)
            rows.append(
                {
                    "backend": "PostgreSQL: pgvector HNSW",
                    "query": label,
                    "build_s": round(build, 1) if filters is None else "",
                    **_percentiles(times),
                    "recall10": round(float(np.mean(recall)), 3),
                    "load": f"{load}–{_load()}",
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        store.close()

    print(f"\n## Nearest by meaning, {args.papers:,} papers × {DIM} dimensions, k = {K}\n")
    print(
        f"{info['date']}; {info['cpus']} CPUs ({info['cpu']}); load average at start "
        f"{info['load_avg']}; {args.queries} queries\n"
    )
    print("| index | query | build s | p50 ms | p95 ms | p99 ms | recall@10 | load |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(
            f"| {r['backend']} | {r['query']} | {r['build_s']} | {r['p50_ms']} | "
            f"{r['p95_ms']} | {r['p99_ms']} | {r['recall10']} | {r['load']} |"
        )
    print(
        f"\nHNSW build: maintenance_work_mem {build_memory} MB (index_build_memory "
        f"{args.index_memory} MB)."
    )
    print(
        f"\nReproduce: .venv/bin/python bench/vector_search.py --papers {args.papers} "
        f"--queries {args.queries} --index-memory {args.index_memory}"
    )
    out = OUT / f"vector_search-{args.papers}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"machine": info, "rows": rows, "build_memory_mb": build_memory}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
