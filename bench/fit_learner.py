"""Benchmark helper: choose the learned ranker's settings by cross-validation on dev readers.

``bench/feed_eval.py`` measures the per-reader learned ranker
(:mod:`lightnews.rank.learn`) against recency, the current feed and
arxiv-sanity-lite's SVM. This script chooses ``learn.DEFAULT`` from the
development readers alone; it never builds a test fold.

Search: coordinate ascent from ``START`` (the setting an earlier, wider search
chose on every development reader): knob by knob, in the order of ``KNOBS``,
each value is tried with the other knobs fixed and the best is kept.
Criterion: nDCG + AUC, averaged over the left-out papers of PaperTweet's
development readers (CSFCube's 8 development readers are too few to choose
by; they are reported for the chosen setting).

Cross-validation: the development readers fall in ``--folds`` groups (SHA-1 of
the name). For each group, the search runs on the other groups' readers and
the setting it ends on is measured on that group's readers, beside the SVM and
the start setting: the mean over groups estimates what the search finds on
readers it has not seen (a little kindly: ``START`` was chosen on all of
them). The chosen setting is then the search's result on every development
reader.

Each (setting, left-out paper) result is cached under
``bench/out/feed_eval/fit/``, so the searches share their work and a second
run only prints.

    PYTHONPATH=. .venv/bin/python bench/fit_learner.py --most 3
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _feed_data import OUT, csfcube, papertweet  # noqa: E402
from feed_eval import Context, Fold, closeness, context, folds, learned, measure, sanity_svm  # noqa: E402

from lightnews.rank.learn import Params  # noqa: E402

CACHE = OUT / "fit"

#: Where the search starts: the setting the first search chose (2026-12-06's ``learn.DEFAULT``,
#: itself found by coordinate ascent from the default before it, on every development
#: reader, over loss, vector/word weights, C, class weighting, max_df, the blend and
#: the background: see docs/benchmarks-history.md).
START = Params(
    vector_weight=0.5,
    word_weight=1.0,
    c=0.3,
    background=2000,
    negative_weight=10.0,
    read_weight=0.3,
    nearest_share=0.5,
    min_df=2,
    ngrams=1,
    max_df=1.0,
    balanced=True,
    loss="hinge",
    title_weight=6,
)

#: The knobs, in the order the search visits them, each with the values it tries.
#: Searched before (docs/benchmarks-history.md): vector/word weights, C 0.1-30, class
#: weighting, max_df, the blend, the background (500-2,000), word pairs. Third search
#: (2026-12-07): the model (a logistic regression with C 10 and no blend, the best AUC
#: any setting reached on every development reader, 98.4, against the SVM kept), then
#: a title counted fewer times among the words.
KNOBS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "model",
        [
            {"loss": "hinge", "c": 0.3, "nearest_share": 0.5},
            {"loss": "logistic", "c": 10.0, "nearest_share": 0.0},
        ],
    ),
    ("title_weight", [{"title_weight": w} for w in (6, 3, 1)]),
]

BIGGEST_BACKGROUND = 2000


def key_of(params: Params) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(dataclasses.asdict(params).items()))


def fold_key(fold: Fold) -> str:
    return f"{fold.reader.name}/{fold.held}"


class Results:
    """Per left-out paper results of each method, computed once and cached on disk."""

    def __init__(self, ctx: Context, fold_list: list[Fold], salt: str = "") -> None:
        self.ctx = ctx
        self.salt = salt  # the folds' background draw (feed_eval.folds)
        self.folds = fold_list
        self.known: dict[str, dict[str, dict[str, float]]] = {}
        self.seconds: dict[str, float] = {}
        self.settings: dict[str, Params] = {}  # each setting tried, by its key

    def path(self, name: str) -> Path:
        salted = name if name in ("svm", "closeness") else f"{name}{self.salt}"
        digest = hashlib.sha1(salted.encode()).hexdigest()[:12]
        return CACHE / f"{self.ctx.data.name.lower()}-{digest}.json"

    def of(self, name: str, params: Params | None = None) -> dict[str, dict[str, float]]:
        """``name``'s results on every fold: a method's name, or a setting's key."""
        if name in self.known:
            return self.known[name]
        path = self.path(name)
        stored: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        rows: dict[str, dict[str, float]] = stored.get("rows", {})
        missing = [f for f in self.folds if fold_key(f) not in rows]
        if missing:
            if params is not None:
                scorer = learned(self.ctx, params)
            elif name == "svm":
                scorer = sanity_svm(self.ctx)
            else:
                scorer = closeness(self.ctx)
            started = time.perf_counter()
            for fold in missing:
                rows[fold_key(fold)] = measure(fold, scorer(fold))
            spent = (time.perf_counter() - started) / len(missing)
            stored = {"name": name, "rows": rows, "seconds_per_fit": spent}
            CACHE.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(stored))
            print(
                f"  {self.ctx.data.name}: {name}: {len(missing)} fits, {spent:.2f} s each",
                file=sys.stderr,
                flush=True,
            )
        self.known[name] = rows
        self.seconds[name] = float(stored.get("seconds_per_fit", 0.0))
        return rows

    def mean(self, name: str, readers: set[str], metric: str) -> float:
        rows = self.of(name)
        values = [rows[fold_key(f)][metric] for f in self.folds if f.reader.name in readers]
        return float(np.mean(values))

    def criterion(self, params: Params, readers: set[str]) -> float:
        name = key_of(params)
        self.settings[name] = params
        self.of(name, params)
        return self.mean(name, readers, "nDCG") + self.mean(name, readers, "AUC")


