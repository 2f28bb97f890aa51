"""Venue extraction measured on labelled real arXiv records (comments and journal-refs).

    python bench/venue_eval.py                 # precision and recall per source and split
    python bench/venue_eval.py --errors dev    # every disagreement on a split, to tune on
    python bench/venue_eval.py --sample N      # draw unlabelled .abs records to label
    python bench/venue_eval.py --sample-api    # the unlabelled records of the API fixtures

The labels are ``bench/venue_labels.jsonl``: one real arXiv record a line, its
comments and journal-ref as arXiv gives them, and ``venue``: the journal,
proceedings or conference the record says the paper is published in or
accepted at. ``source`` is where the record comes from: ``abs`` (the default;
``../shared/fixtures/arxiv/abs``, 1990s-2000s physics and mathematics, the
sample the issue's bar is set on) or ``api-2026`` (the entries of
``../shared/fixtures/arxiv/api-2026``: 2010s-2020s computer science, the
"Accepted at ... (ICST 2025)" phrasings of the product's readers).

Label conventions (what a record "says"):

* a journal-ref wins: the label is its journal or proceedings, the text before
  the volume, pages or year, as written ("Phys.Rev.D", "AIP Conf.Proc.");
* accepted, in press, to appear, published, "version published in", "matches
  the version appearing in", "In Proceedings of", a contribution to or
  "proceeding(s) of/for" a meeting, a book chapter "to appear in" a named book:
  the venue named;
* a bare venue name as the whole comment or beside page counts ("2021 IEEE
  Conference on Artificial Intelligence Testing (AITest 2021)", "MET'24: 9th
  ACM International Workshop on Metamorphic Testing"): that venue;
* none (""): submitted to, under review, a talk or poster presented at, lectures
  given at, "to be published by <publisher>", an extended or full version of
  another (conference) paper, a thesis, a white paper, page counts and
  keywords, a DOI alone (a DOI's prefix names a publisher, not a venue);
* a workshop is not its host conference: "Accepted to the Workshop on X at
  ICPADS 2015" is the workshop, "5th INTUITESTBEDS 2022, part of ... ICST
  2022" is INTUITESTBEDS; a main-conference track ("Industry Track of ICST
  2025", "Testing Tools Track") is the conference;
* an abridged version "to appear in" a venue is the paper's venue (it is the
  same work, shorter).

``alt`` lists other spellings of the same venue that count as right (where the
name's end or its acronym-and-year form is a matter of taste). ``split`` is
``dev`` (rules tuned on it) or ``test`` (held out). The first 360 ``abs``
records were drawn in two samples (seed 13, then 2026) and split by
alternation; every record added later (the third ``abs`` sample, seed 2027,
and the ``api-2026`` records) is split by a hash of its arXiv id
(:func:`hash_split`), fixed before any rule was changed, and was labelled
before its split was known.

A prediction is right when :func:`lightnews.normalize.venues.venue_key` of its
name equals the key of the label or of one of its ``alt``; precision is right
predictions over predictions, recall right predictions over labelled venues.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lightnews.normalize.venues import venue_key, venue_of  # noqa: E402
from lightnews.sources.arxiv_abs import parse_abs  # noqa: E402

LABELS = ROOT / "bench" / "venue_labels.jsonl"
FIXTURES = ROOT.parent / "shared" / "fixtures" / "arxiv"
ABS = FIXTURES / "abs"
API = FIXTURES / "api-2026"
#: Comments that speak of publishing at all (accepted, submitted, talks...): half the sample,
#: so that the hard negatives (a submission, a talk) are well represented.
_TOPICAL = re.compile(
    r"accept|appear|publish|proceeding|conference|workshop|symposium|journal|submitted|talk|"
    r"in press|review",
    re.I,
)


def hash_split(arxiv_id: str) -> str:
    """``test`` for half the ids (the last hex digit of their SHA-1 is 0-7), else ``dev``."""
    return "test" if hashlib.sha1(arxiv_id.encode()).hexdigest()[-1] in "01234567" else "dev"


def _labelled() -> set[str]:
    if not LABELS.exists():
        return set()
    return {json.loads(line)["id"] for line in LABELS.read_text().splitlines() if line.strip()}


def sample(size: int, seed: int = 2027) -> list[dict[str, str]]:
    """``size`` unlabelled ``.abs`` records: half with topical comments, half any.

    One record per arXiv id (the current version, ``ftp/``, before ``orig/``).
    """
    labelled = _labelled()
    records: dict[str, dict[str, str]] = {}
    paths = sorted(ABS.rglob("*.abs"), key=lambda p: ("/ftp/" not in str(p), str(p)))
    for path in paths:
        try:
            paper = parse_abs(path.read_text(encoding="utf-8", errors="replace"))
        except Exception:
            continue
        if not (paper.comments or paper.journal_ref) or paper.arxiv_id in labelled:
            continue
        records.setdefault(
            paper.arxiv_id,
            {
                "id": paper.arxiv_id,
                "source": "abs",
                "comments": " ".join((paper.comments or "").split()),
                "journal_ref": " ".join((paper.journal_ref or "").split()),
                "doi": paper.doi or "",
            },
        )
    rng = random.Random(seed)
    ids = sorted(records)
    topical = [i for i in ids if _TOPICAL.search(records[i]["comments"])]
    chosen = rng.sample(topical, size // 2)
    rest = [i for i in ids if i not in chosen]
    chosen += rng.sample(rest, size - len(chosen))
    rng.shuffle(chosen)
    return [{**records[i], "split": hash_split(i)} for i in chosen]


def sample_api() -> list[dict[str, str]]:
    """Every unlabelled entry of the API fixtures that has comments or a journal-ref."""
    labelled = _labelled()
    found: dict[str, dict[str, str]] = {}
    for path in sorted(API.glob("*.json")):
        body = json.loads(path.read_text())["body"]
        for entry in re.findall(r"<entry>(.*?)</entry>", body, re.S):
            ident = re.search(r"<id>http://arxiv.org/abs/([^<]+?)(?:v\d+)?</id>", entry)
            fields = {
                name: " ".join(html.unescape(m[1]).split()) if m else ""
                for name, m in (
                    (n, re.search(rf"<arxiv:{n}[^>]*>([^<]*)", entry))
                    for n in ("comment", "journal_ref", "doi")
                )
            }
            if ident and (fields["comment"] or fields["journal_ref"]) and ident[1] not in labelled:
                found[ident[1]] = {
                    "id": ident[1],
                    "split": hash_split(ident[1]),
                    "source": "api-2026",
                    "comments": fields["comment"],
                    "journal_ref": fields["journal_ref"],
                    "doi": fields["doi"],
                }
    return list(found.values())


def _predict(row: dict[str, object]) -> str:
    venue = venue_of(
        str(row["journal_ref"]) or None,
        str(row["comments"]) or None,
        str(row.get("doi") or "") or None,
    )
    return venue.name if venue else ""


def _keys(row: dict[str, object]) -> set[str]:
    return {venue_key(str(n)) for n in [row["venue"], *row.get("alt", [])] if n}  # type: ignore[misc]


def evaluate(rows: list[dict[str, object]]) -> dict[str, float]:
    predicted = right = labelled = 0
    for row in rows:
        got = _predict(row)
        labelled += bool(row["venue"])
        if got:
            predicted += 1
            right += venue_key(got) in _keys(row)
    return {
        "records": len(rows),
        "labelled": labelled,
        "predicted": predicted,
        "right": right,
        "precision": right / predicted if predicted else 0.0,
        "recall": right / labelled if labelled else 0.0,
    }


def errors(rows: list[dict[str, object]]) -> None:
    """Each disagreement: a wrong venue, a venue where the label has none (both false
    positives) or none where the label has one (a miss)."""
    for row in rows:
        got = _predict(row)
        keys = _keys(row)
        if (venue_key(got) in keys) if got else not keys:
            continue
        kind = "miss" if not got else ("false positive" if not keys else "wrong venue")
        print(
            f"{row['id']} [{row.get('source', 'abs')}] {kind}: label {row['venue']!r} got {got!r}"
        )
        print(f"    comments: {row['comments']}\n    journal-ref: {row['journal_ref']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--sample-api", action="store_true")
    parser.add_argument("--errors", choices=["dev", "test"])
    parser.add_argument("--source", choices=["abs", "api-2026"])
    parser.add_argument("--split", choices=["dev", "test"], help="figures of one split only")
    args = parser.parse_args()
    if args.sample or args.sample_api:
        for row in sample(args.sample, args.seed) if args.sample else sample_api():
            print(json.dumps(row, ensure_ascii=False))
        return
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    for row in rows:
        row.setdefault("source", "abs")
    if args.source:
        rows = [r for r in rows if r["source"] == args.source]
    if args.errors:
        errors([r for r in rows if r["split"] == args.errors])
        return
    splits = [args.split] if args.split else ["dev", "test"]
    groups = [(s, sp) for s in ("abs", "api-2026") for sp in splits]
    for source, split in groups:
        chosen = [r for r in rows if r["source"] == source and r["split"] == split]
        if not chosen:
            continue
        found = evaluate(chosen)
        bar = ""
        if source == "abs" and split == "test":
            ok = found["precision"] >= 0.95 and found["recall"] >= 0.90 and found["records"] >= 200
            bar = f"  {'PASS' if ok else 'FAIL'} (bar: P>=0.95, R>=0.90, n>=200)"
        print(
            f"{source} {split}: {found['records']} records, {found['labelled']} with a venue, "
            f"{found['predicted']} predicted, {found['right']} right; "
            f"precision {found['precision']:.3f}, recall {found['recall']:.3f}{bar}"
        )


if __name__ == "__main__":
    main()
