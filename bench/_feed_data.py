"""The data of ``bench/feed_eval.py``: readers, their papers, and the papers' vectors.

Kept apart so that the data (what a reader is, which split it falls in, the
cached vectors) can be read without running the benchmark. Two real, public
sets under ``../shared/fixtures``, read in place:

- **PaperTweet** (``announcements/papertweet-dev.jsonl``, MIT): 8,958 real
  announcements of arXiv papers on Twitter, 2016-2022, mostly by an author of
  the paper. A reader is an account that announced at least ``MIN_PAPERS``
  papers; their announced papers are their saves. Every other announced paper
  (8,347 distinct, all of arXiv: physics, maths, CS) is the library. No
  explicit negatives.
- **CSFCube** (``relatedness/csfcube-dev``, CC BY-NC 4.0: benchmark use only,
  never shipped): 4,205 CS papers, 12 query papers graded by experts. A reader
  is a query paper: it and its candidates graded 2-3 are the saves; candidates
  graded 0 are explicit negatives (shown, judged unrelated); grade 1 ("somewhat
  related") is left out of everything.

The split is by reader and fixed: a reader is in ``test`` when the SHA-1 of
its name (an account's name, a query's id) is odd, else in ``dev``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"
OUT = ROOT / "bench" / "out" / "feed_eval"
MIN_PAPERS = 5


@dataclass(frozen=True, slots=True)
class Reader:
    name: str
    split: str  # "dev" or "test"
    positives: tuple[int, ...]  # rows of the dataset's papers, oldest first
    held_out: tuple[int, ...]  # the positives that are left out in turn
    negatives: tuple[int, ...]  # explicit negatives (rows)
    excluded: frozenset[int]  # rows never used as random negatives for this reader


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    ids: list[str]
    titles: list[str]
    abstracts: list[str]
    dates: np.ndarray[Any, Any] | None  # yyyymm per paper, or None (no dates)
    readers: list[Reader]


def split_of(name: str) -> str:
    return "test" if hashlib.sha1(name.encode()).digest()[-1] % 2 else "dev"


def papertweet() -> Dataset:
    path = FIXTURES / "announcements" / "papertweet-dev.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    index: dict[str, int] = {}
    ids: list[str] = []
    titles: list[str] = []
    abstracts: list[str] = []
    dates: list[int] = []
    by_author: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        row_id = index.get(row["arxiv_id"])
        if row_id is None:
            row_id = index[row["arxiv_id"]] = len(ids)
            ids.append(row["arxiv_id"])
            titles.append(" ".join(row["title"].split()))
            abstracts.append(" ".join(row["abstract"].split()))
            dates.append(int(row["year"]) * 100 + int(row["month"]))
        by_author[row["author_name"]].add(row_id)
    readers = []
    for name, papers in sorted(by_author.items()):
        if len(papers) >= MIN_PAPERS:
            ordered = tuple(sorted(papers, key=lambda r: (dates[r], ids[r])))
            readers.append(Reader(name, split_of(name), ordered, ordered, (), frozenset(ordered)))
    return Dataset("PaperTweet", ids, titles, abstracts, np.array(dates), readers)


def csfcube() -> Dataset:
    folder = FIXTURES / "relatedness" / "csfcube-dev"
    ids: list[str] = []
    titles: list[str] = []
    abstracts: list[str] = []
    for line in (folder / "corpus.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        ids.append(row["id"])
        titles.append(" ".join(row["title"].split()))
        abstracts.append(" ".join(row["abstract"].split()))
    index = {a: i for i, a in enumerate(ids)}
    qrels: dict[str, dict[str, int]] = json.loads((folder / "qrels-dev.json").read_text())
    readers = []
    for query, grades in sorted(qrels.items()):
        good = tuple(index[c] for c, g in sorted(grades.items()) if g >= 2 and c != query)
        bad = tuple(index[c] for c, g in sorted(grades.items()) if g == 0 and c != query)
        graded = frozenset(index[c] for c in grades) | {index[query]}
        readers.append(Reader(query, split_of(query), (index[query], *good), good, bad, graded))
    return Dataset("CSFCube", ids, titles, abstracts, None, readers)


def vectors(data: Dataset, encoder_name: str = "minilm-int8") -> np.ndarray[Any, Any]:
    """The papers' vectors from the library's default encoder, as the library keeps them
    (float16), encoded once and cached under bench/out/feed_eval/."""
    ROOT_PATH = str(ROOT)
    if ROOT_PATH not in sys.path:
        sys.path.insert(0, ROOT_PATH)
    from lightnews.embed import paper_text
    from lightnews.embed.encoders import load_encoder

    digest = hashlib.sha1("\n".join(data.ids).encode()).hexdigest()[:10]
    path = OUT / f"{data.name.lower()}-{encoder_name}-{digest}.npy"
    if path.exists():
        return np.load(path).astype(np.float32)
    OUT.mkdir(parents=True, exist_ok=True)
    encoder = load_encoder(encoder_name)
    texts = [paper_text(t, a) for t, a in zip(data.titles, data.abstracts, strict=True)]
    parts = []
    for start in range(0, len(texts), 512):
        parts.append(encoder.encode(texts[start : start + 512]).astype(np.float16))
        print(f"{data.name}: encoded {start + len(parts[-1])}/{len(texts)}", file=sys.stderr)
    matrix = np.concatenate(parts)
    np.save(path, matrix)
    return matrix.astype(np.float32)


if __name__ == "__main__":
    for dataset in (csfcube(), papertweet()):
        counts = {s: sum(1 for r in dataset.readers if r.split == s) for s in ("dev", "test")}
        held = {
            s: sum(len(r.held_out) for r in dataset.readers if r.split == s)
            for s in ("dev", "test")
        }
        print(dataset.name, len(dataset.ids), "papers; readers", counts, "held out", held)
        vectors(dataset)
