"""Generate a realistic arXiv metadata snapshot (JSON Lines) for benchmarks.

The real ``arxiv-metadata-oai-snapshot.json`` is several GB and cannot ship
with the project, and a benchmark on made-up text would measure the wrong
thing (TeX accents, wrapped abstracts, long author lists are where the parser
spends its time). This script writes a file in the snapshot's exact layout by
*varying real records* from ``../shared/fixtures``:

* titles and abstracts come from the 11,022 real ML papers of
  ``corpus/hf-papers/hf-papers-11k.jsonl`` (sentences spliced between papers,
  titles recombined, wrapped the way the snapshot wraps them);
* author names, TeX accents, categories, comments, journal-refs, DOIs,
  report numbers, licences and some whole physics titles/abstracts come from
  the 1,192 ``.abs`` files under ``arxiv/abs/`` (read with
  :func:`lightnews.sources.arxiv_abs.parse_abs`, plus the raw TeX fields);
  about 5% of records keep a raw TeX author string and no ``authors_parsed``
  so the flat-string path is exercised too.

Output is deterministic for a seed, streamed (constant memory), ids are
unique (new style ``YYMM.NNNNN`` in id order, then ~3% old style such as
``hep-th/9901001``), records have 1–3 versions and average ~1.5 KB, and about
0.1% of lines are deliberately broken (invalid JSON, missing or invalid id).

    .venv/bin/python bench/make_snapshot.py --records 200000 --out bench/out/s.jsonl

Exits 0 printing ``SKIP: ...`` when ``../shared/fixtures`` is absent.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from lightnews.errors import ParseError
from lightnews.sources.arxiv_abs import parse_abs

FIXTURES = Path(__file__).resolve().parents[2] / "shared/fixtures"
HF_PAPERS = FIXTURES / "corpus/hf-papers/hf-papers-11k.jsonl"
ABS_DIR = FIXTURES / "arxiv/abs"

BROKEN_RATE = 0.001
OLD_STYLE_RATE = 0.03
RAW_TEX_AUTHORS_RATE = 0.05

_ML_CATEGORIES = [
    "cs.LG",
    "cs.CL",
    "cs.CV",
    "cs.AI",
    "stat.ML",
    "cs.IR",
    "cs.RO",
    "cs.NE",
    "cs.SD eess.AS",
    "cs.CR",
    "cs.HC",
    "math.OC",
]
_LICENSES = [
    ("http://arxiv.org/licenses/nonexclusive-distrib/1.0/", 62),
    ("http://creativecommons.org/licenses/by/4.0/", 22),
    ("http://creativecommons.org/licenses/by-nc-sa/4.0/", 4),
    ("http://creativecommons.org/licenses/by-sa/4.0/", 2),
    ("http://creativecommons.org/licenses/by-nc-nd/4.0/", 3),
    ("http://creativecommons.org/publicdomain/zero/1.0/", 1),
    (None, 6),
]
# Old-style archives with rough relative sizes.
_OLD_ARCHIVES = [
    ("astro-ph", 20),
    ("cond-mat", 18),
    ("hep-ph", 12),
    ("hep-th", 12),
    ("math", 12),
    ("quant-ph", 6),
    ("gr-qc", 4),
    ("physics", 4),
    ("nucl-th", 2),
    ("hep-ex", 1),
    ("hep-lat", 2),
    ("math-ph", 2),
    ("nlin", 1),
    ("cs", 2),
    ("q-bio", 1),
    ("chao-dyn", 1),
    ("solv-int", 1),
    ("alg-geom", 1),
]
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_RAW_FIELD_RE = re.compile(r"^([A-Z][\w-]*):\s?(.*)$")
_FROM_RE = re.compile(r"^From:\s*([^<]*?)\s*<", re.M)


@dataclass(slots=True)
class Pools:
    """Real material the records are varied from."""

    titles: list[str] = field(default_factory=list)
    abstracts: list[list[str]] = field(default_factory=list)  # sentences
    tex_titles: list[str] = field(default_factory=list)
    tex_abstracts: list[str] = field(default_factory=list)
    tex_author_strings: list[str] = field(default_factory=list)
    forenames: list[str] = field(default_factory=list)
    surnames: list[str] = field(default_factory=list)
    submitters: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    journal_refs: list[str] = field(default_factory=list)
    dois: list[str] = field(default_factory=list)
    report_nos: list[str] = field(default_factory=list)


def _raw_header_fields(text: str) -> dict[str, str]:
    """The ``Key: value`` fields of an ``.abs`` header as written (TeX kept)."""
    header = text.split("\\\\")[1]
    fields: dict[str, str] = {}
    current: str | None = None
    for line in header.splitlines():
        match = _RAW_FIELD_RE.match(line)
        if match and not line.startswith(("Date", "From")):
            current = match[1].lower()
            fields[current] = match[2]
        elif line.startswith((" ", "\t")) and current:
            fields[current] += " " + line.strip()
        else:
            current = None
    return fields


def _split_tex_names(authors: str) -> list[str]:
    """A raw TeX author string split into names (affiliations dropped)."""
    depth = 0
    kept: list[str] = []
    for char in authors:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif not depth:
            kept.append(char)
    names = re.split(r",?\s+and\s+|\s*,\s*|\s*;\s*", "".join(kept))
    return [" ".join(n.split()) for n in names if len(n.split()) >= 2]


def load_pools() -> Pools:
    pools = Pools()
    for line in HF_PAPERS.read_bytes().splitlines():
        row = orjson.loads(line)
        title = " ".join((row.get("title") or "").split())
        text = " ".join((row.get("content_text") or "").split())
        text = text.removeprefix("Abstract ").replace("AI-generated summary ", "")
        if title:
            pools.titles.append(title)
        if len(text) > 200:
            pools.abstracts.append(_SENTENCE_RE.split(text))
    forenames: set[str] = set()
    surnames: set[str] = set()
    for path in sorted(ABS_DIR.rglob("*.abs")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            paper = parse_abs(text)
        except ParseError:
            continue
        raw = _raw_header_fields(text)
        if raw.get("authors"):
            pools.tex_author_strings.append(" ".join(raw["authors"].split()))
            for name in _split_tex_names(raw["authors"]):
                *first, last = name.split()
                surnames.add(last)
                forenames.add(" ".join(first))
        submitter = _FROM_RE.search(text)
        if submitter and submitter[1]:
            pools.submitters.append(submitter[1])
        if raw.get("title"):
            pools.tex_titles.append(" ".join(raw["title"].split()))
        sections = text.split("\\\\")
        if len(sections) > 2 and len(sections[2].strip()) > 200:
            pools.tex_abstracts.append(" ".join(sections[2].split()))
        if paper.categories:
            pools.categories.append(" ".join(paper.categories))
        if paper.comments:
            pools.comments.append(paper.comments)
        if paper.journal_ref:
            pools.journal_refs.append(paper.journal_ref)
        if paper.doi:
            pools.dois.append(paper.doi)
        if raw.get("report-no"):
            pools.report_nos.append(" ".join(raw["report-no"].split()))
    pools.forenames = sorted(f for f in forenames if f)
    pools.surnames = sorted(surnames)
    return pools


def _new_style_ids(count: int) -> Iterator[tuple[str, dt.date]]:
    """``count`` unique new-style ids in id order, more per month as arXiv grows."""
    months = [(y, m) for y in range(2007, 2026) for m in range(1, 13) if (y, m) >= (2007, 4)]
    weights = [1.0 + 3.0 * i / len(months) for i in range(len(months))]
    total = sum(weights)
    carry = 0.0
    left = count
    for index, ((year, month), weight) in enumerate(zip(months, weights, strict=True)):
        five = year >= 2015
        capacity = 99999 if five else 9999
        want = count * weight / total + carry
        n = left if index == len(months) - 1 else min(int(want), capacity, left)
        carry = want - n
        if n > capacity:
            raise ValueError(f"too many records for the id space ({count})")
        yymm = f"{year % 100:02d}{month:02d}"
        for number in range(1, n + 1):
            yield (
                (f"{yymm}.{number:05d}" if five else f"{yymm}.{number:04d}"),
                dt.date(year, month, 1),
            )
        left -= n


def _old_style_ids(count: int) -> Iterator[tuple[str, dt.date]]:
    """``count`` unique old-style ids (``hep-th/9901001``), archive by archive."""
    months = [(y, m) for y in range(1991, 2008) for m in range(1, 13)]
    months = [ym for ym in months if (1991, 8) <= ym <= (2007, 3)]
    total = sum(w for _, w in _OLD_ARCHIVES)
    left = count
    for index, (archive, weight) in enumerate(sorted(_OLD_ARCHIVES)):
        n = left if index == len(_OLD_ARCHIVES) - 1 else min(round(count * weight / total), left)
        per_month = max(1, -(-n // len(months)))
        produced = 0
        for year, month in months:
            for number in range(1, per_month + 1):
                if produced == n:
                    break
                yield f"{archive}/{year % 100:02d}{month:02d}{number:03d}", dt.date(year, month, 1)
                produced += 1
        left -= produced


def _rfc2822(moment: dt.datetime) -> str:
    return (
        f"{_DAYS[moment.weekday()]}, {moment.day} {_MONTHS[moment.month - 1]} {moment.year} "
        f"{moment:%H:%M:%S} GMT"
    )


def _wrap(text: str, width: int, joiner: str) -> str:
    lines: list[str] = []
    current: list[str] = []
    length = 0
    for word in text.split(" "):
        if current and length + 1 + len(word) > width:
            lines.append(" ".join(current))
            current, length = [], 0
        current.append(word)
        length += len(word) + (1 if length else 0)
    if current:
        lines.append(" ".join(current))
    return joiner.join(lines)


class Generator:
    """Records one after another from a seeded random stream."""

    def __init__(self, pools: Pools, seed: int) -> None:
        self.pools = pools
        self.rng = random.Random(seed)
        self.licenses = [lic for lic, _ in _LICENSES]
        self.license_weights = [w for _, w in _LICENSES]

    def title(self) -> str:
        rng, pools = self.rng, self.pools
        roll = rng.random()
        if roll < 0.12:
            return rng.choice(pools.tex_titles)
        title = rng.choice(pools.titles)
        if roll < 0.55:
            return title
        other = rng.choice(pools.titles)
        if ":" in title and ":" in other:
            return title.split(":", 1)[0] + ":" + other.split(":", 1)[1]
        words = title.split()
        donor = other.split()
        words[rng.randrange(len(words))] = donor[rng.randrange(len(donor))]
        return " ".join(words)

    def abstract(self) -> str:
        rng, pools = self.rng, self.pools
        if rng.random() < 0.12:
            return rng.choice(pools.tex_abstracts)
        sentences = rng.choice(pools.abstracts)
        target = rng.lognormvariate(6.6, 0.35)  # median ~740 chars, mean ~780
        out: list[str] = []
        length = 0
        for sentence in sentences:
            out.append(sentence)
            length += len(sentence) + 1
            if length >= target:
                break
        if length < target * 0.7:
            for sentence in rng.choice(pools.abstracts)[1:]:
                out.append(sentence)
                length += len(sentence) + 1
                if length >= target:
                    break
        return " ".join(out)

    def author_names(self) -> list[tuple[str, str]]:
        """(forenames, keyname) pairs, TeX as written in the ``.abs`` files."""
        rng, pools = self.rng, self.pools
        roll = rng.random()
        count = (
            1
            if roll < 0.15
            else rng.randint(2, 4)
            if roll < 0.65
            else rng.randint(5, 10)
            if roll < 0.95
            else rng.randint(11, 40)
        )
        return [(rng.choice(pools.forenames), rng.choice(pools.surnames)) for _ in range(count)]

    def record(self, arxiv_id: str, month: dt.date) -> dict[str, Any]:
        rng, pools = self.rng, self.pools
        old = "/" in arxiv_id
        if rng.random() < RAW_TEX_AUTHORS_RATE:
            authors = rng.choice(pools.tex_author_strings)
            parsed: list[list[str]] = []
        else:
            names = self.author_names()
            parsed = [[last, first, ""] for first, last in names]
            if rng.random() < 0.01:
                parsed[-1][2] = "Jr"
            written = [f"{first} {last}" for first, last in names]
            if len(written) > 1 and rng.random() < 0.4:
                authors = ", ".join(written[:-1]) + " and " + written[-1]
            else:
                authors = ", ".join(written)
        start = dt.datetime(month.year, month.month, 1) + dt.timedelta(
            days=rng.randrange(28), seconds=rng.randrange(86400)
        )
        versions = [start]
        for _ in range(rng.choices((0, 1, 2), (60, 28, 12))[0]):
            versions.append(versions[-1] + dt.timedelta(seconds=rng.randrange(3600, 400 * 86400)))
        updated = versions[-1] + dt.timedelta(days=rng.randrange(0, 30))
        if old and rng.random() < 0.5:
            updated = dt.datetime(2008, 11, 13) + dt.timedelta(days=rng.randrange(0, 4000))
        categories = (
            rng.choice(pools.categories)
            if old or rng.random() < 0.35
            else " ".join(rng.sample(_ML_CATEGORIES, rng.randint(1, 3)))
        )
        abstract = self.abstract()
        return {
            "id": arxiv_id,
            "submitter": rng.choice(pools.submitters) if rng.random() < 0.97 else None,
            "authors": authors,
            "title": _wrap(self.title(), 70, "\n  "),
            "comments": rng.choice(pools.comments) if rng.random() < 0.75 else None,
            "journal-ref": rng.choice(pools.journal_refs) if rng.random() < 0.3 else None,
            "doi": rng.choice(pools.dois) if rng.random() < 0.35 else None,
            "report-no": rng.choice(pools.report_nos) if rng.random() < 0.08 else None,
            "categories": categories,
            "license": None if old else rng.choices(self.licenses, self.license_weights)[0],
            "abstract": "  " + _wrap(abstract, 78, "\n") + "\n",
            "versions": [
                {"version": f"v{i}", "created": _rfc2822(moment)}
                for i, moment in enumerate(versions, start=1)
            ],
            "update_date": f"{updated:%Y-%m-%d}",
            "authors_parsed": parsed,
        }

    def broken(self, record: dict[str, Any]) -> bytes:
        """A deliberately unreadable line: cut JSON, no id, or an id that is not one."""
        roll = self.rng.random()
        if roll < 0.5:
            line = orjson.dumps(record)
            return line[: self.rng.randrange(10, len(line) - 10)]
        if roll < 0.75:
            del record["id"]
        else:
            record["id"] = "not-an-arxiv-id"
        return orjson.dumps(record)


def generate(records: int, out: Path, seed: int = 0) -> dict[str, Any]:
    """Write ``records`` lines to ``out``; returns counts and sizes."""
    started = time.perf_counter()
    pools = load_pools()
    gen = Generator(pools, seed)
    n_old = round(records * OLD_STYLE_RATE)
    ids = [_new_style_ids(records - n_old), _old_style_ids(n_old)]
    broken = 0
    size = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with partial.open("wb", buffering=1 << 20) as stream:
        buffer: list[bytes] = []
        for source in ids:
            for arxiv_id, month in source:
                record = gen.record(arxiv_id, month)
                if gen.rng.random() < BROKEN_RATE:
                    line = gen.broken(record)
                    broken += 1
                else:
                    line = orjson.dumps(record)
                buffer.append(line)
                if len(buffer) >= 2000:
                    chunk = b"\n".join(buffer) + b"\n"
                    size += len(chunk)
                    stream.write(chunk)
                    buffer.clear()
        if buffer:
            chunk = b"\n".join(buffer) + b"\n"
            size += len(chunk)
            stream.write(chunk)
    partial.replace(out)
    return {
        "records": records,
        "broken": broken,
        "old_style": n_old,
        "bytes": size,
        "avg_bytes_per_line": round(size / records, 1) if records else 0.0,
        "seconds": round(time.perf_counter() - started, 1),
    }


def fixtures_missing() -> str | None:
    """Why the generator cannot run here, or None."""
    if not HF_PAPERS.is_file() or not ABS_DIR.is_dir():
        return f"SKIP: shared fixtures not found at {FIXTURES}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, required=True, help="lines to write")
    parser.add_argument("--out", type=Path, required=True, help="output .jsonl path")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    reason = fixtures_missing()
    if reason:
        print(reason)
        return 0
    stats = generate(args.records, args.out, args.seed)
    print(orjson.dumps(stats).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
