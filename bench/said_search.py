"""Benchmark: search of what scholars said, on real text; and what its index costs ingestion.

Two measurements, on the real recordings in ``../shared/fixtures``:

* **Quality.** A library of the ten lab-blog feeds (``feeds/lab-blogs``), the
  seed profile's posts (``seed-pages/bluesky``: three self-threads, lone
  posts, reposts), the seed lab article (``seed-pages/blog``) and the seed
  notes page (``seed-pages/notes``), ingested as a refresh would. A labelled
  query set (``QUERIES``): queries whose answer is in that text, each with
  the items that answer it (named by a piece of their title, or of their text
  for posts), and queries whose topic nothing there discusses (``NO_ANSWER``).
  Reports precision@5 (of the hits shown in the first five, the share that
  answer the query; a query with fewer hits is judged on what it shows),
  success@1 and recall@5 over the answerable queries, and the share of the
  unanswerable ones that get no result. The labels were written from the
  feeds' titles and then completed by reading the pooled top five of every
  query (an item that discusses the topic counts as an answer, one that only
  mentions a word does not).
* **Ingestion.** Items stored per second by ``save_items`` (the store's real
  write path, full-text triggers included; parsing and linking are not timed)
  for the parsed fixture items (lab blogs, posts, notes: what this search
  indexes) and for records of papers (arXiv API listings: what it no longer
  indexes), each batch saved under a fresh source so that every item is new.
  ``--code PATH`` measures another checkout's store (the code before the
  change: ``git worktree add /tmp/before main``).

    .venv/bin/python bench/said_search.py
    .venv/bin/python bench/said_search.py --ingest-only --code /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "fixtures"

# (query, pieces of the titles — or of the text, for posts — of the items that answer it)
QUERIES: list[tuple[str, list[str]]] = [
    ("KV cache", ["Defeating Nondeterminism", "Heaps do lie"]),
    ("memory leak", ["Heaps do lie"]),
    ("hierarchical memories", ["hierarchical memories", "LLMs are currently this one big"]),
    ("memory bank", ["memory", "Memories", "LLMs are currently this one big"]),
    (
        "SelfReflect benchmark",
        [
            "SelfReflect",
            "Many treat uncertainty",
            "Since its initial release",
            "hill-climbing",
            "Can LLMs access and describe",
        ],
    ),
    (
        "LLM uncertainty",
        [
            "uncertaint",
            "internal distribution",
            "SelfReflect",
            "Apple Machine Learning Research at ICLR 2025",
        ],
    ),
    (
        "mixture of experts",
        [
            "MoE",
            "MOE++",
            "Grok Image Generation Release",
            "Introducing Mistral 3",
            "Mistral Small 4",
        ],
    ),
    ("tokenizer-free", ["Tokenizer-Free", "MrT5", "Hierachical Autoregressive"]),
    (
        "test-time compute",
        [
            "Test-Time Compute",
            "Adaptive Computation",
            "Inference Scaling",
            "chain-of-thought monitorability",
            "GeneBench-Pro",
        ],
    ),
    ("long context retrieval", ["Retrieval Head", "Long-Context RAG", "Context and Retrieval"]),
    ("LoRA", ["LoRA Without Regret", "Which parametric memories", "satellite imagery"]),
    ("on-policy distillation", ["On-Policy Distillation"]),
    ("nondeterminism inference", ["Defeating Nondeterminism"]),
    (
        "chain-of-thought monitorability",
        ["monitorability", "Monitorability", "grading CoT", "monitor internal coding agents"],
    ),
    ("sparse autoencoder", ["sparse-autoencoder", "sparse circuits", "Helpful assistant features"]),
    ("reward model", ["Reward Models", "Reward-Seeking", "grading CoT"]),
    (
        "emergent misalignment",
        [
            "emergent misalignment",
            "Debugging misaligned completions",
            "Reinforcement learning towards broadly",
        ],
    ),
    ("text watermark", ["text watermark"]),
    ("protein design", ["protein design"]),
    ("OCR", ["OCR"]),
    ("speech transcription", ["Voxtral", "Advancing voice intelligence"]),
    ("exploits", ["exploit", "cyber", "Cyber", "CVE", "cryptographic", "Firefox"]),
    ("drone", ["Project Pilot"]),
    ("robotics", ["robotics", "Robostral", "Project Fetch"]),
    ("satellite imagery", ["satellite imagery"]),
    ("Lean proofs", ["Leanstral", "Ten advances in mathematics"]),
    (
        "open-weights models",
        [
            "open-weights",
            "Open Weights",
            "gpt-oss",
            "open models",
            "Shieldstral",
            "Voxtral transcribes",
            "Introducing Mistral 3",
        ],
    ),
    ("system card", ["System Card"]),
    ("Economic Index", ["Economic Index", "Canadian AI research"]),
    ("confessions", ["confessions", "self-report misbehavior"]),
    ("training data privacy", ["Information access is controllable", "Privacy Filter"]),
    ("image generation", ["Image Generation", "Images", "Imagine"]),
]
# Topics nothing in the library discusses (a word of one may appear in passing).
NO_ANSWER = [
    "zzzxqy",
    "banana bread recipe",
    "quantum error correction",
    "weather forecasting",
    "autonomous driving lidar",
    "music generation",
    "federated learning",
    "stock price prediction",
    "medical image segmentation",
    "knowledge graph embeddings",
    "recommender systems",
    "gaussian splatting",
    "football world cup",
    "graph neural networks",
    "protein folding",
    "sourdough starter",
]
FEEDS = sorted((SHARED / "feeds" / "lab-blogs").glob("feed_*.xml"))
PAGES = [
    ("bluesky", SHARED / "seed-pages/bluesky/getAuthorFeed.mkirchhof.json"),
    ("feed", SHARED / "seed-pages/blog/apple-ml-research.rss.xml"),
    ("notes", SHARED / "seed-pages/notes/iclr2025-notes.html"),
] + [("feed", path) for path in FEEDS]


def _answers(hit: object, pieces: list[str]) -> bool:
    title = getattr(hit, "title", "") or ""
    text = getattr(hit, "snippet", "") or ""
    if getattr(hit, "kind", "") in ("post", "thread"):
        title = title + " " + text
    return any(p in title for p in pieces)


def quality(db: Path) -> dict[str, object]:
    from lightnews.ingest.replay import ingest_bytes
    from lightnews.search import search_papers
    from lightnews.settings import Settings
    from lightnews.store import open_store

    settings = Settings(environ={}).with_overrides(semantic="off", resolve_online=False)
    store = open_store(str(db))
    for kind, path in PAGES:
        ingest_bytes(store, kind, f"bench:{path.name}", path.read_bytes(), settings)
    counts = dict(
        store.db.execute(  # type: ignore[attr-defined]
            "SELECT kind, count(*) FROM items GROUP BY kind"
        ).fetchall()
    )
    precisions, first, recalls, rows = [], [], [], []
    for query, pieces in QUERIES:
        hits = search_papers(store, query, limit=20, settings=settings, items=True).items
        top = hits[:5]
        right = [_answers(h, pieces) for h in top]
        answering = sum(_answers(h, pieces) for h in hits)
        precisions.append(sum(right) / len(top) if top else 0.0)
        first.append(bool(right and right[0]))
        recalls.append(sum(right) / min(5, answering) if answering else 0.0)
        rows.append(
            (
                query,
                len(hits),
                right,
                [f"{h.kind}: {h.title[:50]} | {h.snippet[:150]}" for h in top],
            )
        )
    empty = []
    for query in NO_ANSWER:
        hits = search_papers(store, query, limit=20, settings=settings, items=True).items
        empty.append(not hits)
        rows.append(
            (
                query,
                len(hits),
                [],
                [f"{h.kind}: {h.title[:50]} | {h.snippet[:150]}" for h in hits[:5]],
            )
        )
    store.close()
    return {
        "items": counts,
        "answerable": len(QUERIES),
        "precision@5": sum(precisions) / len(precisions),
        "success@1": sum(first) / len(first),
        "recall@5": sum(recalls) / len(recalls),
        "unanswerable": len(NO_ANSWER),
        "no-answer rate": sum(empty) / len(empty),
        "rows": rows,
    }


def ingestion(db: Path, rounds: int) -> dict[str, float]:
    from lightnews.model import SourceState
    from lightnews.sources import registry
    from lightnews.store import open_store

    store = open_store(str(db))
    now = "2026-01-01T00:00:00Z"
    said: list[object] = []
    for kind, path in PAGES:
        source = registry()[kind](f"bench:{path.name}")
        said.append(source.parse(path.read_bytes(), SourceState()).items)
    records = []
    for path in sorted((SHARED / "arxiv" / "api-2026").glob("*.json")):
        body = json.loads(path.read_text())["body"].encode("latin-1")
        if b"<entry>" in body and b"<title>Error</title>" not in body:
            api = registry()["arxiv-api"]("bench:arxiv")
            records.append(api.parse(body, SourceState()).items)
    result: dict[str, float] = {}
    for name, batches in (("said", said), ("paper records", records)):
        items = 0
        seconds = cpu = 0.0
        for n in range(rounds):
            for number, batch in enumerate(batches):
                source, _ = store.add_source("feed", f"bench:{name}:{n}:{number}", now=now)
                began, began_cpu = time.perf_counter(), time.process_time()
                store.save_items(source.id, batch, now)  # type: ignore[arg-type]
                seconds += time.perf_counter() - began
                cpu += time.process_time() - began_cpu
                items += len(batch)  # type: ignore[arg-type]
        result[name] = items / seconds
        result[f"{name} cpu"] = items / cpu
        result[f"{name} items"] = items
    store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--rounds", type=int, default=20, help="ingestion rounds")
    parser.add_argument("--ingest-only", action="store_true")
    parser.add_argument("--show", action="store_true", help="print every query's top hits")
    parser.add_argument("--near-chars", type=int, help="NEAR_CHARS to use (0: no such check)")
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"SKIP: {SHARED} is not present (real data needed)")
        return
    sys.path.insert(0, str(args.code.resolve()))
    if args.near_chars is not None:
        from lightnews.search import said

        said.NEAR_CHARS = args.near_chars or 10**9
    with tempfile.TemporaryDirectory() as folder:
        print(f"code: {args.code}; load average {os.getloadavg()[0]:.1f}")
        speed = ingestion(Path(folder) / "ingest.db", args.rounds)
        print(
            f"ingestion (save_items, {args.rounds} rounds): "
            f"{speed['said']:.0f} posts/articles/notes per s of wall time, "
            f"{speed['said cpu']:.0f} per s of CPU ({speed['said items']:.0f}); "
            f"{speed['paper records']:.0f} paper records per s of wall time, "
            f"{speed['paper records cpu']:.0f} per s of CPU "
            f"({speed['paper records items']:.0f})"
        )
        if args.ingest_only:
            return
        found = quality(Path(folder) / "quality.db")
    rows = found.pop("rows")
    print(json.dumps(found))
    if args.show:
        for query, count, right, shown in rows:  # type: ignore[attr-defined]
            marks = "".join("+" if r else "-" for r in right)
            print(f"{query!r}: {count} hits {marks}")
            for line in shown:
                print(f"    {line}")


if __name__ == "__main__":
    main()
