"""Benchmark: how well the feed ranks one reader's papers, measured as Scholar Inbox does.

Protocol (Scholar Inbox's, per reader): each of the reader's papers is left
out in turn, the model is trained on the rest, and the left-out paper is
ranked among 100 papers of the library drawn at random (never one of the
reader's): nDCG (one relevant paper: 1 / log2(rank + 1)) and hit@10, and the
AUC against those 100. Where the data has explicit negatives (CSFCube's
candidates graded 0 by experts), half of them (by position) are given to
training as "not interested" and the AUC of the left-out paper against the
other half is reported too.

Data (``bench/_feed_data.py`` says what a reader is): PaperTweet authors with
five or more announced papers (MIT; 240 readers, 1,986 papers left out) and
CSFCube's 12 query papers with their papers graded 2-3 (CC BY-NC 4.0,
benchmark use only; 168 left out). Split by reader (SHA-1 of the name):
PaperTweet 117 dev / 123 test readers, CSFCube 8 dev / 4 test. Settings are
chosen on dev alone, by cross-validation over dev readers (``bench/fit_learner.py``;
``--grid`` here tries a few by hand); ``--split test`` reports test, once.

Methods, in the same run on the same draws:

- ``recency``: newest first (PaperTweet's month; CSFCube has no dates);
- ``closeness to saves``: the current feed's meaning signal (``closest_interests``):
  cosine to the nearest saved paper, minilm-int8 vectors;
- ``arxiv-sanity-lite SVM``: its TF-IDF (bigrams, 20,000 features, min_df 5,
  max_df 0.1, sublinear TF) and ``LinearSVC(class_weight="balanced", C=0.01)``
  trained, as it does, on the reader's papers against every other paper of
  the library (the papers being ranked left out);
- ``learned``: :func:`lightnews.rank.learn.fit_reader_model` with
  ``learn.DEFAULT`` (``DEFAULT.background`` random papers of the library as weak negatives).

    PYTHONPATH=. .venv/bin/python bench/feed_eval.py --split dev --grid
    PYTHONPATH=. .venv/bin/python bench/feed_eval.py --split test

Vectors are encoded once and cached under bench/out/feed_eval/.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _feed_data import Dataset, Reader, csfcube, papertweet, vectors  # noqa: E402

from lightnews.rank.learn import (  # noqa: E402
    DEFAULT,
    Interest,
    Params,
    TrainingSet,
    fit_reader_model,
    paper_terms,
)

NEGATIVES = 100
Scorer = Callable[["Fold"], "np.ndarray[Any, Any]"]


@dataclasses.dataclass
class Fold:
    """One left-out paper: what is trained on and what is ranked."""

    data: Dataset
    reader: Reader
    held: int
    train: list[int]  # the reader's other papers
    train_negatives: list[int]  # explicit negatives given to training
    ranked: list[int]  # held, then the random negatives, then the explicit ones kept back
    explicit: int  # how many explicit negatives end ``ranked``
    background: list[int]  # random papers for the learned model's weak negatives (its first
    # ``Params.background`` are used, so settings with fewer share the same draw)


@dataclasses.dataclass
class Context:
    data: Dataset
    vectors: np.ndarray[Any, Any]
    words: list[Counter[str]]  # at ``DEFAULT.title_weight``
    sanity: Any  # arxiv-sanity-lite's TF-IDF matrix
    by_title_weight: dict[int, list[Counter[str]]] = dataclasses.field(default_factory=dict)

    def words_for(self, params: Params) -> list[Counter[str]]:
        """The papers' terms as ``params`` counts them (its title weight)."""
        weight = params.title_weight
        if weight == DEFAULT.title_weight:
            return self.words
        if weight not in self.by_title_weight:
            self.by_title_weight[weight] = [
                paper_terms(t, a, ngrams=2, title_weight=weight)
                for t, a in zip(self.data.titles, self.data.abstracts, strict=True)
            ]
        return self.by_title_weight[weight]


def folds(
    data: Dataset, split: str, most: int | None, background: int, salt: str = ""
) -> list[Fold]:
    """The left-out papers of ``split``'s readers; ``salt`` draws the learned model's
    random background papers anew (the ranked papers stay the same), to see its noise."""
    found = []
    everyone = np.arange(len(data.ids))
    for reader in data.readers:
        if reader.split != split:
            continue
        rng = random.Random(f"{data.name}/{reader.name}")
        held_out = list(reader.held_out)
        if most is not None and len(held_out) > most:
            held_out = sorted(rng.sample(held_out, most))
        pool = [int(i) for i in everyone if int(i) not in reader.excluded]
        train_negatives = list(reader.negatives[0::2])
        kept_back = list(reader.negatives[1::2])
        for held in held_out:
            draw = random.Random(f"{data.name}/{reader.name}/{held}")
            negatives = draw.sample(pool, NEGATIVES)
            taken = set(negatives)
            rest = [p for p in pool if p not in taken]
            found.append(
                Fold(
                    data,
                    reader,
                    held,
                    [p for p in reader.positives if p != held],
                    train_negatives,
                    [held, *negatives, *kept_back],
                    len(kept_back),
                    (
                        random.Random(f"{salt}/{data.name}/{reader.name}/{held}") if salt else draw
                    ).sample(rest, min(background, len(rest))),
                )
            )
    return found


