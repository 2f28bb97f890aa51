"""Announcements by their authors: fit and measure the linker that joins them to their paper.

Data: the 8,958 real announcements of ``../shared/fixtures/announcements``
(PaperTweet: an account's post about an arXiv paper, usually its own, with the
paper's title and abstract). Split by a fixed rule: an announcement is **dev**
when the first byte of ``sha256(author_name)`` is even, **test** otherwise, so
a scholar's posts all fall on one side.

What the linker sees for a post (``lightnews.link.announcements``): the
poster's recent papers. Here those are the papers the same account announced
in the post's month or the two before (the data's own record of who wrote
what), plus three papers of the same month by others, the nearest in meaning
to the announced one (a scholar's other recent work is usually on the same
topic: the hardest rivals the data can give).

Negatives, announcements whose paper the library lacks: the papers are cut in
two halves by ``sha256(arxiv_id)``; each half in turn is left out of the
library, so every announcement is judged twice: once with its paper present
(a positive) and once with it absent (a negative: its other candidates are
still there; any link is false).

The truth is the announced paper, and also any paper the post itself names:
writes its arXiv id, or names it in so many words by the rule
``bench/linking_eval.py`` counts by (``names``: its whole title, the coined
name before its colon when that name is the paper's own, or its Title-Case
subtitle). Such a link (a thread citing the work it builds on, "private
hypothesis selection" or "Stein Points") is counted right on every split; the
counts by the first rule alone ("any link") are printed beside.

A post "writes its title" when the title's words, lower-cased, stand in it in
order. Titled posts are linked by the title linker as well (``--titles``: the
real ``find_title_mentions`` on a SQLite library of the half's papers and the
11k Hugging Face papers); an untitled post only by the announcement route.

Word weights come from the same SQLite library the title route reads (one per
half), through ``title_weights`` as ingestion computes them: a word's papers
counted in title, authors and abstract. Paper vectors are rounded to float16 as a
library stores them; posts are encoded as ingestion encodes them (``post_words``).

Run::

    .venv/bin/python bench/announce_eval.py --fit                 # dev only; writes the weights
    .venv/bin/python bench/announce_eval.py --split dev [--titles]
    .venv/bin/python bench/announce_eval.py --split test --titles # once, after tuning
    .venv/bin/python bench/announce_eval.py --split dev --siblings # whole titles beside siblings

Vectors (minilm-int8) are cached in ``bench/out/announce-vectors.npz``.
"""

from __future__ import annotations

import argparse
import calendar
import functools
import hashlib
import itertools
import json
import random
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _linking_data import names_paper
from fit_linker import fit

from lightnews.embed import paper_text
from lightnews.embed.encoders import load_encoder
from lightnews.embed.index import from_blob, to_blob
from lightnews.link.announcements import (
    ANNOUNCEMENT_ENCODER,
    BAR,
    EARLY_DAYS,
    TOLD_DAYS,
    WINDOW_DAYS,
    WORDS_BAR,
    Judged,
    OwnPaper,
    announcement_features,
    decide_announcement,
    judge_announcement,
    post_words,
)
from lightnews.link.calibration import (
    MEANING_FEATURES,
    WEIGHTS,
    WORDS_FEATURES,
    feature_value,
)
from lightnews.link.title_words import title_weights
from lightnews.model import Paper
from lightnews.store import SQLiteStore

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "fixtures"
DATA = SHARED / "announcements" / "papertweet-dev.jsonl"
OUT = ROOT / "bench" / "out"
DISTRACTORS = 3
#: Bump when the libraries' contents change (a new file is built).
LIBRARY_VERSION = 2
#: Which candidates each model is fitted on: those inside the product's window (what it
#: judges), or every candidate of the post's month and the two before (as before
#: 2026-12-07). Chosen by ``--cv`` (out of fold, judged inside the window, 2026-12-07):
#: the words model gains recall fitted inside the window (0.549 against 0.521 at its
#: bar, the same false links); the encoder model loses a little (0.544 against 0.555).
FIT_IN_WINDOW = {"announcement": False, "announcement-words": True}


@dataclass(frozen=True, slots=True)
class Announcement:
    tweet_id: str
    author: str
    text: str
    arxiv_id: str
    month: int  # year * 12 + month - 1 of the post
    split: str
    titled: bool
    at: float  # when it was posted (days since 1970), from the post's id


@dataclass(frozen=True, slots=True)
class Known:
    arxiv_id: str
    title: str
    abstract: str
    month: int  # of the first version, from the id


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _month_of(arxiv_id: str) -> int:
    return (2000 + int(arxiv_id[:2])) * 12 + int(arxiv_id[2:4]) - 1


def _iso(month: int) -> str:
    return f"{month // 12:04d}-{month % 12 + 1:02d}-15T12:00:00Z"


def _posted_at(tweet_id: str) -> float:
    """When a post was made (days since 1970), read from its id (a Twitter snowflake):
    exact, where the data's own ``year`` and ``month`` are a month's and not always the
    post's."""
    return ((int(tweet_id) >> 22) + 1_288_834_974_657) / 86_400_000


