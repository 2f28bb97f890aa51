"""Venue extraction measured on labelled real arXiv records (comments and journal-refs).

    python bench/venue_eval.py                 # precision and recall on dev and test
    python bench/venue_eval.py --errors dev    # every disagreement on a split, to tune on
    python bench/venue_eval.py --sample N      # draw a new sample to label (prints JSON lines)

The labels are ``bench/venue_labels.jsonl``: one real ``.abs`` record of
``../shared/fixtures/arxiv/abs`` a line, its comments and journal-ref as arXiv
gives them, and ``venue``: the journal, proceedings or conference the record
says the paper is published in or accepted at ("" when it says none: a
submission, a talk, page counts). ``alt`` lists other spellings of the same
venue that count as right (where the name's end is a matter of taste).
``split`` is ``dev`` (rules tuned on it) or ``test`` (held out).

A prediction is right when :func:`lightnews.normalize.venues.venue_key` of its
name equals the key of the label or of one of its ``alt``; precision is right
predictions over predictions, recall right predictions over labelled venues.
"""

from __future__ import annotations

import argparse
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
ABS = ROOT.parent / "shared" / "fixtures" / "arxiv" / "abs"
#: Comments that speak of publishing at all (accepted, submitted, talks...): half the sample,
#: so that the hard negatives (a submission, a talk) are well represented.
_TOPICAL = re.compile(
    r"accept|appear|publish|proceeding|conference|workshop|symposium|journal|submitted|talk|"
    r"in press|review",
    re.I,
)


def sample(size: int, seed: int = 13) -> list[dict[str, str]]:
    """``size`` records with comments or a journal-ref: half topical comments, half any."""
    records = []
    for path in sorted(ABS.rglob("*.abs")):
        try:
            paper = parse_abs(path.read_text(encoding="utf-8", errors="replace"))
        except Exception:
            continue
        if paper.comments or paper.journal_ref:
            records.append(paper)
    rng = random.Random(seed)
    topical = [p for p in records if p.comments and _TOPICAL.search(p.comments)]
    chosen = rng.sample(topical, size // 2)
    rest = [p for p in records if p not in chosen]
    chosen += rng.sample(rest, size - len(chosen))
    rng.shuffle(chosen)
    return [
        {"id": p.arxiv_id, "split": "dev" if i % 2 == 0 else "test",
         "comments": p.comments or "", "journal_ref": p.journal_ref or "", "doi": p.doi or ""}
        for i, p in enumerate(chosen)
    ]  # fmt: skip


def evaluate(rows: list[dict[str, object]]) -> dict[str, float]:
    predicted = right = labelled = 0
    for row in rows:
        venue = venue_of(str(row["journal_ref"]) or None, str(row["comments"]) or None,
                         str(row.get("doi") or "") or None)  # fmt: skip
        keys = {venue_key(str(n)) for n in [row["venue"], *row.get("alt", [])] if n}  # type: ignore[misc]
        labelled += bool(row["venue"])
        if venue is not None:
            predicted += 1
            right += venue_key(venue.name) in keys
    return {
        "records": len(rows), "labelled": labelled, "predicted": predicted, "right": right,
        "precision": right / predicted if predicted else 0.0,
        "recall": right / labelled if labelled else 0.0,
    }  # fmt: skip


def errors(rows: list[dict[str, object]]) -> None:
    for row in rows:
        venue = venue_of(str(row["journal_ref"]) or None, str(row["comments"]) or None,
                         str(row.get("doi") or "") or None)  # fmt: skip
        keys = {venue_key(str(n)) for n in [row["venue"], *row.get("alt", [])] if n}  # type: ignore[misc]
        got = venue.name if venue else ""
        if (venue_key(got) in keys) if got else not keys:
            continue
        print(f"{row['id']}: label {row['venue']!r} got {got!r}")
        print(f"    comments: {row['comments']}\n    journal-ref: {row['journal_ref']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int)
    parser.add_argument("--errors", choices=["dev", "test"])
    args = parser.parse_args()
    if args.sample:
        for row in sample(args.sample):
            print(json.dumps(row, ensure_ascii=False))
        return
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    if args.errors:
        errors([r for r in rows if r["split"] == args.errors])
        return
    for split in ("dev", "test"):
        found = evaluate([r for r in rows if r["split"] == split])
        print(f"{split}: {found['records']} records, {found['labelled']} with a venue, "
              f"{found['predicted']} predicted, {found['right']} right; "
              f"precision {found['precision']:.3f}, recall {found['recall']:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
