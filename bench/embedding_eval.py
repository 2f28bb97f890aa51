"""Benchmark: embedding throughput on this machine, and what the speed costs in quality.

Target (issue "Reading"): embedding keeps up with ingest, and a library of a
million papers is embedded in hours, not days, measured against the model's
own quality. Measured on the real Hugging Face papers corpus in
``../shared/fixtures`` (11k ML papers, title and abstract):

- throughput, documents (title + abstract) a second, of ``minilm-int8``
  (the default: the model exported to ONNX with int8 weights, at 128 tokens
  and at the shorter cuts ``--int8-tokens`` names), the ``static``
  distillation and ``minilm`` (all-MiniLM-L6-v2 itself on PyTorch, at the 128
  tokens Lightnews uses and at 256), on all cores, as a range over
  ``--repeats`` runs and per second of CPU time (the machine is shared);
- quality on two retrieval tasks neither side was tuned for, the corpus
  being the abstracts alone and the paper's own abstract the one right
  answer (recall@1, recall@10, MRR@10), each paper's title the query: in
  "title" the abstracts are as written (words do well: titles reuse their
  abstract's words); in "masked" the asked papers' abstracts lose every word
  of their own title, so only meaning can find them and shared words mostly
  point to other papers. Words (SQLite FTS5 BM25, as Lightnews searches) and
  the fusion of words with each encoder (reciprocal rank, as Lightnews
  fuses, at the meaning weights compared) are measured on the same tasks;
- agreement of related papers: how many of MiniLM's 10 nearest abstracts
  each encoder also puts in its 10 nearest (MiniLM at 256 and at 128 tokens);
- how close minilm-int8's vectors are to MiniLM's own for the same texts;
- the cosine similarity of right answers and of random pairs, from which the
  floor below which a "nearest by meaning" hit is noise is chosen.

    .venv/bin/python bench/embedding_eval.py --papers 2000 --queries 500
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.embed.encoders import Encoder, MiniLMEncoder, load_encoder  # noqa: E402
from lightnews.embed.int8 import Int8MiniLMEncoder  # noqa: E402
from lightnews.search import MEANING_WEIGHT  # noqa: E402
from lightnews.search.fusion import fuse  # noqa: E402

CORPUS = ROOT.parent / "shared/fixtures/corpus/hf-papers/hf-papers-11k.jsonl"


def load(limit: int | None, seed: int) -> list[tuple[str, str]]:
    import json

    seen: set[str] = set()
    papers = []
    for line in CORPUS.open(encoding="utf-8"):
        row = json.loads(line)
        title, abstract = row.get("title") or "", row.get("content_text") or ""
        if title and len(abstract) > 200 and title.lower() not in seen:
            seen.add(title.lower())
            papers.append((title.strip(), abstract.strip()))
    random.Random(seed).shuffle(papers)
    return papers[:limit] if limit else papers


def rate(encode: object, texts: list[str]) -> tuple[float, float]:
    """Documents a second of wall time, and per second of this process's CPU time."""
    started, cpu = time.perf_counter(), time.process_time()
    encode(texts)  # type: ignore[operator]
    return len(texts) / (time.perf_counter() - started), len(texts) / (time.process_time() - cpu)


def ranks_by_vectors(queries: np.ndarray, docs: np.ndarray, k: int = 100) -> list[list[int]]:
    scores = queries @ docs.T
    top = np.argsort(-scores, axis=1)[:, :k]
    return [list(map(int, row)) for row in top]


def ranks_by_words(queries: list[str], docs: list[str], k: int = 100) -> list[list[int]]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE d USING fts5(body, tokenize = 'porter unicode61')")
    db.executemany("INSERT INTO d (rowid, body) VALUES (?, ?)", enumerate(docs))
    found = []
    for query in queries:
        words = " OR ".join(f'"{w}"' for w in re.findall(r"\w+", query.lower()))
        rows = db.execute(
            "SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT ?", (words, k)
        ).fetchall()
        found.append([int(r[0]) for r in rows])
    return found


