"""Benchmark: how good related papers are, next to what a user would pick instead.

CSFCube's development queries (``../shared/fixtures/relatedness/csfcube-dev``:
4,205 computer-science papers, 12 query papers with expert grades 0-3 for
the candidates). As its README says: the corpus is imported with
``lightnews import arxiv-snapshot`` and embedded, then for each query paper
the library is ranked and NDCG@20 (gain 2^rel - 1) taken, averaged over the
queries. All in one run, on the same libraries:

- ``related, default``: ``lightnews related`` with default settings (the
  ``semantic`` setting's default encoder, ``minilm-int8``);
- ``related, semantic = static`` and ``semantic = minilm``: the same with the
  other two encoders;
- ``words alone``: our BM25 word index without the vectors;
- ``TF-IDF cosine``: scikit-learn's TfidfVectorizer over title + abstract with
  sublinear TF and English stop words (the README's reference, 0.549), and
  with arxiv-sanity-lite's exact settings (bigrams, 20,000 features,
  min_df 5, max_df 0.1);
- ``MiniLM cosine`` (the stored all-MiniLM-L6-v2 vectors) and the reciprocal
  rank fusion (k = 60) of TF-IDF and MiniLM.

Per-query figures are printed for every method. The knobs of related papers
(the title's weight and BM25's k1 and b in the word index, meaning's share of
the fused score, 0 and 1 included: words alone, meaning alone) are chosen by
leave-one-out over a grid: each query is scored with the setting best on the
other eleven, and that held-out mean is the figure to quote, printed first
beside the plain baselines. The product ships what the same procedure picks
on all twelve (``lightnews.embed.lexical``, ``lightnews.search.related``),
unless a plain baseline scores better held out.

    .venv/bin/python bench/relatedness_eval.py            # libraries cached in bench/out/
    .venv/bin/python bench/relatedness_eval.py --no-grid  # the shipped knobs only

The MiniLM library takes a few minutes to embed the first time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.embed import embed_papers, forget_cached  # noqa: E402
from lightnews.embed import lexical as lexical_module  # noqa: E402
from lightnews.embed.index import from_blob  # noqa: E402
from lightnews.ingest.bulk import import_snapshot  # noqa: E402
from lightnews.search import related_papers  # noqa: E402
from lightnews.search.fusion import fuse  # noqa: E402
from lightnews.search.related import MEANING_SHARE, fuse_scores  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.store import SQLiteStore  # noqa: E402

FIXTURE = ROOT.parent / "shared/fixtures/relatedness/csfcube-dev"
OUT = ROOT / "bench" / "out" / "relatedness"
K = 20


def ndcg(ranked: list[str], grades: dict[str, int], k: int = K) -> float:
    dcg = sum((2 ** grades.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    best = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def library(encoder: str) -> Path:
    """The corpus imported and embedded with ``encoder`` (built once, then reused)."""
    OUT.mkdir(parents=True, exist_ok=True)
    db = OUT / f"csfcube-{encoder}.db"
    settings = Settings(environ={}).with_overrides(semantic=encoder)
    with SQLiteStore(db) as store:
        if store.text_marks()[0] == 0:
            import_snapshot(store, FIXTURE / "corpus.jsonl")
        if store.count_unembedded() or not store.has_vectors(encoder):
            started = time.perf_counter()
            report = embed_papers(store, settings)
            print(
                f"embedded {report.embedded} papers with {encoder} "
                f"in {time.perf_counter() - started:.0f}s",
                file=sys.stderr,
            )
    return db


def corpus() -> tuple[list[str], list[str]]:
    ids, texts = [], []
    for line in (FIXTURE / "corpus.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        ids.append(row["id"])
        texts.append(f"{row['title']} {row['abstract']}")
    return ids, texts


def by_matrix(ids: list[str], matrix: Any) -> Callable[[str], list[str]]:
    """Rank by cosine over rows of ``matrix`` (dense or sparse, unit rows)."""
    position = {a: i for i, a in enumerate(ids)}

    def rank(query: str) -> list[str]:
        i = position[query]
        row = matrix[i]
        scores = matrix @ row.T
        scores = scores.toarray().ravel() if hasattr(scores, "toarray") else np.asarray(scores)
        scores = scores.astype(float)
        scores[i] = -np.inf
        return [ids[j] for j in np.argsort(-scores)[:100]]

    return rank


def stored_vectors(db: Path, model: str, ids: list[str]) -> Any:
    with SQLiteStore(db) as store:
        found = store.vectors_by_arxiv_id(ids, model)
    return np.stack([from_blob(found[a][1]) for a in ids])


def by_related(db: Path, encoder: str) -> Callable[[str], list[str]]:
    settings = Settings(environ={}).with_overrides(semantic=encoder)
    store = SQLiteStore(db)

    def rank(query: str) -> list[str]:
        return [h.arxiv_id for h in related_papers(store, query, limit=K, settings=settings)]

    return rank


#: The knobs of related papers and the values tried. The word index's: the title's weight
#: (lightnews.embed.lexical.TITLE_WEIGHT) and BM25's K1 and B; the fusion's: meaning's
#: share (lightnews.search.related.MEANING_SHARE), 0 being words alone and 1 meaning alone.
WEIGHTS = [1, 2, 3, 4, 5, 6, 8]
K1S = [0.9, 1.2, 1.6]
BS = [0.5, 0.75, 0.9]
SHARES = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0]
Knobs = tuple[int, float, float, float]  # title weight, k1, b, meaning share


def knob_tables(
    dbs: dict[str, Path], qrels: dict[str, dict[str, int]], grid: bool = True
) -> dict[str, dict[Knobs, list[float]]]:
    """Per-query NDCG@20 of related papers for every encoder and every setting of the knobs.

    The word index is built once per (title weight, K1, B) and its scores are reused for
    every encoder and share (the libraries hold the same papers under the same ids); each
    query's vector is read once per encoder. Without ``grid``, only the shipped knobs.
    """
    from lightnews.embed import open_semantic
    from lightnews.embed.lexical import LexicalIndex, analyze

    shipped = (lexical_module.TITLE_WEIGHT, lexical_module.K1, lexical_module.B)
    lexical = [(w, k, b) for w in WEIGHTS for k in K1S for b in BS] if grid else [shipped]
    shares = SHARES if grid else [MEANING_SHARE]
    first = next(iter(dbs.values()))
    stores = {encoder: SQLiteStore(db) for encoder, db in dbs.items()}
    ids = {
        e: [tuple(r) for r in s.db.execute("SELECT id, arxiv_id FROM papers ORDER BY id")]
        for e, s in stores.items()
    }
    assert all(v == ids[next(iter(ids))] for v in ids.values()), "libraries differ"
    arxiv_of = dict(ids[next(iter(ids))])
    semantics = {
        e: open_semantic(s, Settings(environ={}).with_overrides(semantic=e))
        for e, s in stores.items()
    }
    vectors = {e: {q: sem.vector_of(q) for q in qrels} for e, sem in semantics.items()}
    tables: dict[str, dict[Knobs, list[float]]] = {e: {} for e in dbs}
    saved = shipped
    started = time.perf_counter()
    try:
        with SQLiteStore(first) as store:
            papers = {q: store.get_paper(q) for q in qrels}
            for n, (weight, k1, b) in enumerate(lexical, 1):
                lexical_module.TITLE_WEIGHT, lexical_module.K1, lexical_module.B = weight, k1, b
                index = LexicalIndex.build(store)
                for query in qrels:
                    paper = papers[query]
                    exclude = vectors[next(iter(vectors))][query]
                    assert exclude is not None
                    words = index.scores(analyze(paper.title, paper.abstract), exclude[0], 100)
                    for encoder, semantic in semantics.items():
                        found = vectors[encoder][query]
                        for share in shares:
                            fused = fuse_scores(words, semantic, found, share=share)
                            ranked = [arxiv_of[c.paper_id] for c in fused[:K]]
                            tables[encoder].setdefault((weight, k1, b, share), []).append(
                                ndcg(ranked, qrels[query])
                            )
                if n % 9 == 0:
                    print(
                        f"  word index {n}/{len(lexical)} ({time.perf_counter() - started:.0f}s)",
                        file=sys.stderr,
                    )
    finally:
        lexical_module.TITLE_WEIGHT, lexical_module.K1, lexical_module.B = saved
        for s in stores.values():
            s.close()
    return tables


def best_knobs(table: dict[Knobs, list[float]], queries: list[int]) -> Knobs:
    """The knobs with the best mean NDCG over ``queries`` (ties: the first in grid order)."""
    return max(table, key=lambda knobs: sum(table[knobs][q] for q in queries))


def leave_one_out(table: dict[Knobs, list[float]]) -> tuple[list[float], list[Knobs]]:
    """Each query scored with the knobs best on the other queries; and the knobs chosen."""
    count = len(next(iter(table.values())))
    held, chosen = [], []
    for q in range(count):
        best = best_knobs(table, [i for i in range(count) if i != q])
        held.append(table[best][q])
        chosen.append(best)
    return held, chosen


def show(knobs: Knobs) -> str:
    weight, k1, b, share = knobs
    return f"title {weight}, k1 {k1}, b {b}, meaning {share}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--no-grid", action="store_true", help="only the shipped knobs (no leave-one-out)"
    )
    args = parser.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")
    qrels: dict[str, dict[str, int]] = json.loads((FIXTURE / "qrels-dev.json").read_text())
    queries = list(qrels)
    default = Settings(environ={}).semantic
    encoders = [default] + [e for e in ("static", "minilm") if e != default]
    dbs = {encoder: library(encoder) for encoder in encoders}
    static_db, minilm_db = dbs["static"], dbs["minilm"]
    forget_cached()
    ids, texts = corpus()

    from sklearn.feature_extraction.text import TfidfVectorizer

    tfidf = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit_transform(texts)
    sanity = TfidfVectorizer(
        strip_accents="unicode",
        lowercase=True,
        analyzer="word",
        stop_words="english",
        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b",
        ngram_range=(1, 2),
        max_features=20000,
        norm="l2",
        use_idf=True,
        smooth_idf=True,
        sublinear_tf=True,
        max_df=0.1,
        min_df=5,
    ).fit_transform(texts)
    minilm = stored_vectors(minilm_db, "minilm", ids)
    tfidf_rank, minilm_rank = by_matrix(ids, tfidf), by_matrix(ids, minilm)

    def rrf(query: str) -> list[str]:
        fused = fuse({"tfidf": tfidf_rank(query), "minilm": minilm_rank(query)})
        return [key for key, _, _ in fused]

    def words_alone(query: str) -> list[str]:
        return [h.arxiv_id for h in related_papers(SQLiteStore(static_db), query, limit=K)]

    methods: dict[str, Callable[[str], list[str]]] = {
        **{
            (
                f"related, shipped defaults ({e})" if e == default else f"related, semantic = {e}"
            ): by_related(dbs[e], e)
            for e in encoders
        },
        "our words alone (BM25 index)": words_alone,
        "TF-IDF cosine (README's reference)": tfidf_rank,
        "TF-IDF, arxiv-sanity-lite settings": by_matrix(ids, sanity),
        "MiniLM cosine": minilm_rank,
        "RRF of TF-IDF and MiniLM": rrf,
    }
    results: dict[str, list[float]] = {}
    for name, rank in methods.items():
        results[name] = [ndcg(rank(q), qrels[q]) for q in queries]
    tables = knob_tables(dbs, qrels, grid=not args.no_grid)
    shipped = (lexical_module.TITLE_WEIGHT, lexical_module.K1, lexical_module.B, MEANING_SHARE)
    chosen: dict[str, list[Knobs]] = {}
    held: dict[str, list[float]] = {}
    if not args.no_grid:
        for encoder in encoders:
            held[encoder], chosen[encoder] = leave_one_out(tables[encoder])
        loo = {f"**related, knobs chosen leave-one-out ({e})**": held[e] for e in encoders}
        results = {**loo, **results}
    print(f"CSFCube development queries ({len(queries)}), NDCG@{K}, gain 2^rel-1\n")
    print("| method | NDCG@20 | per query |")
    print("| --- | --- | --- |")
    for name, values in results.items():
        per = " ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {np.mean(values):.3f} | {per} |")
    print("\nqueries, in order: " + " ".join(queries))
    # The grid replays the product's path: the shipped cell must be the shipped row.
    print(
        f"\nshipped knobs ({show(shipped)}) through the grid's path, {default}: "
        f"{np.mean(tables[default][shipped]):.3f}"
    )
    if args.no_grid:
        return
    cells = len(tables[default])
    print(
        f"\n{cells} settings per encoder: title weight {WEIGHTS}, k1 {K1S}, b {BS}, "
        f"meaning share {SHARES}"
    )
    for encoder in encoders:
        table = tables[encoder]
        everything = best_knobs(table, list(range(len(queries))))
        print(
            f"\n{encoder}: leave-one-out {np.mean(held[encoder]):.3f}; "
            f"best on all {len(queries)} queries (tuned on them): {show(everything)} "
            f"{np.mean(table[everything]):.3f}"
        )
        for knobs, count in Counter(chosen[encoder]).most_common():
            print(f"  chosen in {count} of {len(queries)} folds: {show(knobs)}")
        print("  best per meaning share (tuned on all queries):")
        for share in SHARES:
            row = {k: v for k, v in table.items() if k[3] == share}
            best = best_knobs(row, list(range(len(queries))))
            print(f"    {share}: {np.mean(row[best]):.3f} ({show(best)})")


if __name__ == "__main__":
    main()
