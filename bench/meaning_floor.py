"""Benchmark: the floor under hits found only by meaning, fitted on real queries.

A query always has nearest papers by meaning, however meaningless it is:
"zzzxqy" had eight. A hit found by meaning alone is shown only when its
cosine similarity reaches the encoder's floor (``MEANING_FLOOR`` in
``lightnews.search``). This fits that floor and says how well it separates:

- queries with an answer, from the real Hugging Face papers corpus in
  ``../shared/fixtures/corpus/hf-papers`` (11k ML papers): each sampled
  paper's title, and a two-to-four-word phrase of it (as people type:
  "key-value cache"); the answer is that paper, so the pair counts as a
  right hit;
- queries without one: made-up words ("zzzxqy": random letters, and real
  title words with their letters shuffled) and everyday phrases no ML
  paper is about; each of their ten nearest papers is a wrong hit.

The queries are split in two by a fixed seed: the floor is the lowest
similarity at which 95 in 100 hits kept are right ones (``PRECISION``) on
the first half; precision and recall are reported on the held-out half.
It is the floor for hits found by meaning alone (``MEANING_FLOOR``); a paper
the query's words found keeps its place whatever its similarity.

    .venv/bin/python bench/meaning_floor.py --encoder static
    .venv/bin/python bench/meaning_floor.py --encoder minilm --papers 3000
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.embed.encoders import load_encoder  # noqa: E402
from lightnews.search import MEANING_FLOOR  # noqa: E402

PRECISION = 0.95
CORPUS = ROOT.parent / "shared/fixtures/corpus/hf-papers/hf-papers-11k.jsonl"
STOP = set("a an and are as at be by for from in into is of on or the to via with without".split())
# Everyday queries no paper of an ML library answers.
EVERYDAY = [
    "banana bread recipe",
    "cheap flights to lisbon",
    "how to fix a leaking tap",
    "football results today",
    "knitting patterns for beginners",
    "best pizza near me",
    "weather tomorrow",
    "wedding dress shops",
    "how to grow tomatoes",
    "used cars for sale",
    "dentist opening hours",
    "guitar chords for beginners",
    "train times to london",
    "sourdough starter",
    "dog grooming prices",
    "yoga for back pain",
    "plumber phone number",
    "birthday cake ideas",
    "garden furniture sale",
    "how to tie a tie",
    "coffee shop playlist",
    "hiking boots review",
    "lemon drizzle cake",
    "ski resorts in austria",
    "tax return deadline",
    "carpet cleaning service",
    "chess opening tricks",
    "cat food allergies",
    "rent a bike",
    "jazz concerts tonight",
    "bathroom tiles ideas",
    "vegan lasagne",
    "fishing licence",
]


def load(limit: int | None, seed: int) -> list[tuple[str, str]]:
    papers, seen = [], set()
    for line in CORPUS.open(encoding="utf-8"):
        row = json.loads(line)
        title, abstract = (row.get("title") or "").strip(), (row.get("content_text") or "").strip()
        if title and abstract and title.lower() not in seen:
            seen.add(title.lower())
            papers.append((title, abstract))
    random.Random(seed).shuffle(papers)
    return papers[:limit] if limit else papers


def phrase(title: str, rng: random.Random) -> str | None:
    words = re.findall(r"[\w-]+", title.split(":")[-1])
    for _ in range(10):
        n = rng.randint(2, 4)
        if len(words) < n:
            return None
        start = rng.randrange(len(words) - n + 1)
        span = words[start : start + n]
        if span[0].lower() not in STOP and span[-1].lower() not in STOP:
            return " ".join(span)
    return None


def nonsense(rng: random.Random, vocabulary: list[str]) -> str:
    if rng.random() < 0.5:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))
    word = list(rng.choice(vocabulary))
    rng.shuffle(word)
    return "".join(word)


def evaluate(right: np.ndarray, wrong: np.ndarray, floor: float) -> tuple[float, float, float]:
    kept_right, kept_wrong = int((right >= floor).sum()), int((wrong >= floor).sum())
    precision = kept_right / max(kept_right + kept_wrong, 1)
    recall = kept_right / max(len(right), 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-9)
    return precision, recall, f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoder", default="static")
    parser.add_argument("--papers", type=int, default=None, help="library size (default: all)")
    parser.add_argument("--queries", type=int, default=600, help="answerable queries")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--z", action="store_true", help="fit on z-scores, not cosines")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    papers = load(args.papers, args.seed)
    encoder = load_encoder(args.encoder)
    library = encoder.encode([f"{t}. {a}" for t, a in papers])
    vocabulary = [w for t, _ in papers[:2000] for w in re.findall(r"[a-z]{5,}", t.lower())]
    # Answerable queries: a title or a phrase of it; the right hit is the paper itself.
    asked = rng.sample(range(len(papers)), min(args.queries, len(papers)))
    right_q: list[tuple[str, int]] = []
    phrases: list[bool] = []
    for n in asked:
        title = papers[n][0]
        right_q.append((title, n))
        phrases.append(False)
        short = phrase(title, rng)
        if short:
            right_q.append((short, n))
            phrases.append(True)
    wrong_q = [nonsense(rng, vocabulary) for _ in range(len(right_q) // 2)] + EVERYDAY
    right_v = encoder.encode([q for q, _ in right_q])
    right_all = right_v @ library.T
    right_sim = right_all[np.arange(len(right_q)), [n for _, n in right_q]]
    wrong_v = encoder.encode(wrong_q)
    wrong_all = wrong_v @ library.T
    wrong_top = np.sort(wrong_all, axis=1)[:, -10:]  # ten nearest of each
    if args.z:  # similarity as a z-score against the query's similarity to the whole library
        sample = rng.sample(range(len(papers)), min(2000, len(papers)))
        mu_r, sd_r = right_all[:, sample].mean(1), right_all[:, sample].std(1)
        mu_w, sd_w = wrong_all[:, sample].mean(1), wrong_all[:, sample].std(1)
        right_sim = (right_sim - mu_r) / sd_r
        wrong_top = (wrong_top - mu_w[:, None]) / sd_w[:, None]
    # Split by query: fit on one half, report on the other.
    r_split = np.array([rng.random() < 0.5 for _ in right_q])
    w_split = np.array([rng.random() < 0.5 for _ in wrong_q])
    fit_right, test_right = right_sim[r_split], right_sim[~r_split]
    fit_wrong, test_wrong = wrong_top[w_split].ravel(), wrong_top[~w_split].ravel()
    grid = np.round(np.arange(0.10, 0.90, 0.01) * (10 if args.z else 1), 2)
    # The lowest floor at which 95 in 100 hits kept are right ones, on the fit half.
    best = next((f for f in grid if evaluate(fit_right, fit_wrong, f)[0] >= PRECISION), grid[-1])
    print(
        f"encoder {args.encoder}, library {len(papers)} papers; answerable queries "
        f"{len(right_q)} (titles and title phrases), unanswerable {len(wrong_q)} "
        f"(made-up words and {len(EVERYDAY)} everyday phrases), ten hits each"
    )
    print(
        f"right-hit similarity: median {np.median(right_sim):.3f}, 5th pct "
        f"{np.percentile(right_sim, 5):.3f}; phrases only: median "
        f"{np.median(right_sim[np.array(phrases)]):.3f}; wrong hits: median "
        f"{np.median(wrong_top):.3f}, 99th pct {np.percentile(wrong_top, 99):.3f}"
    )
    print("| floor | fit P | fit R | held-out P | held-out R | unanswerable with no hit |")
    print("| --- | --- | --- | --- | --- | --- |")
    current = {MEANING_FLOOR.get(args.encoder, 0.0), 0.30 if args.encoder == "static" else 0.25}
    for floor in sorted({float(best), *current}):
        fp, fr, _ = evaluate(fit_right, fit_wrong, floor)
        tp, tr, _ = evaluate(test_right, test_wrong, floor)
        empty = float((wrong_top[~w_split].max(axis=1) < floor).mean())
        mark = " (fitted)" if floor == best else ""
        mark += " (in code)" if floor == MEANING_FLOOR.get(args.encoder) else ""
        print(f"| {floor:.2f}{mark} | {fp:.3f} | {fr:.3f} | {tp:.3f} | {tr:.3f} | {empty:.2f} |")


if __name__ == "__main__":
    main()