@functools.cache
def _month_sizes() -> dict[str, int]:
    """The highest number seen in each month's new-style ids (the announced papers and
    the Hugging Face library's): about how many papers arXiv numbered that month."""
    from conftest import hf_corpus

    top: dict[str, int] = defaultdict(int)
    for arxiv_id in [*load()[1], *(p.arxiv_id for p in hf_corpus(SHARED))]:
        if re.match(r"\d{4}\.\d{4,5}$", arxiv_id):
            top[arxiv_id[:4]] = max(top[arxiv_id[:4]], int(arxiv_id[5:]))
    return dict(top)


def first_version_at(arxiv_id: str) -> float:
    """When a paper's first version came (days since 1970), estimated from its id: arXiv
    numbers a month's papers in the order they come, so the n-th of a month of N came
    about n/N of the way through it. The data gives no dates; the product has the real
    ones. (Off by a day or two: papers do not come at an even rate.)"""
    year, month = 2000 + int(arxiv_id[:2]), int(arxiv_id[2:4])
    start = date(year, month, 1).toordinal() - date(1970, 1, 1).toordinal()
    size = _month_sizes().get(arxiv_id[:4]) or int(arxiv_id[5:])
    return start + calendar.monthrange(year, month)[1] * int(arxiv_id[5:]) / size


def _in_window(post: Announcement, arxiv_id: str) -> bool:
    """The product's ``in_window`` for a candidate, on the post's exact time and the
    paper's estimated first version: ``EARLY_DAYS`` before it to ``WINDOW_DAYS`` after."""
    days = post.at - first_version_at(arxiv_id)
    return -EARLY_DAYS <= days <= WINDOW_DAYS


def _half(arxiv_id: str) -> int:
    return hashlib.sha256(arxiv_id.encode()).digest()[0] % 2


@functools.cache
def _all_papers() -> dict[str, Paper]:
    """Every linkable paper: the announced papers and the Hugging Face library's."""
    from conftest import hf_corpus

    papers = {p.arxiv_id: p for p in hf_corpus(SHARED)}
    papers.update(
        {
            a: Paper(a, title=k.title, abstract=k.abstract, published=_iso(k.month))
            for a, k in load()[1].items()
        }
    )
    return papers


def names(post: Announcement, arxiv_id: str) -> bool:
    """Whether the post itself names this paper: writes its arXiv id, or names it in so
    many words by the rule ``bench/linking_eval.py`` counts by (``names_paper``: its
    whole title, the coined name before its colon when that name is the paper's own, or
    its Title-Case subtitle). A link to a paper the post names is right even when the
    post announces another one: the truth is not only the announced paper (a thread
    cites its prior work by name, "Stein Points")."""
    if re.search(rf"(?<![\d.]){re.escape(arxiv_id)}(?![\d])", post.text):
        return True
    papers = _all_papers()
    paper = papers.get(arxiv_id)
    return paper is not None and names_paper(post.text, paper, papers) is not None


def _wrong(j: Judgement, linked: str) -> bool:
    """A link the eval counts false: not the announced paper (or the paper is absent),
    and not a paper the post names."""
    return not (j.present and linked == j.post.arxiv_id) and not names(j.post, linked)


def load() -> tuple[list[Announcement], dict[str, Known]]:
    posts: list[Announcement] = []
    papers: dict[str, Known] = {}
    for line in DATA.open(encoding="utf-8"):
        row = json.loads(line)
        arxiv_id = re.sub(r"^arxiv:|v\d+$", "", row["arxiv_id"].strip(), flags=re.I)
        if not re.match(r"\d{4}\.\d{4,5}$", arxiv_id):
            continue
        text = "\n".join(row["tweets"])
        split = (
            "dev" if hashlib.sha256(row["author_name"].encode()).digest()[0] % 2 == 0 else "test"
        )
        titled = _norm(row["title"]) in _norm(text)
        posts.append(
            Announcement(
                row["tweet_id"],
                row["author_name"],
                text,
                arxiv_id,
                row["year"] * 12 + row["month"] - 1,
                split,
                titled,
                _posted_at(row["tweet_id"]),
            )
        )
        papers.setdefault(
            arxiv_id,
            Known(arxiv_id, " ".join(row["title"].split()), row["abstract"], _month_of(arxiv_id)),
        )
    return posts, papers


