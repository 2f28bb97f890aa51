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

Per-query figures are printed for every method. The two knobs of related
papers (the title's weight in the word index and meaning's share of the
fused score) are then checked for overfitting: over a small grid, each query
is scored with the knobs that are best on the other eleven (leave one out).

    .venv/bin/python bench/relatedness_eval.py            # libraries cached in bench/out/
    .venv/bin/python bench/relatedness_eval.py --no-grid  # skip the leave-one-out

The MiniLM library takes a few minutes to embed the first time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.bulk import import_snapshot  # noqa: E402
from lightnews.embed import embed_papers, forget_cached  # noqa: E402
from lightnews.embed import lexical as lexical_module  # noqa: E402
from lightnews.embed.index import from_blob  # noqa: E402
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
            print(f"embedded {report.embedded} papers with {encoder} "
                  f"in {time.perf_counter() - started:.0f}s", file=sys.stderr)  # fmt: skip
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


def knob_table(
    db: Path,
    encoder: str,
    qrels: dict[str, dict[str, int]],
    weights: list[int],
    shares: list[float],
) -> dict[tuple[int, float], list[float]]:
    """Per-query NDCG@20 of related papers for every (title weight, meaning share)."""
    from lightnews.embed import open_semantic
    from lightnews.embed.lexical import LexicalIndex, analyze

    settings = Settings(environ={}).with_overrides(semantic=encoder)
    table: dict[tuple[int, float], list[float]] = {}
    saved = lexical_module.TITLE_WEIGHT
    with SQLiteStore(db) as store:
        semantic = open_semantic(store, settings)
        arxiv_of = {int(r[0]): r[1] for r in store.db.execute("SELECT id, arxiv_id FROM papers")}
        try:
            for weight in weights:
                lexical_module.TITLE_WEIGHT = weight
                index = LexicalIndex.build(store)
                for query in qrels:
                    paper = store.get_paper(query)
                    found = semantic.vector_of(query)
                    assert found is not None
                    words = index.scores(analyze(paper.title, paper.abstract), found[0], 100)
                    for share in shares:
                        fused = fuse_scores(words, semantic, found, share=share)
                        ranked = [arxiv_of[c.paper_id] for c in fused[:K]]
                        table.setdefault((weight, share), []).append(ndcg(ranked, qrels[query]))
        finally:
            lexical_module.TITLE_WEIGHT = saved
    return table


def leave_one_out(table: dict[tuple[int, float], list[float]]) -> tuple[float, list[Any]]:
    """Each query scored with the knobs best on the others; and which knobs were chosen."""
    queries = len(next(iter(table.values())))
    held, chosen = [], []
    for q in range(queries):
        best = max(table, key=lambda knobs: sum(v for i, v in enumerate(table[knobs]) if i != q))
        held.append(table[best][q])
        chosen.append(best)
    return float(np.mean(held)), chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-grid", action="store_true", help="skip the leave-one-out grid")
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
        strip_accents="unicode", lowercase=True, analyzer="word", stop_words="english",
        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
        max_features=20000, norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=True,
        max_df=0.1, min_df=5,
    ).fit_transform(texts)  # fmt: skip
    minilm = stored_vectors(minilm_db, "minilm", ids)
    tfidf_rank, minilm_rank = by_matrix(ids, tfidf), by_matrix(ids, minilm)

    def rrf(query: str) -> list[str]:
        fused = fuse({"tfidf": tfidf_rank(query), "minilm": minilm_rank(query)})
        return [key for key, _, _ in fused]

    def words_alone(query: str) -> list[str]:
        return [h.arxiv_id for h in related_papers(SQLiteStore(static_db), query, limit=K)]

    methods: dict[str, Callable[[str], list[str]]] = {
        **{
            (f"related, default ({e})" if e == default else f"related, semantic = {e}"):
            by_related(dbs[e], e)
            for e in encoders
        },
        "our words alone (BM25 index)": words_alone,
        "TF-IDF cosine (README's reference)": tfidf_rank,
        "TF-IDF, arxiv-sanity-lite settings": by_matrix(ids, sanity),
        "MiniLM cosine": minilm_rank,
        "RRF of TF-IDF and MiniLM": rrf,
    }
    results: dict[str, list[float]] = {}
    timings: dict[str, float] = {}
    for name, rank in methods.items():
        started = time.perf_counter()
        results[name] = [ndcg(rank(q), qrels[q]) for q in queries]
        timings[name] = (time.perf_counter() - started) / len(queries) * 1000
    print(f"CSFCube development queries ({len(queries)}), NDCG@{K}, gain 2^rel-1\n")
    print("| method | NDCG@20 | per query |")
    print("| --- | --- | --- |")
    for name, values in results.items():
        per = " ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | **{np.mean(values):.3f}** | {per} |")
    print("\nqueries, in order: " + " ".join(queries))
    if args.no_grid:
        return
    weights, shares = [2, 3, 4, 5, 6, 8], [0.2, 0.3, 0.4, 0.5, 0.6]
    for encoder, db in dbs.items():
        table = knob_table(db, encoder, qrels, weights, shares)
        print(f"\nknobs, {encoder}: NDCG@20 by title weight (rows) and meaning share (columns)")
        print("| title weight | " + " | ".join(f"{s}" for s in shares) + " |")
        print("| --- |" + " --- |" * len(shares))
        for weight in weights:
            cells = " | ".join(f"{np.mean(table[(weight, s)]):.3f}" for s in shares)
            print(f"| {weight} | {cells} |")
        default = (lexical_module.TITLE_WEIGHT, MEANING_SHARE)
        held, chosen = leave_one_out(table)
        print(f"defaults {default}: {np.mean(table[default]):.3f}; leave-one-out over the "
              f"grid: {held:.3f} (knobs chosen per held-out query: "
              f"{', '.join(f'{w}/{s}' for w, s in chosen)})")  # fmt: skip


if __name__ == "__main__":
    main()
