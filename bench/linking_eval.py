"""Linking evaluation: precision and recall of paper mentions, by kind of mention.

Built from real data in ``../shared/fixtures``: the 11,022 real papers of the
Hugging Face papers corpus, plus the arXiv API and ``.abs`` records (which have
authors, for the "Surname: short title" form), all loaded into a fresh store.
Mentions are generated from them by a reproducible procedure (seeded):

* ``identifier`` -- an arXiv id written in one of many forms inside a sentence,
  plus sentences with numbers that are not arXiv ids (negatives);
* ``exact-title`` -- a title quoted inside running text;
* ``paraphrased-title`` -- a title rewritten word by word with synonyms the way
  article spinners do, often with its subtitle dropped and sometimes a typo;
* ``surname-short-title`` -- "Surname: short title" as conference notes write;
* every title kind also has *held-out* papers: their mentions are generated
  the same way, but the papers are not in the store, so any link is wrong.

Precision counts every asserted link (wrong papers and links for held-out
papers are false positives); recall counts positives linked to the right
paper. Run::

    .venv/bin/python bench/linking_eval.py [--mentions 400] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.link.identifiers import find_arxiv_mentions  # noqa: E402
from lightnews.link.titles import Reference, find_title_mentions, match_reference  # noqa: E402
from lightnews.model import Author, Paper  # noqa: E402
from lightnews.normalize.arxiv_ids import parse_arxiv_id  # noqa: E402
from lightnews.sources.arxiv_abs import parse_abs  # noqa: E402
from lightnews.sources.arxiv_api import parse_api_feed  # noqa: E402
from lightnews.store import SQLiteStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "fixtures"

# Word-by-word substitutions of the kind article spinners make (our own table).
SYNONYMS = {
    "learning": ["studying", "training"],
    "large": ["giant", "big"],
    "language": ["linguistic"],
    "models": ["fashions", "mannequins"],
    "model": ["mannequin", "fashion"],
    "attention": ["consideration"],
    "better": ["higher"],
    "faster": ["sooner"],
    "research": ["analysis"],
    "image": ["picture"],
    "images": ["pictures"],
    "generation": ["era", "technology"],
    "generative": ["generating"],
    "video": ["movie"],
    "understanding": ["comprehension"],
    "reasoning": ["reason", "reasoning"],
    "problems": ["issues"],
    "problem": ["issue"],
    "through": ["via"],
    "via": ["through"],
    "efficient": ["environment friendly"],
    "efficiency": ["effectivity"],
    "training": ["coaching"],
    "data": ["knowledge"],
    "dataset": ["knowledge set"],
    "benchmark": ["benchmark", "yardstick"],
    "evaluation": ["analysis", "assessment"],
    "towards": ["in direction of"],
    "toward": ["in direction of"],
    "using": ["utilizing"],
    "improving": ["bettering"],
    "improve": ["enhance"],
    "improves": ["enhances"],
    "robust": ["sturdy"],
    "scalable": ["scalable"],
    "scaling": ["scaling", "rising"],
    "multimodal": ["multi-modal"],
    "vision": ["imaginative and prescient"],
    "agents": ["brokers"],
    "agent": ["agent", "dealer"],
    "tasks": ["duties"],
    "task": ["activity"],
    "learn": ["study"],
    "new": ["novel"],
    "novel": ["new"],
    "method": ["methodology"],
    "approach": ["method"],
    "framework": ["framework"],
    "fast": ["quick"],
    "small": ["small", "little"],
    "less": ["much less"],
    "than": ["than"],
    "second": ["second"],
    "pro": ["professional"],
    "free": ["free"],
    "world": ["world"],
    "policy": ["coverage"],
    "reward": ["reward", "reward"],
    "fine": ["tremendous"],
    "tuning": ["tuning"],
    "memory": ["reminiscence"],
    "knowledge": ["information"],
    "retrieval": ["retrieval"],
    "search": ["search", "seek"],
    "theory": ["principle"],
    "best": ["finest"],
    "practices": ["practices"],
    "limitations": ["constraints"],
    "instructions": ["directions"],
    "follow": ["observe"],
    "estimate": ["estimate"],
    "uncertainty": ["uncertainty"],
    "text": ["textual content"],
    "control": ["management"],
    "decision": ["choice"],
    "making": ["making"],
    "mathematical": ["mathematical"],
    "math": ["math"],
    "older": ["older"],
    "human": ["human"],
    "alignment": ["alignment"],
    "preference": ["choice"],
    "optimization": ["optimisation"],
    "simple": ["easy"],
    "strong": ["sturdy"],
    "effective": ["efficient"],
    "diverse": ["various"],
    "high": ["excessive"],
    "quality": ["high quality"],
    "long": ["lengthy"],
    "short": ["brief"],
    "context": ["context"],
    "generalization": ["generalisation"],
    "survey": ["survey"],
}
TEMPLATES = [
    "At the conference our team presents {m}, which we are excited to share.",
    "In {m}, the authors study a question many of us have asked.",
    "We also liked {m} - worth a read.",
    "Another highlight of the week was {m}. It builds on earlier work.",
    "{m}",
    "Paper of the day: {m}",
    "The work {m} proposes a different take on an old problem.",
]
ID_FORMS: list[Callable[[str, int], str]] = [
    lambda i, v: f"https://arxiv.org/abs/{i}",
    lambda i, v: f"https://arxiv.org/abs/{i}v{v}",
    lambda i, v: f"arxiv.org/pdf/{i}v{v}.pdf",
    lambda i, v: f"https://arxiv.org/html/{i}v{v}",
    lambda i, v: f"arXiv:{i}",
    lambda i, v: f"(arXiv:{i}v{v})",
    lambda i, v: f"https://huggingface.co/papers/{i}",
    lambda i, v: f"https://www.alphaxiv.org/abs/{i}",
    lambda i, v: f"https://doi.org/10.48550/arXiv.{i}",
    lambda i, v: f"http://export.arxiv.org/abs/{i}",
]
NOT_IDS = [
    "Version 2.13.0 is out with 1.5x speedups.",
    "We reached 0.9876 accuracy on 1000.0 hours of audio.",
    "Call 2345.67890 for tickets; doi:10.1145/3580305.3599344.",
    "Released on 2025.10.03 at 14.30 local time.",
    "See github.com/org/repo/releases/tag/2510.02375 for builds.",
    "Page https://example.org/2510.02375/ has nothing to do with arXiv.",
]


@dataclass(slots=True)
class Case:
    kind: str
    text: str
    truth: str | None  # the arXiv id it names, None for a held-out paper or a non-id
    reference: Reference | None = None


def load_corpus() -> dict[str, Paper]:
    papers: dict[str, Paper] = {}
    for line in (SHARED / "corpus/hf-papers/hf-papers-11k.jsonl").open("rb"):
        record = orjson.loads(line)
        parsed = parse_arxiv_id(str(record.get("id", "")).rsplit("/", 1)[-1])
        if parsed and record.get("title"):
            papers[parsed.base] = Paper(
                parsed.base,
                title=" ".join(record["title"].split()),
                abstract=record.get("content_text") or "",
                categories=["cs.LG"],
                published=record.get("date_published"),
            )
    for path in sorted((SHARED / "arxiv/api-2026").glob("*.json")):
        body = json.loads(path.read_text())["body"].encode("latin-1")
        try:
            found, *_ = parse_api_feed(body)
        except Exception:
            continue
        papers.update((p.arxiv_id, p) for p in found)
    for path in sorted((SHARED / "arxiv/abs/ftp").rglob("*.abs")):
        try:
            paper = parse_abs(path.read_text(encoding="utf-8", errors="replace"))
        except Exception:
            continue
        papers[paper.arxiv_id] = paper
    # Keep one paper per title: the corpus has a few exact duplicates.
    by_title: dict[str, Paper] = {}
    for paper in papers.values():
        by_title.setdefault(paper.title.lower(), paper)
    return {p.arxiv_id: p for p in by_title.values()}


def paraphrase(title: str, rng: random.Random) -> str:
    words = title.split()
    if ":" in title and rng.random() < 0.5:  # cited without its subtitle, or by it alone
        head, tail = title.split(":", 1)
        words = (head if len(head.split()) >= 3 else tail).split()
    out = []
    for word in words:
        core = re.sub(r"\W+$", "", word)
        options = SYNONYMS.get(core.lower())
        if options and rng.random() < 0.6:
            replacement = rng.choice(options)
            if core[:1].isupper():
                replacement = replacement[:1].upper() + replacement[1:]
            word = word.replace(core, replacement)
        out.append(word)
    if rng.random() < 0.3:  # a typo in a longer word
        long_words = [i for i, w in enumerate(out) if len(w) > 6]
        if long_words:
            i = rng.choice(long_words)
            w = out[i]
            j = rng.randrange(1, len(w) - 2)
            out[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(out)


def short_title(title: str, rng: random.Random) -> str:
    if ":" in title and len(title.split(":")[0].split()) <= 5:
        return title.split(":")[0]
    words = title.split()
    return " ".join(words[: rng.randint(3, 5)])


def build_cases(
    papers: dict[str, Paper], held_out: set[str], n: int, rng: random.Random
) -> list[Case]:
    ids = sorted(papers)
    stored = [i for i in ids if i not in held_out]
    outside = sorted(held_out)
    cases: list[Case] = []
    for _ in range(n):
        arxiv_id = rng.choice(stored)
        form = rng.choice(ID_FORMS)
        text = rng.choice(TEMPLATES).format(m=form(arxiv_id, rng.randint(1, 4)))
        cases.append(Case("identifier", text, arxiv_id))
    cases += [Case("identifier", t, None) for t in NOT_IDS]
    for kind in ("exact-title", "paraphrased-title"):
        for i in range(n):
            pool = outside if i % 5 == 0 else stored  # one in five names a held-out paper
            arxiv_id = rng.choice(pool)
            title = papers[arxiv_id].title
            if kind == "paraphrased-title":
                title = paraphrase(title, rng)
            text = rng.choice(TEMPLATES).format(m=title)
            cases.append(Case(kind, text, None if arxiv_id in held_out else arxiv_id))
    with_authors = [i for i in ids if papers[i].authors and len(papers[i].title.split()) >= 4]
    for i in range(n):
        arxiv_id = rng.choice(with_authors)
        paper = papers[arxiv_id]
        author: Author = rng.choice(paper.authors[:3])
        surname = author.keyname or author.name.split()[-1]
        short = short_title(paper.title, rng)
        if i % 4 == 0:
            short = paraphrase(short, rng)
        reference = Reference(surname, short, f"{surname}: {short}")
        cases.append(
            Case(
                "surname-short-title",
                reference.raw,
                None if arxiv_id in held_out else arxiv_id,
                reference,
            )
        )
    return cases


def evaluate(store: SQLiteStore, cases: list[Case]) -> dict[str, dict[str, float]]:
    tallies: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    errors: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        if case.kind == "identifier":
            linked = [m.arxiv_id for m in find_arxiv_mentions([case.text])]
        elif case.reference is not None:
            found = match_reference(case.reference, store)
            linked = [found.arxiv_id] if found else []
        else:
            linked = [m.arxiv_id for m in find_title_mentions(case.text, store)]
        tally = tallies[case.kind]
        tally["cases"] += 1
        if case.truth is not None:
            tally["positives"] += 1
        for arxiv_id in linked:
            tally["asserted"] += 1
            if arxiv_id == case.truth:
                tally["correct"] += 1
            elif len(errors[case.kind]) < 8:
                errors[case.kind].append(f"{case.text[:90]!r} -> {arxiv_id}")
    results: dict[str, dict[str, float]] = {}
    for kind, tally in tallies.items():
        precision = tally["correct"] / tally["asserted"] if tally["asserted"] else 1.0
        recall = tally["correct"] / tally["positives"] if tally["positives"] else 1.0
        results[kind] = {
            "cases": tally["cases"],
            "positives": tally["positives"],
            "asserted": tally["asserted"],
            "correct": tally["correct"],
            "precision": round(precision, 4),
            "recall": round(recall, 4),
        }
    results["_errors"] = errors  # type: ignore[assignment]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mentions", type=int, default=400, help="cases per kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"SKIP: {SHARED} is not present (real data needed for this evaluation)")
        return
    rng = random.Random(args.seed)
    papers = load_corpus()
    held_out = set(rng.sample(sorted(papers), len(papers) // 10))
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "eval.db")
        store.save_papers(
            [p for i, p in papers.items() if i not in held_out], "2026-01-01T00:00:00Z"
        )
        cases = build_cases(papers, held_out, args.mentions, rng)
        started = time.perf_counter()
        results = evaluate(store, cases)
        seconds = time.perf_counter() - started
        store.close()
    errors = results.pop("_errors")
    print(
        f"corpus: {len(papers) - len(held_out)} papers stored, {len(held_out)} held out; "
        f"{len(cases)} cases in {seconds:.1f}s ({1000 * seconds / len(cases):.1f} ms each)"
    )
    print("| kind | cases | positives | asserted | correct | precision | recall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind, r in results.items():
        print(
            f"| {kind} | {r['cases']} | {r['positives']} | {r['asserted']} | {r['correct']} "
            f"| {r['precision']:.3f} | {r['recall']:.3f} |"
        )
    for kind, examples in errors.items():  # type: ignore[attr-defined]
        for example in examples:
            print(f"  wrong {kind}: {example}")
    print(
        f"\nreproduce: .venv/bin/python bench/linking_eval.py --mentions {args.mentions} "
        f"--seed {args.seed}"
    )
    if args.json:
        args.json.write_text(json.dumps({"results": results, "seconds": seconds}, indent=1))


if __name__ == "__main__":
    main()