def vectors(
    posts: list[Announcement], papers: dict[str, Known]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Post and paper vectors in the encoder the announcement route reads, papers' as a
    library stores them (float16), posts' as ingestion encodes them (``post_words``)."""
    posts_of, papers_of = _encoded(posts, papers)
    return posts_of, {a: from_blob(to_blob(v)) for a, v in papers_of.items()}


def _encoded(
    posts: list[Announcement], papers: dict[str, Known]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Post and paper vectors in the default encoder, cached."""
    cache = OUT / "announce-vectors.npz"
    post_ids = [p.tweet_id for p in posts]
    paper_ids = sorted(papers)
    if cache.exists():
        saved = np.load(cache)
        if list(saved["post_ids"]) == post_ids and list(saved["paper_ids"]) == paper_ids:
            return (
                dict(zip(post_ids, saved["posts"], strict=True)),
                dict(zip(paper_ids, saved["papers"], strict=True)),
            )
    encoder = load_encoder(ANNOUNCEMENT_ENCODER)
    started = time.perf_counter()
    post_rows = encoder.encode([post_words(p.text) for p in posts])
    paper_rows = encoder.encode(
        [paper_text(papers[i].title, papers[i].abstract) for i in paper_ids]
    )
    print(f"encoded {len(posts) + len(paper_ids)} texts in {time.perf_counter() - started:.0f}s")
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez(
        cache,
        post_ids=np.array(post_ids),
        paper_ids=np.array(paper_ids),
        posts=post_rows,
        papers=paper_rows,
    )
    return dict(zip(post_ids, post_rows, strict=True)), dict(
        zip(paper_ids, paper_rows, strict=True)
    )


def library(absent: int, papers: dict[str, Known]) -> SQLiteStore:
    """The SQLite library of half ``absent``'s complement: the announced papers of the other
    half and the 11k Hugging Face papers, each with its first version's date (from its id,
    as arXiv gives it). Word weights and the title route both read it, as ingestion reads
    its store (``title_weights``: a word's papers counted in title, authors and abstract)."""
    from conftest import hf_corpus  # the realistic library's other papers

    path = OUT / f"announce-library-{LIBRARY_VERSION}-{absent}.db"
    wanted = [
        Paper(p.arxiv_id, title=p.title, abstract=p.abstract, published=_iso(p.month))
        for p in papers.values()
        if _half(p.arxiv_id) != absent
    ]
    hf = [
        replace(p, published=_iso(_month_of(p.arxiv_id)))
        if re.match(r"\d{4}\.\d{4,5}$", p.arxiv_id)
        else p
        for p in hf_corpus(SHARED)
    ]
    hf = [p for p in hf if p.arxiv_id not in papers]
    store = SQLiteStore(path)
    if store.paper_count() != len(wanted) + len(hf):
        store.close()
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        store = SQLiteStore(path)
        store.save_papers([*wanted, *hf], "2026-01-01T00:00:00Z")
    return store


@dataclass
class Judgement:
    post: Announcement
    present: bool  # its paper is in the library
    judged: list[tuple[str, float, dict[str, float]]]  # arxiv_id, probability, features
    linked: str | None
    confidence: float


def candidates(
    post: Announcement,
    absent: int,
    papers: dict[str, Known],
    by_author: dict[str, list[str]],
    by_month: dict[int, list[str]],
    paper_vec: dict[str, np.ndarray],
) -> list[str]:
    """The poster's recent papers in the library (half ``absent`` left out), and rivals."""
    own = [
        i
        for i in by_author[post.author]
        if _half(i) != absent and post.month - 2 <= papers[i].month <= post.month
    ]
    target = paper_vec[post.arxiv_id]
    pool = [
        i
        for i in by_month[papers[post.arxiv_id].month]
        if _half(i) != absent and i not in by_author[post.author]
    ]
    if pool:
        sims = np.stack([paper_vec[i] for i in pool]) @ target
        own += [pool[j] for j in np.argsort(-sims)[:DISTRACTORS]]
    return sorted(set(own))


def judge_all(
    posts: list[Announcement],
    papers: dict[str, Known],
    post_vec: dict[str, np.ndarray],
    paper_vec: dict[str, np.ndarray],
    *,
    fitting: bool,
    meaning: bool = True,
    told_days: float = TOLD_DAYS,
    window: bool = True,
) -> list[Judgement]:
    every = list(papers.values())
    by_author: dict[str, list[str]] = defaultdict(list)
    told_at: dict[tuple[str, str], list[float]] = defaultdict(list)
    for post in posts:
        by_author[post.author].append(post.arxiv_id)
        told_at[(post.author, post.arxiv_id)].append(post.at)

    def told(post: Announcement, arxiv_id: str) -> tuple[str, ...]:
        """The product's ``OwnPaper.told`` for a candidate: the poster's other posts about it
        (each carried its link, so a library would have linked them), judged by the exact
        times of the posts' ids, and written as a telling a month before the post's month
        (the month the features read the post at) when one came ``told_days`` or more
        before this post."""
        times = told_at.get((post.author, arxiv_id), [])
        return (_iso(post.month - 1),) if any(post.at - t >= told_days for t in times) else ()

    by_month: dict[int, list[str]] = defaultdict(list)
    for paper in every:
        by_month[paper.month].append(paper.arxiv_id)
    out: list[Judgement] = []
    for absent in (0, 1):
        store = library(absent, papers)
        weight = title_weights(store)
        for post in posts:
            ids = candidates(post, absent, papers, by_author, by_month, paper_vec)
            if window:  # as the product asks the store for a scholar's recent papers
                ids = [i for i in ids if _in_window(post, i)]
            own = [
                OwnPaper(
                    i,
                    papers[i].title,
                    papers[i].abstract,
                    _iso(papers[i].month),
                    vector=tuple(float(v) for v in paper_vec[i]) if meaning else None,
                    told=told(post, i),
                )
                for i in ids
            ]
            vector = [float(v) for v in post_vec[post.tweet_id]] if meaning else None
            present = _half(post.arxiv_id) != absent
            posted = _iso(post.month)
            if fitting:
                rows, _ = announcement_features(
                    post.text, own, weight, posted=posted, vector=vector
                )
                judged = [
                    (p.arxiv_id, 0.0, {**r, "told": float(bool(p.told))})
                    for p, r in zip(own, rows, strict=False)
                ]
                out.append(Judgement(post, present, judged, None, 0.0))
                continue
            scored = judge_announcement(post.text, own, weight, posted=posted, vector=vector)
            decision = decide_announcement(scored, BAR if meaning else WORDS_BAR)
            out.append(
                Judgement(
                    post,
                    present,
                    [(j.paper.arxiv_id, j.probability, dict(j.features)) for j in scored],
                    decision.arxiv_id if decision else None,
                    decision.confidence if decision else 0.0,
                )
            )
        store.close()
    return out


def fit_models(
    fitted_on: dict[bool, list[Judgement]], c: float, c_words: float, *, window: bool = True
) -> None:
    """Fit both models, each on the candidates :data:`FIT_IN_WINDOW` says (``fitted_on``:
    the dev judgements inside the window, True, and without it, False), and write them."""
    document = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    for route, names, strength in (
        ("announcement", MEANING_FEATURES, c),
        ("announcement-words", WORDS_FEATURES, c_words),
    ):
        x: list[list[float]] = []
        y: list[int] = []
        for j in fitted_on[FIT_IN_WINDOW[route]]:
            for arxiv_id, _, row in j.judged:
                x.append([feature_value(row, n) for n in names])
                y.append(int(arxiv_id == j.post.arxiv_id))
        coef, intercept = fit(x, y, strength)
        document[route] = {"features": list(names), "coef": coef, "intercept": intercept}
        print(f"{route}: {len(y)} candidates, {sum(y)} right")
        for name, value in zip(names, coef, strict=True):
            print(f"  {name:>15} {value:+.3f}")
        print(f"  {'intercept':>15} {intercept:+.3f}")
    document["announcement-fitted"] = (
        f"{date.today().isoformat()} by bench/announce_eval.py --fit --c {c} --c-words {c_words}: "
        "dev split only, "
        f"{len(fitted_on[True])} judgements (each dev announcement with its paper present and "
        "absent); "
        + (
            "candidates inside the window for "
            + (", ".join(r for r, inside in FIT_IN_WINDOW.items() if inside) or "neither model")
            if window
            else "every candidate for both models (--no-window)"
        )
    )
    WEIGHTS.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {WEIGHTS}")


def cross_validate(
    fitted_on: dict[bool, list[Judgement]],
    c: float,
    c_words: float,
    folds: int = 5,
    *,
    papers: dict[str, Known] | None = None,
    window: bool = True,
) -> None:
    """Bars judged out of fold: each fifth of the dev accounts judged by models fitted on
    the other four fifths, the decision rule applied as shipped; what each bar gives.

    Posts are judged on the candidates inside the window (``fitted_on[True]``), as the
    product judges them; each model is fitted on those and, when ``fitted_on`` holds them,
    on every candidate (``fitted_on[False]``): :data:`FIT_IN_WINDOW` is chosen by this."""
    judgements = fitted_on[True]
    from lightnews.link.announcements import _unless_named_other
    from lightnews.link.calibration import Model

    def fold(j: Judgement) -> int:
        return hashlib.sha256(j.post.author.encode()).digest()[2] % folds

    for (route, names, strength), inside in itertools.product(
        (
            ("announcement", MEANING_FEATURES, c),
            ("announcement-words", WORDS_FEATURES, c_words),
        ),
        sorted(fitted_on, reverse=True),
    ):
        training = fitted_on[inside]
        scored: list[Judgement] = []
        for k in range(folds):
            x = [
                [feature_value(row, n) for n in names]
                for j in training
                if fold(j) != k
                for _, _, row in j.judged
            ]
            y = [
                int(a == j.post.arxiv_id) for j in training if fold(j) != k for a, _, _ in j.judged
            ]
            coef, intercept = fit(x, y, strength)
            held = Model(names, tuple(coef), intercept)
            for j in judgements:
                if fold(j) == k:
                    judged = [
                        (a, _told(row, _unless_named_other(held.probability(row), row)), row)
                        for a, _, row in j.judged
                    ]
                    judged.sort(key=lambda t: t[1], reverse=True)
                    scored.append(Judgement(j.post, j.present, judged, None, 0.0))
        shipped = " (shipped)" if FIT_IN_WINDOW[route] == inside or not window else ""
        print(
            f"\n{route}: out of fold ({folds} folds by account), dev; fitted on "
            + ("the candidates inside the window" if inside and window else "every candidate")
            + ("" if window else ", judged on every candidate (--no-window)")
            + (shipped if window else "")
        )
        print("| bar | untitled precision | untitled recall | false per 1,000 absent | ECE |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for bar in (0.97, 0.98, 0.985, 0.99, 0.992, 0.995):
            untitled = [j for j in scored if j.present and not j.post.titled]
            absent = [j for j in scored if not j.present]
            found = {
                id(j): decide_announcement(
                    [Judged(OwnPaper(a, ""), p, tuple(r.items())) for a, p, r in j.judged], bar
                )
                for j in scored
            }
            asserted = [j for j in untitled if found[id(j)]]
            right = [j for j in asserted if found[id(j)].arxiv_id == j.post.arxiv_id]  # type: ignore[union-attr]
            false_n = sum(1 for j in absent if found[id(j)])
            pairs = [
                (m.confidence, m.arxiv_id == j.post.arxiv_id and j.present)
                for j in scored
                if (m := found[id(j)])
            ]
            ece, _ = _ece(pairs)
            print(
                f"| {bar} | {len(right) / max(len(asserted), 1):.3f} | "
                f"{len(right) / max(len(untitled), 1):.3f} | "
                f"{1000 * false_n / max(len(absent), 1):.2f} | {ece:.4f} |"
            )
        if papers is not None and shipped:
            # What the lowest bar links with the paper absent (dev only: read to find why).
            for j in scored:
                found_at = decide_announcement(
                    [Judged(OwnPaper(a, ""), p, tuple(r.items())) for a, p, r in j.judged], 0.97
                )
                if not j.present and found_at:
                    print(
                        f"  false at {found_at.confidence:.4f}: {j.post.tweet_id} -> "
                        f"{found_at.arxiv_id} {papers[found_at.arxiv_id].title[:70]!r} "
                        f"(announces {papers[j.post.arxiv_id].title[:70]!r}): "
                        f"{' '.join(j.post.text.split())[:160]!r}"
                    )


def _told(row: dict[str, float], probability: float) -> float:
    """The shipped rule for a paper the poster told of days before (``told_before``)."""
    from lightnews.link.announcements import _TOLD_CAP

    return min(probability, _TOLD_CAP) if row.get("told") else probability


def _ece(pairs: list[tuple[float, bool]]) -> tuple[float, list[tuple[str, int, float, float]]]:
    edges = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001]
    rows = []
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = [(p, r) for p, r in pairs if lo <= p < hi]
        if not inside:
            continue
        mean = sum(p for p, _ in inside) / len(inside)
        right = sum(r for _, r in inside) / len(inside)
        total += len(inside) * abs(mean - right)
        rows.append((f"{lo:.2f}-{min(hi, 1.0):.2f}", len(inside), mean, right))
    return total / max(len(pairs), 1), rows


def title_links(
    judgements: list[Judgement], papers: dict[str, Known]
) -> dict[tuple[str, bool], dict[str, float]]:
    """What the title linker links in each post (paper: confidence), against each half's
    SQLite library."""
    from lightnews.link.titles import find_title_mentions

    found: dict[tuple[str, bool], dict[str, float]] = {}
    for absent in (0, 1):
        store = library(absent, papers)
        weight = title_weights(store)
        for j in judgements:
            if (_half(j.post.arxiv_id) != absent) != j.present:
                continue
            mentions = find_title_mentions(
                j.post.text, store, bar=0.8, published=_iso(j.post.month), weight=weight
            )
            found[(j.post.tweet_id, j.present)] = {m.arxiv_id: m.confidence for m in mentions}
        store.close()
    return found


#: How a post writes a whole title (``siblings``): after "New paper:", quoted, on its own line.
SIBLING_TEMPLATES = (
    "New paper: {t} <LINK>",
    'Our new preprint "{t}" is out! <LINK>',
    "{t}\n\nWe show how. <LINK>",
)


def siblings(posts: list[Announcement], papers: dict[str, Known]) -> None:
    """The title linker on whole titles of absent papers beside their siblings.

    For each announced paper of the split's accounts that the half leaves out and that
    has a sibling in the library (a paper the same account announced within six months),
    a post writing its whole title (one of ``SIBLING_TEMPLATES``, chosen by a fixed
    seed): the paper is absent, so any link is false, and one to the sibling is the
    case the match features find hardest (the same authors' words, a series' next part).
    """
    from lightnews.link.titles import find_title_mentions

    by_author: dict[str, set[str]] = defaultdict(set)
    for post in posts:
        by_author[post.author].add(post.arxiv_id)
    rng = random.Random(1)
    texts = 0
    found: list[tuple[float, bool, str, str]] = []
    for absent in (0, 1):
        store = library(absent, papers)
        weight = title_weights(store)
        for ids in by_author.values():
            for x in sorted(ids):
                if _half(x) != absent:
                    continue
                near = {
                    y
                    for y in ids
                    if y != x and _half(y) != absent and abs(papers[y].month - papers[x].month) <= 6
                }
                if not near:
                    continue
                text = rng.choice(SIBLING_TEMPLATES).format(t=papers[x].title)
                texts += 1
                for m in find_title_mentions(
                    text, store, bar=0.8, published=_iso(papers[x].month), weight=weight
                ):
                    found.append((m.confidence, m.arxiv_id in near, x, m.arxiv_id))
        store.close()
    to_sibling = sum(1 for f in found if f[1])
    print(
        f"whole titles of absent papers beside a sibling: {texts} posts, {len(found)} false "
        f"links ({1000 * len(found) / max(texts, 1):.1f} per 1,000; {to_sibling} to a sibling)"
    )
    for confidence, sibling, x, linked in sorted(found, reverse=True):
        print(
            f"  {confidence:.3f} {'sibling' if sibling else 'other'}: "
            f"{papers[x].title[:70]!r} -> {_title_of(linked, papers)[:70]!r}"
        )


def ingested(
    j: Judgement, titles: dict[tuple[str, bool], dict[str, float]], bar: float
) -> dict[str, float]:
    """What ingestion links in the post (paper: confidence): the title route's links, and
    only when it finds none the announcement route's (``link_announcements`` judges a post
    that names no paper otherwise)."""
    by_title = titles[(j.post.tweet_id, j.present)]
    if by_title:
        return dict(by_title)
    found = decide_announcement(
        [
            Judged(OwnPaper(arxiv_id, ""), probability, tuple(row.items()))
            for arxiv_id, probability, row in j.judged
        ],
        bar,
    )
    return {found.arxiv_id: found.confidence} if found else {}


def _title_of(arxiv_id: str, papers: dict[str, Known]) -> str:
    """A linked paper's title: an announced paper's, else the Hugging Face library's."""
    if arxiv_id in papers:
        return papers[arxiv_id].title
    from conftest import hf_corpus

    return next((p.title for p in hf_corpus(SHARED) if p.arxiv_id == arxiv_id), "?")


def end_to_end(
    judgements: list[Judgement],
    titles: dict[tuple[str, bool], dict[str, float]],
    bar: float,
    *,
    every: bool = False,
) -> dict[str, float]:
    """Ingestion's figures on untitled posts (``every``: titled ones too), both routes:
    recall, precision (every link to a wrong paper counts against it), false links with the
    paper absent, ECE. A link to a paper the post names (``names``) is not wrong."""
    present = [j for j in judgements if j.present and (every or not j.post.titled)]
    absent = [j for j in judgements if not j.present and (every or not j.post.titled)]
    links = [(j, ingested(j, titles, bar)) for j in present]
    asserted = [(a, c, not _wrong(j, a)) for j, found in links for a, c in found.items()]
    right = sum(1 for _, _, r in asserted if r)
    recall = sum(1 for j, found in links if j.post.arxiv_id in found)
    posts_with = [found for _, found in links if found]
    posts_wrong = sum(1 for j, found in links if any(_wrong(j, a) for a in found))
    any_link = [j for j in absent if ingested(j, titles, bar)]
    false_posts = [j for j in any_link if any(_wrong(j, a) for a in ingested(j, titles, bar))]
    false_by_title = [j for j in false_posts if titles[(j.post.tweet_id, False)]]
    pairs = [(c, r) for _, c, r in asserted] + [
        (c, not _wrong(j, a)) for j in absent for a, c in ingested(j, titles, bar).items()
    ]
    ece, _ = _ece(pairs)
    return {
        "posts": len(present),
        "links": len(asserted),
        "right": right,
        "recall": recall / max(len(present), 1),
        "precision": right / max(len(asserted), 1),
        "posts_linked": len(posts_with),
        "posts_with_wrong_link": posts_wrong,
        "absent": len(absent),
        "false_posts": len(false_posts),
        "any_link_posts": len(any_link),
        "false_by_title": len(false_by_title),
        "false_per_1000": 1000 * len(false_posts) / max(len(absent), 1),
        "ece": ece,
    }


def report_end_to_end(
    judgements: list[Judgement],
    titles: dict[tuple[str, bool], dict[str, float]],
    shipped: float,
    papers: dict[str, Known] | None = None,
) -> None:
    """What ingestion does on untitled posts, both routes together; on dev, also on each
    half of the accounts (a setting is chosen only when it wins on both halves)."""
    print("\ningestion end to end on untitled posts (title route, else the announcement route)")
    print(
        "| bar | accounts | posts | links | precision | recall | posts with a wrong link "
        "| false, paper absent (by title; any link) | per 1,000 absent | ECE |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    halves = {
        "all": judgements,
        "half A": [
            j for j in judgements if hashlib.sha256(j.post.author.encode()).digest()[1] % 2 == 0
        ],
        "half B": [
            j for j in judgements if hashlib.sha256(j.post.author.encode()).digest()[1] % 2 == 1
        ],
    }
    for bar in (0.97, 0.98, 0.99, 0.992, 0.995):
        for name, group in halves.items():
            f = end_to_end(group, titles, bar)
            print(
                f"| {bar} | {name} | {f['posts']:.0f} | {f['links']:.0f} | {f['precision']:.3f} | "
                f"{f['recall']:.3f} | {f['posts_with_wrong_link']:.0f} | "
                f"{f['false_posts']:.0f} in {f['absent']:.0f} ({f['false_by_title']:.0f}; "
                f"{f['any_link_posts']:.0f}) | "
                f"{f['false_per_1000']:.2f} | {f['ece']:.4f} |"
            )
    f = end_to_end(judgements, titles, shipped, every=True)
    print(
        f"every post, titled too, at {shipped}: precision {f['precision']:.3f}, recall "
        f"{f['recall']:.3f}; paper absent: {f['false_posts']:.0f} false in {f['absent']:.0f} "
        f"({f['false_per_1000']:.2f} per 1,000; {f['false_by_title']:.0f} by title; "
        f"{f['any_link_posts']:.0f} with any link)"
    )
    absent = [j for j in judgements if not j.present and not j.post.titled]
    for j in [j for j in absent if ingested(j, titles, shipped)][:15]:
        print(f"  linked: {j.post.tweet_id} {ingested(j, titles, shipped)}: {j.post.text[:100]!r}")
    if papers is not None:
        # Every false link at the shipped bar, in full, to be read (labelling, not tuning).
        print("\nlinks with the paper absent, in full (untitled posts, then titled):")
        every_absent = [j for j in judgements if not j.present]
        every_absent.sort(key=lambda j: j.post.titled)
        for j in [j for j in every_absent if ingested(j, titles, shipped)]:
            route = "title" if titles[(j.post.tweet_id, False)] else "announcement"
            for linked, confidence in ingested(j, titles, shipped).items():
                named = " (the post names it)" if names(j.post, linked) else ""
                kind = "titled" if j.post.titled else "untitled"
                print(
                    f"- {kind} post {j.post.tweet_id} by {j.post.author!r}, {route} route, "
                    f"{confidence:.3f}{named}\n  announces {j.post.arxiv_id} "
                    f"{papers[j.post.arxiv_id].title!r}\n  linked {linked} "
                    f"{_title_of(linked, papers)!r}\n  text: {' '.join(j.post.text.split())!r}"
                )


def report(
    judgements: list[Judgement],
    titles: dict[tuple[str, bool], dict[str, float]] | None,
    shipped: float,
) -> None:
    present = [j for j in judgements if j.present]
    absent = [j for j in judgements if not j.present]
    print("\nannouncement route, bar", shipped)
    print("| posts | judged | asserted | correct | precision | recall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, group in (
        ("untitled, paper present", [j for j in present if not j.post.titled]),
        ("titled, paper present", [j for j in present if j.post.titled]),
    ):
        asserted = [j for j in group if j.linked]
        correct = [j for j in asserted if j.linked == j.post.arxiv_id]
        print(
            f"| {name} | {len(group)} | {len(asserted)} | {len(correct)} | "
            f"{len(correct) / max(len(asserted), 1):.3f} | "
            f"{len(correct) / max(len(group), 1):.3f} |"
        )
    false = [j for j in absent if j.linked and _wrong(j, j.linked)]
    print(
        f"\npaper absent: {len(absent)} announcements, {len(false)} false links by the "
        f"announcement route ({1000 * len(false) / max(len(absent), 1):.2f} per 1,000; "
        f"{sum(1 for j in absent if j.linked)} with any link)"
    )
    for j in false[:10]:
        print(f"  false: {j.post.tweet_id} {j.linked} at {j.confidence:.3f}: {j.post.text[:90]!r}")
    if titles is not None:
        titled = [j for j in present if j.post.titled]
        either = [
            j
            for j in titled
            if j.linked == j.post.arxiv_id or j.post.arxiv_id in titles[(j.post.tweet_id, True)]
        ]
        by_title = [j for j in titled if j.post.arxiv_id in titles[(j.post.tweet_id, True)]]
        wrong_titled = [
            j
            for j in present
            if any(_wrong(j, a) for a in titles[(j.post.tweet_id, True)])
            or (j.linked and _wrong(j, j.linked))
        ]
        print(
            f"titled posts, both routes: recall {len(either) / max(len(titled), 1):.3f} "
            f"({len(either)} of {len(titled)}; title route alone {len(by_title)})"
        )
        untitled = [j for j in present if not j.post.titled]
        title_found = [j for j in untitled if j.post.arxiv_id in titles[(j.post.tweet_id, True)]]
        print(f"untitled posts the title route links anyway: {len(title_found)}")
        print(
            "posts with a paper present linked to another paper (either route): "
            f"{len(wrong_titled)}"
        )
        absent_title = [j for j in absent if titles[(j.post.tweet_id, False)]]
        print(
            f"paper absent, title route: {len(absent_title)} posts with a link "
            f"(any paper; some name another paper by its title)"
        )
        for j in absent_title[:10]:
            print(
                f"  title link: {j.post.tweet_id} {sorted(titles[(j.post.tweet_id, False)])}: "
                f"{j.post.text[:90]!r}"
            )
    # Bars: what another bar would give on untitled posts (read on dev to set BAR).
    untitled = [j for j in present if not j.post.titled]
    print("\n| bar | untitled precision | untitled recall | false per 1,000 absent |")
    print("| ---: | ---: | ---: | ---: |")
    for bar in (0.5, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.992, 0.995):

        def at(j: Judgement, bar: float = bar) -> str | None:
            judged = [
                Judged(OwnPaper(arxiv_id, ""), probability, tuple(row.items()))
                for arxiv_id, probability, row in j.judged
            ]
            found = decide_announcement(judged, bar)
            return found.arxiv_id if found else None

        asserted = [j for j in untitled if at(j)]
        correct = [j for j in asserted if at(j) == j.post.arxiv_id]
        false_n = sum(1 for j in absent if (a := at(j)) and _wrong(j, a))
        print(
            f"| {bar} | {len(correct) / max(len(asserted), 1):.3f} | "
            f"{len(correct) / max(len(untitled), 1):.3f} | "
            f"{1000 * false_n / max(len(absent), 1):.2f} |"
        )
    linked = [(j.confidence, j.linked == j.post.arxiv_id) for j in judgements if j.linked]
    ece, _ = _ece(linked)
    top = [(j.judged[0][1], j.judged[0][0] == j.post.arxiv_id) for j in judgements if j.judged]
    ece_all, rows = _ece(top)
    print(f"\nreliability of asserted links ({len(linked)}): ECE {ece:.4f}")
    print(f"reliability of every post's likeliest paper ({len(top)}): ECE {ece_all:.4f}")
    print("| confidence | posts | mean confidence | share right |")
    print("| --- | ---: | ---: | ---: |")
    for label, n, mean, right in rows:
        print(f"| {label} | {n} | {mean:.3f} | {right:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fit", action="store_true", help="fit on dev and write the weights")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--titles", action="store_true", help="run the title linker too")
    parser.add_argument("--words-only", action="store_true", help="no encoder: the words model")
    parser.add_argument("--c", type=float, default=0.1, help="inverse L2, the encoder model")
    parser.add_argument(
        "--c-words", type=float, default=0.3, help="inverse L2, the words-only model"
    )
    parser.add_argument(
        "--cv", action="store_true", help="dev only: bars judged out of fold (folds by account)"
    )
    parser.add_argument(
        "--show",
        action="store_true",
        help="with --cv: print the false links at bar 0.97; with --titles: every false link "
        "on untitled posts at the shipped bar, in full",
    )
    parser.add_argument(
        "--told-days",
        type=float,
        default=TOLD_DAYS,
        help="a candidate the poster told of this many days before is not announced "
        "(inf: the rule off)",
    )
    parser.add_argument(
        "--no-window",
        action="store_true",
        help="judge every candidate, as before 2026-12-07 19:20: not only those in the "
        "product's window (EARLY_DAYS before a paper's first version to WINDOW_DAYS after, "
        "on the paper's date estimated from its id)",
    )
    parser.add_argument(
        "--siblings",
        action="store_true",
        help="the title linker on whole titles of absent papers written beside a sibling "
        "(the same account's paper within six months) in the library",
    )
    parser.add_argument(
        "--reuse-titles",
        action="store_true",
        help="read the title route's links from the last --titles run of the split",
    )
    args = parser.parse_args()
    if not DATA.exists():
        print(f"SKIP: {DATA} is not present")
        return
    posts, papers = load()
    if args.siblings:
        siblings([p for p in posts if p.split == args.split], papers)
        return
    post_vec, paper_vec = vectors(posts, papers)
    split = "dev" if args.fit or args.cv else args.split
    chosen = [p for p in posts if p.split == split]
    titled = sum(p.titled for p in chosen)
    print(
        f"{split}: {len(chosen)} announcements ({titled} write their title), "
        f"{len({p.author for p in chosen})} accounts; library {len(papers)} announced papers"
    )
    started = time.perf_counter()
    if args.fit or args.cv:
        # Inside the window (how the product judges) and, unless --no-window, on every
        # candidate too: FIT_IN_WINDOW says which each model is fitted on.
        fitted_on = {
            inside: judge_all(
                chosen,
                papers,
                post_vec,
                paper_vec,
                fitting=True,
                meaning=not args.words_only,
                told_days=args.told_days,
                window=inside,
            )
            for inside in ((False,) if args.no_window else (True, False))
        }
        print(
            f"judged {len(fitted_on)} times {len(chosen) * 2} in "
            f"{time.perf_counter() - started:.0f}s"
        )
        if args.no_window:  # every model fitted on, and judged on, every candidate
            fitted_on = {True: fitted_on[False]}
        if args.fit:
            fit_models(
                {**fitted_on, False: fitted_on.get(False, fitted_on[True])},
                args.c,
                args.c_words,
                window=not args.no_window,
            )
        else:
            cross_validate(
                fitted_on,
                args.c,
                args.c_words,
                papers=papers if args.show else None,
                window=not args.no_window,
            )
        return
    judgements = judge_all(
        chosen,
        papers,
        post_vec,
        paper_vec,
        fitting=False,
        meaning=not args.words_only,
        told_days=args.told_days,
        window=not args.no_window,
    )
    print(f"judged {len(judgements)} in {time.perf_counter() - started:.0f}s")
    titles = None
    if args.titles:
        # The title route's links depend on the post and the library only: kept per split.
        cache = OUT / f"announce-titles-{split}.json"
        if args.reuse_titles and cache.exists():
            saved = json.loads(cache.read_text(encoding="utf-8"))
            titles = {(k.split("|")[0], k.endswith("|1")): v for k, v in saved.items()}
        else:
            titles = title_links(judgements, papers)
            cache.write_text(
                json.dumps({f"{t}|{int(p)}": v for (t, p), v in titles.items()}), encoding="utf-8"
            )
    shipped = WORDS_BAR if args.words_only else BAR
    report(judgements, titles, shipped)
    if titles is not None:
        report_end_to_end(judgements, titles, shipped, papers if args.show else None)


if __name__ == "__main__":
    main()