def search(results: Results, readers: set[str]) -> tuple[Params, list[tuple[str, Params, float]]]:
    """Coordinate ascent over ``KNOBS`` on ``readers``: the setting it ends on, and its trail."""
    best = START
    trail = []
    for knob, values in KNOBS:
        tried = [
            (
                results.criterion(dataclasses.replace(best, **v), readers),
                dataclasses.replace(best, **v),
            )
            for v in values
        ]
        score, best = max(tried, key=lambda t: t[0])
        trail.append((knob, best, score))
    return best, trail


def group_of(name: str, k: int) -> int:
    return hashlib.sha1(f"cv/{name}".encode()).digest()[0] % k


def changes(params: Params) -> str:
    found = [f"{k}={v}" for k, v in dataclasses.asdict(params).items() if v != getattr(START, k)]
    return ", ".join(found) or "start (the earlier search's choice)"


def row(label: str, cells: Sequence[float]) -> str:
    return f"| {label} | " + " | ".join(f"{100 * c:.1f}" for c in cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--most", type=int, default=3, help="left-out papers per PaperTweet dev reader at most"
    )
    parser.add_argument("--folds", type=int, default=5, help="groups of dev readers")
    args = parser.parse_args()

    data = papertweet()
    ctx = context(data)
    fold_list = folds(data, "dev", args.most, BIGGEST_BACKGROUND)
    results = Results(ctx, fold_list)
    everyone = {f.reader.name for f in fold_list}
    print(
        f"PaperTweet dev: {len(everyone)} readers, {len(fold_list)} papers left out, "
        f"{args.folds} groups of readers"
    )

    chosen, trail = search(results, everyone)

    print("\nSearch on every development reader (criterion nDCG + AUC):\n")
    print("| knob | setting kept | nDCG | AUC | s per fit |")
    print("| --- | --- | --- | --- | --- |")
    for knob, params, _ in trail:
        name = key_of(params)
        n, a = results.mean(name, everyone, "nDCG"), results.mean(name, everyone, "AUC")
        print(
            f"| {knob} | {changes(params)} | {100 * n:.1f} | {100 * a:.1f} | "
            f"{results.seconds[name]:.2f} |"
        )

    print(
        f"\nCross-validation over {args.folds} groups of development readers: the search run on"
        " the other groups, measured on the group left out (nDCG / AUC):\n"
    )
    print("| group | readers | setting found | found | start | SVM |")
    print("| --- | --- | --- | --- | --- | --- |")
    totals: dict[str, list[float]] = {"found": [], "start": [], "svm": []}
    weights = []
    for group in range(args.folds):
        inside = {r for r in everyone if group_of(r, args.folds) == group}
        found, _ = search(results, everyone - inside)
        cells = []
        for label, name in (("found", key_of(found)), ("start", key_of(START)), ("svm", "svm")):
            results.of(name)
            n, a = results.mean(name, inside, "nDCG"), results.mean(name, inside, "AUC")
            totals[label].append(n)
            totals[label].append(a)
            cells.append(f"{100 * n:.1f} / {100 * a:.1f}")
        weights.append(sum(1 for f in fold_list if f.reader.name in inside))
        print(f"| {group} | {len(inside)} | {changes(found)} | {' | '.join(cells)} |")
    w = np.array(weights, dtype=float) / sum(weights)
    summary = []
    for label in ("found", "start", "svm"):
        n = float(np.dot(w, totals[label][0::2]))
        a = float(np.dot(w, totals[label][1::2]))
        summary.append(f"{100 * n:.1f} / {100 * a:.1f}")
    print(f"| all (weighted by papers) | {len(everyone)} | | {' | '.join(summary)} |")

    print("\nEvery setting tried (by any search), on every development reader:\n")
    print("| setting | nDCG | hit@10 | AUC | s per fit |")
    print("| --- | --- | --- | --- | --- |")
    tried = {name: results.criterion(params, everyone) for name, params in results.settings.items()}
    for name in sorted(tried, key=lambda n: -tried[n]):
        label = changes(results.settings[name])
        cells = [results.mean(name, everyone, m) for m in ("nDCG", "hit@10", "AUC")]
        print(row(label, cells) + f" {results.seconds[name]:.2f} |")

    print("\nDevelopment readers, every method (chosen: the search on all of them):\n")
    print("| method | nDCG | hit@10 | AUC |")
    print("| --- | --- | --- | --- |")
    for label, name in (
        ("closeness to saves (current feed)", "closeness"),
        ("arxiv-sanity-lite TF-IDF + LinearSVC", "svm"),
        ("learned, start (the earlier search's choice)", key_of(START)),
        (f"learned, chosen: {changes(chosen)}", key_of(chosen)),
    ):
        results.of(name)
        print(row(label, [results.mean(name, everyone, m) for m in ("nDCG", "hit@10", "AUC")]))

    print(
        "\nNoise: the same settings with the random background papers drawn again"
        " (the ranked papers unchanged), every development reader:\n"
    )
    print("| learned | draw | nDCG | hit@10 | AUC |")
    print("| --- | --- | --- | --- | --- |")
    again = Results(ctx, folds(data, "dev", args.most, BIGGEST_BACKGROUND, salt="b"), salt="b")
    for label, params in (("start", START), (f"chosen: {changes(chosen)}", chosen)):
        for draw, where in (("first", results), ("second", again)):
            name = key_of(params)
            where.of(name, params)
            cells = [where.mean(name, everyone, m) for m in ("nDCG", "hit@10", "AUC")]
            print(row(f"{label} | {draw}", cells))

    cs = csfcube()
    cs_ctx = context(cs)
    cs_folds = folds(cs, "dev", None, BIGGEST_BACKGROUND)
    cs_results = Results(cs_ctx, cs_folds)
    cs_readers = {f.reader.name for f in cs_folds}
    print(
        f"\nCSFCube dev (a check, not chosen on): {len(cs_readers)} readers, "
        f"{len(cs_folds)} left out\n"
    )
    print("| method | nDCG | hit@10 | AUC | AUC explicit |")
    print("| --- | --- | --- | --- | --- |")
    for label, name, params in (
        ("closeness to saves (current feed)", "closeness", None),
        ("arxiv-sanity-lite TF-IDF + LinearSVC", "svm", None),
        ("learned, start (the earlier search's choice)", key_of(START), START),
        ("learned, chosen", key_of(chosen), chosen),
    ):
        cs_results.of(name, params)
        metrics = ("nDCG", "hit@10", "AUC", "AUC explicit")
        print(row(label, [cs_results.mean(name, cs_readers, m) for m in metrics]))

    fields = ", ".join(f"{k}={v!r}" for k, v in dataclasses.asdict(chosen).items())
    print(f"\nChosen: Params({fields})")


if __name__ == "__main__":
    main()
