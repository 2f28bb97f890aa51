"""Fit the linker's calibrated models on the harness's dev split; write the weights file.

For every dev case (generated mentions of real papers and real texts that name
no paper, see ``bench/_linking_data.py``) the linker describes each paper the
text may name by title, and each paper a "Surname: short title" reference may
name, by its features (``lightnews/link/calibration.py``). A candidate is
right when it is the paper the case names. A logistic regression per route
(scikit-learn, standardised features, L2) is fitted on these, converted back
to coefficients on the raw features, and written to
``lightnews/link/linker_weights.json``: plain numbers, so the linker needs no
numerical library at run time. Only the dev split is used; figures are
reported on the test split by ``bench/linking_eval.py``. Run::

    .venv/bin/python bench/fit_linker.py [--mentions 1200] [--negatives all]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _linking_data import (
    SHARED,
    Case,
    as_item,
    held_out_ids,
    is_right,
    load_corpus,
    negative_cases,
    open_store,
    positive_cases,
)

from lightnews.link import item_references
from lightnews.link.calibration import REFERENCE_FEATURES, TITLE_FEATURES, WEIGHTS
from lightnews.link.title_words import title_weights
from lightnews.link.titles import Reference, ScoredMatch, score_reference, score_titles
from lightnews.model import Paper
from lightnews.store import SQLiteStore


def candidates(case: Case, store: SQLiteStore, weight: object) -> list[ScoredMatch]:
    """Everything the linker weighs for a case, by both routes (as ``link_titles`` does)."""
    item = as_item(case)
    exclude = (case.exclude,) if case.exclude else ()
    found = score_titles(
        case.text,
        store,
        exclude=exclude,
        published=case.published,
        weight=weight,  # type: ignore[arg-type]
    )
    if case.title and case.item_kind in ("article", "note"):
        found += score_titles(
            case.title,
            store,
            exclude=exclude,
            published=case.published,
            weight=weight,  # type: ignore[arg-type]
            whole=True,
        )
    for cited in item_references(item):
        found += score_reference(
            Reference(cited.surname, cited.title, cited.raw),
            store,
            exclude=exclude,
            published=case.published,
            weight=weight,  # type: ignore[arg-type]
        )
    return found


def collect(
    cases: list[Case], store: SQLiteStore, papers: dict[str, Paper]
) -> dict[str, tuple[list[list[float]], list[int]]]:
    weight = title_weights(store)
    rows: dict[str, tuple[list[list[float]], list[int]]] = {
        "title": ([], []),
        "reference": ([], []),
    }
    for case in cases:
        for match in candidates(case, store, weight):
            route = "reference" if match.method == "surname-title" else "title"
            values = dict(match.features)
            names = REFERENCE_FEATURES if route == "reference" else TITLE_FEATURES
            right = is_right(case, match.arxiv_id, papers)
            rows[route][0].append([values[n] for n in names])
            rows[route][1].append(int(right))
    return rows


def fit(x: list[list[float]], y: list[int], c: float) -> tuple[list[float], float]:
    data = np.asarray(x, dtype=float)
    labels = np.asarray(y)
    mean, std = data.mean(axis=0), data.std(axis=0)
    std[std == 0] = 1.0
    regression = LogisticRegression(C=c, max_iter=2000)
    regression.fit((data - mean) / std, labels)
    coef = regression.coef_[0] / std
    intercept = float(regression.intercept_[0] - (regression.coef_[0] * mean / std).sum())
    return [round(float(v), 6) for v in coef], round(intercept, 6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mentions", type=int, default=1200, help="generated cases per kind")
    parser.add_argument("--negatives", default="all", help="'all' or how many negative texts")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength")
    parser.add_argument("--db", type=Path, default=Path("/tmp/lightnews-linking-eval.db"))
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"SKIP: {SHARED} is not present (real data needed to fit)")
        return
    papers = load_corpus()
    held_out = held_out_ids(papers, args.seed)
    store = open_store(papers, held_out, args.db)
    rng = random.Random(args.seed)
    cases = positive_cases(papers, held_out, args.mentions, rng)
    negatives = [c for c in negative_cases(papers) if c.split == "dev"]
    if args.negatives != "all":
        negatives = random.Random(args.seed).sample(negatives, int(args.negatives))
    dev = [c for c in cases if c.split == "dev" and c.kind != "identifier"] + negatives
    started = time.perf_counter()
    rows = collect(dev, store, papers)
    seconds = time.perf_counter() - started
    # Routes fitted elsewhere (the announcement models, ``bench/announce_eval.py``) are kept.
    document: dict[str, object] = (
        json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    )
    for route, names in (("title", TITLE_FEATURES), ("reference", REFERENCE_FEATURES)):
        x, y = rows[route]
        coef, intercept = fit(x, y, args.c)
        document[route] = {"features": list(names), "coef": coef, "intercept": intercept}
        print(f"{route}: {len(y)} candidates, {sum(y)} right")
        for name, value in zip(names, coef, strict=True):
            print(f"  {name:>14} {value:+.3f}")
        print(f"  {'intercept':>14} {intercept:+.3f}")
    document["fitted"] = (
        f"{date.today().isoformat()} by bench/fit_linker.py --mentions {args.mentions} "
        f"--negatives {args.negatives} --seed {args.seed} --c {args.c}: dev split only, "
        f"{len(dev)} texts"
    )
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(f"{len(dev)} dev texts described in {seconds:.0f}s; wrote {args.out}")


if __name__ == "__main__":
    main()