def measure(fold: Fold, scores: np.ndarray[Any, Any]) -> dict[str, float]:
    held = scores[0]
    randoms = scores[1 : 1 + NEGATIVES]
    above = float((randoms > held).sum() + 0.5 * (randoms == held).sum())
    found = {
        "nDCG": 1 / math.log2(above + 2),
        "hit@10": float(above < 10),
        "AUC": 1 - above / NEGATIVES,
    }
    if fold.explicit:
        explicit = scores[1 + NEGATIVES :]
        worse = float((explicit < held).sum() + 0.5 * (explicit == held).sum())
        found["AUC explicit"] = worse / len(explicit)
    return found


# -- methods ------------------------------------------------------------------------------


def recency(ctx: Context) -> Scorer | None:
    if ctx.data.dates is None:
        return None
    dates = ctx.data.dates.astype(float)
    return lambda fold: dates[fold.ranked]


def closeness(ctx: Context) -> Scorer:
    def score(fold: Fold) -> np.ndarray[Any, Any]:
        return np.asarray((ctx.vectors[fold.ranked] @ ctx.vectors[fold.train].T).max(axis=1))

    return score


def sanity_svm(ctx: Context) -> Scorer:
    from sklearn.svm import LinearSVC

    everyone = np.arange(len(ctx.data.ids))

    def score(fold: Fold) -> np.ndarray[Any, Any]:
        ranked = set(fold.ranked)
        rows = np.array([i for i in everyone if i not in ranked])
        labels = np.isin(rows, fold.train).astype(int)
        model = LinearSVC(class_weight="balanced", max_iter=10000, tol=1e-6, C=0.01)
        model.fit(ctx.sanity[rows], labels)
        return np.asarray(model.decision_function(ctx.sanity[fold.ranked]))

    return score


def learned(ctx: Context, params: Params) -> Scorer:
    def score(fold: Fold) -> np.ndarray[Any, Any]:
        background = fold.background[: params.background]
        needed = [*fold.train, *fold.train_negatives, *background]
        words = ctx.words_for(params)
        training = TrainingSet(
            interests=(Interest("saved", tuple(fold.train)),),
            negatives=tuple(fold.train_negatives),
            background=tuple(background),
        )
        model = fit_reader_model(
            training,
            {p: ctx.vectors[p] for p in needed},
            {p: words[p] for p in needed},
            params,
        )
        assert model is not None
        found = model.score_features(ctx.vectors[fold.ranked], [words[p] for p in fold.ranked])
        return np.array([b.score for b in found])

    return score


def context(data: Dataset) -> Context:
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [f"{t} {a}" for t, a in zip(data.titles, data.abstracts, strict=True)]
    sanity = (
        TfidfVectorizer(
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
        )
        .fit_transform(texts)
        .tocsr()
    )
    matrix = vectors(data)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    words = [  # pairs too: each setting's vocabulary takes what its ``ngrams`` says
        paper_terms(t, a, ngrams=2) for t, a in zip(data.titles, data.abstracts, strict=True)
    ]
    return Context(data, matrix, words, sanity)


def run(fold_list: list[Fold], methods: dict[str, Scorer]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for name, scorer in methods.items():
        started = time.perf_counter()
        rows = [measure(fold, scorer(fold)) for fold in fold_list]
        table[name] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
        table[name]["s"] = time.perf_counter() - started
    return table


def show(title: str, table: dict[str, dict[str, float]]) -> None:
    keys = [k for k in ("nDCG", "hit@10", "AUC", "AUC explicit") if k in next(iter(table.values()))]
    print(f"\n{title}")
    print(f"| method | {' | '.join(keys)} | seconds |")
    print(f"| --- | {' | '.join('---' for _ in keys)} | --- |")
    for name, row in table.items():
        cells = " | ".join(f"{100 * row[k]:.1f}" for k in keys)
        print(f"| {name} | {cells} | {row['s']:.0f} |")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument(
        "--most", type=int, default=None, help="left-out papers per reader at most (default: all)"
    )
    parser.add_argument("--grid", action="store_true", help="try the learned model's settings")
    parser.add_argument("--only", choices=("papertweet", "csfcube"), default=None)
    parser.add_argument(
        "--most-csfcube",
        type=int,
        default=None,
        help="--most for CSFCube alone (few readers: default all)",
    )
    parser.add_argument("--no-svm", action="store_true", help="skip the SVM (slow)")
    args = parser.parse_args()
    datasets = [d for d in (papertweet, csfcube) if args.only in (None, d.__name__)]
    for make in datasets:
        data = make()
        ctx = context(data)
        most = args.most_csfcube if data.name == "CSFCube" else args.most
        fold_list = folds(data, args.split, most, DEFAULT.background)
        readers = len({f.reader.name for f in fold_list})
        methods: dict[str, Scorer] = {}
        by_date = recency(ctx)
        if by_date is not None:
            methods["recency"] = by_date
        methods["closeness to saves (current feed)"] = closeness(ctx)
        if not args.no_svm:
            methods["arxiv-sanity-lite TF-IDF + LinearSVC"] = sanity_svm(ctx)
        methods["learned (learn.DEFAULT)"] = learned(ctx, DEFAULT)
        if args.grid:
            for change in grid():
                label = ", ".join(f"{k}={v}" for k, v in change.items())
                methods[f"learned, {label}"] = learned(ctx, dataclasses.replace(DEFAULT, **change))
        show(
            f"{data.name}, {args.split}: {readers} readers, {len(fold_list)} papers left out",
            run(fold_list, methods),
        )


def grid() -> list[dict[str, Any]]:
    """Settings tried one at a time around ``DEFAULT`` (on dev only)."""
    return [
        {"vector_weight": 2.0},
        {"c": 3.0},
        {"nearest_share": 0.0},
    ]


if __name__ == "__main__":
    main()