def quality(found: list[list[int]], answers: list[int]) -> dict[str, float]:
    r1 = sum(1 for f, a in zip(found, answers, strict=True) if f[:1] == [a]) / len(answers)
    r10 = sum(1 for f, a in zip(found, answers, strict=True) if a in f[:10]) / len(answers)
    mrr = sum(
        1 / (f.index(a) + 1) for f, a in zip(found, answers, strict=True) if a in f[:10]
    ) / len(answers)
    return {"R@1": r1, "R@10": r10, "MRR@10": mrr}


def fused(a: list[list[int]], b: list[list[int]], weight: float = 1.0) -> list[list[int]]:
    pairs = zip(a, b, strict=True)
    weights = {"meaning": weight}
    return [[key for key, _, _ in fuse({"words": x, "meaning": y}, weights)] for x, y in pairs]


def masked(title: str, abstract: str) -> str:
    """The abstract without the words of its title (compared by their first five letters)."""
    title_words = {w.lower()[:5] for w in re.findall(r"\w+", title)}
    kept = [
        w
        for w in re.findall(r"\S+", abstract)
        if re.sub(r"\W", "", w).lower()[:5] not in title_words
    ]
    return " ".join(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=2000, help="Abstracts in the task corpus.")
    parser.add_argument("--queries", type=int, default=500, help="Titles asked.")
    parser.add_argument("--throughput", type=int, default=300, help="Documents MiniLM encodes.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3, help="Throughput runs per encoder.")
    parser.add_argument("--throughput-only", action="store_true", help="Skip the quality tasks.")
    parser.add_argument(
        "--int8-tokens",
        type=lambda v: [int(n) for n in v.split(",") if n],
        default=[64],
        help="Shorter cuts of minilm-int8: 96,64",
    )
    args = parser.parse_args()
    if not CORPUS.exists():
        sys.exit(f"needs {CORPUS} (the shared fixtures)")
    everything = load(None, args.seed)
    papers = everything[: args.papers]
    full_texts = [f"{t}. {a}" for t, a in everything]
    titles = [t for t, _ in papers]
    abstracts = [a for _, a in papers]
    answers = list(range(min(args.queries, len(papers))))
    queries = titles[: len(answers)]
    print(
        f"corpus: {len(everything):,} real papers; task: {len(queries)} titles against "
        f"{len(abstracts):,} abstracts"
    )

    static = load_encoder("static")
    minilm = MiniLMEncoder(max_tokens=256)
    minilm128 = MiniLMEncoder(max_tokens=128)
    int8 = load_encoder("minilm-int8")
    shorter = {
        f"minilm-int8-{n}": Int8MiniLMEncoder(int8.path, max_tokens=n) for n in args.int8_tokens
    }
    static.encode(full_texts[:100])
    for warm in (minilm, minilm128, int8, *shorter.values()):
        warm.encode(full_texts[:16])

    print(f"\n## Throughput (title + abstract, all cores; {args.repeats} runs: slowest-fastest)")
    sample = full_texts[: args.throughput]
    timed: dict[str, tuple[Encoder, list[str]]] = {
        "minilm, 256 tokens": (minilm, sample),  # first: the reference
        "static": (static, full_texts),
        "minilm, 128 tokens": (minilm128, sample),
        "minilm-int8, 128 tokens": (int8, sample),
    }
    for n, encoder in zip(args.int8_tokens, shorter.values(), strict=True):
        timed[f"minilm-int8, {n} tokens"] = (encoder, sample)
    reference_rate = 0.0
    for name, (encoder, texts) in timed.items():
        runs = [rate(encoder.encode, texts) for _ in range(args.repeats)]
        slow, fast = min(r[0] for r in runs), max(r[0] for r in runs)
        reference_rate = reference_rate or fast
        print(
            f"{name:<24} {slow:>7,.0f}-{fast:<7,.0f} docs/s ({len(texts):,} docs; best "
            f"{max(r[1] for r in runs):,.0f} per CPU-second; x{fast / reference_rate:.1f} "
            f"minilm-256) 1M: {1e6 / fast / 3600:.2f}-{1e6 / slow / 3600:.2f} h"
        )
    print(f"load average while measuring: {os.getloadavg()[0]:.1f}")
    if args.throughput_only:
        return

    encoders: dict[str, Encoder] = {
        "minilm-256": minilm,
        "minilm-128": minilm128,
        "minilm-int8": int8,
        **shorter,
        "static": static,
    }
    started = time.perf_counter()
    docs = {name: encoder.encode(abstracts) for name, encoder in encoders.items()}
    print(f"\n(abstracts encoded in {time.perf_counter() - started:.0f}s)")
    masked_abstracts = list(abstracts)
    for n in answers:
        masked_abstracts[n] = masked(titles[n], abstracts[n])
    masked_docs = {}
    for name, encoder in encoders.items():
        masked_docs[name] = docs[name].copy()
        masked_docs[name][answers] = encoder.encode([masked_abstracts[n] for n in answers])
    tasks = {"title": (abstracts, docs), "masked": (masked_abstracts, masked_docs)}
    asked = {name: encoder.encode(queries) for name, encoder in encoders.items()}
    for task, (texts, vectors) in tasks.items():
        print(f"\n## Quality, task {task!r}: {len(queries)} titles -> their paper's abstract")
        if task == "masked":
            print(f"(e.g. {titles[0]!r} -> {masked_abstracts[0][:160]!r}...)")
        by_words = ranks_by_words(queries, texts)
        rows = {"words (FTS5 BM25)": quality(by_words, answers)}
        by: dict[str, list[list[int]]] = {}
        for name in encoders:
            by[name] = ranks_by_vectors(asked[name], vectors[name])
            rows[name] = quality(by[name], answers)
        for name in ("minilm-128", "minilm-int8", "static"):
            for weight in (1.0, 0.5):
                chosen = " *" if weight == MEANING_WEIGHT else ""
                rows[f"words + {name} (RRF, meaning x{weight}){chosen}"] = quality(
                    fused(by_words, by[name], weight), answers
                )
        reference = rows["minilm-256"]["MRR@10"]
        reference128 = rows["minilm-128"]["MRR@10"]
        print(
            f"{'system':<42} {'R@1':>6} {'R@10':>6} {'MRR@10':>7} {'/ minilm-256':>13} "
            f"{'/ minilm-128':>13}"
        )
        for name, q in rows.items():
            ratios = f"{q['MRR@10'] / reference:13.2f} {q['MRR@10'] / reference128:13.2f}"
            print(f"{name:<42} {q['R@1']:6.3f} {q['R@10']:6.3f} {q['MRR@10']:7.3f} {ratios}")
    print("(* the weight Lightnews uses)")

    print("\n## Related papers: the 10 nearest abstracts, against minilm-256's")
    reference_nearest = ranks_by_vectors(docs["minilm-256"][: len(answers)], docs["minilm-256"], 11)
    near128 = ranks_by_vectors(docs["minilm-128"][: len(answers)], docs["minilm-128"], 11)
    for name in list(encoders)[1:]:
        nearest = ranks_by_vectors(docs[name][: len(answers)], docs[name], 11)
        overlap = [
            len(set(a[1:]) & set(b[1:])) / 10
            for a, b in zip(nearest, reference_nearest, strict=True)
        ]
        overlap128 = [
            len(set(a[1:]) & set(b[1:])) / 10 for a, b in zip(nearest, near128, strict=True)
        ]
        print(
            f"{name:<16} mean overlap@10 with minilm-256: {np.mean(overlap):.3f}, "
            f"with minilm-128: {np.mean(overlap128):.3f}"
        )

    print("\n## Cosine of each abstract's vector to minilm-128's (same text, same cut)")
    for name in ("minilm-int8",):
        same = np.sum(docs[name] * docs["minilm-128"], axis=1)
        print(
            f"{name:<16} mean {same.mean():.4f} p5 {np.percentile(same, 5):.4f} "
            f"min {same.min():.4f}"
        )

    print("\n## Cosine of right answers vs random pairs, task 'title' (the noise floor)")
    rng = np.random.default_rng(args.seed)
    for name in encoders:
        q, d = asked[name], docs[name]
        right = np.sum(q * d[answers], axis=1)
        random_pairs = np.sum(q * d[rng.integers(0, len(d), size=len(q))], axis=1)
        print(
            f"{name:<16} right p5 {np.percentile(right, 5):.3f} p50 {np.median(right):.3f} · "
            f"random p50 {np.median(random_pairs):.3f} p95 {np.percentile(random_pairs, 95):.3f} "
            f"p99 {np.percentile(random_pairs, 99):.3f}"
        )


if __name__ == "__main__":
    main()
