"""Announcements: a scholar's post that describes one of their own recent papers.

Scholars often announce a paper in their own words ("New paper with X and Y:
we show that ...") and leave its title, and often its link, to a card or a
later reply. Titles and identifiers find nothing in such a post, but the
linker knows more than the text: who posted it, which papers that person
wrote in the last weeks, and what those papers are about. A post by a
scholar joins one of their recent papers' stories when it says what the
paper says.

The evidence for each of the scholar's recent papers: how much of the post's
information the paper's title and abstract hold (words) and how close the
post is to them in meaning (the library's encoder, when it is installed),
how much of the post's word pairs ("twisted bilayer") the paper writes side
by side (a related paper shares the words of a field; the announced one
shares its phrases), each against the scholar's other recent papers (a
description that fits two papers alike names neither), the rarest word the post
and the paper share ("Scan2Mesh") and the rarest the post writes that the paper
lacks (another object's name), how much of the title the post writes,
announcement phrasing ("new paper", "preprint", "accepted at"), and how long
after the paper's first version the post came. (Co-authors named in the post
are not evidence yet: the real announcements it was fitted on carry no author
lists, so their weight could not be measured.) A logistic model fitted on real
announcements (``bench/announce_eval.py``, dev split) turns that into a
probability, kept in ``linker_weights.json`` beside the title models
(``announcement`` with meaning, ``announcement-words`` without it; ingestion
judges with meaning when the library runs the encoder the model was fitted with,
:data:`ANNOUNCEMENT_ENCODER`, and every candidate has its stored vector); a link is
asserted at :data:`BAR` (:data:`WORDS_BAR` for the words-only model) or above,
and not at all when a second paper of the scholar is judged likely too, or
when the post shares too little with the paper (:data:`MIN_INFORMATION`) to
tell it from one the library lacks. A paper the scholar already posted about
days before is not what a new post announces (:func:`told_before`): that is
how a companion paper the library lacks would otherwise take its sibling's link.

Pure: papers and vectors come in as arguments; nothing is looked up here.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from lightnews.link.calibration import (
    ANNOUNCEMENT_FEATURES,
    WORDS_FEATURES,
    feature_value,
    model,
)
from lightnews.link.title_features import title_like
from lightnews.link.title_words import stems
from lightnews.model import Mention

__all__ = [
    "ANNOUNCEMENT_ENCODER",
    "ANNOUNCEMENT_FEATURES",
    "BAR",
    "MIN_INFORMATION",
    "TOLD_DAYS",
    "WINDOW_DAYS",
    "WORDS_BAR",
    "WORDS_FEATURES",
    "Judged",
    "OwnPaper",
    "announcement_features",
    "decide_announcement",
    "in_window",
    "judge_announcement",
    "link_announcement",
    "post_words",
    "told_before",
]

#: The encoder whose cosines the meaning model was fitted on (post: :func:`post_words`;
#: paper: its title and abstract, as the library embeds it).
ANNOUNCEMENT_ENCODER = "minilm-int8"
#: How far back a scholar's papers are candidates for a post (first version).
WINDOW_DAYS = 75
#: A post may come a little before the paper's arXiv listing appears.
EARLY_DAYS = 7
#: The probability a link must reach (chosen by cross-validation over the dev split's
#: accounts: the most recall with at most 1 false link per 1,000 posts whose paper is
#: absent), with the encoder ...
BAR = 0.992
#: ... and without it (the words-only model, what a library without the encoder runs).
WORDS_BAR = 0.99
#: The information (nats over 20) a post must share with the paper, whatever the
#: probability: "our new paper on evaluation" says what field, not which paper, and
#: it fits the scholar's other paper on evaluation as well as the one it announces.
#: (0.4 chosen by cross-validation over the dev split's authors, as was the bar.)
MIN_INFORMATION = 0.4
#: A title the post writes must be this much (by information) the paper's own.
NAMED_FIT = 0.6
#: A second paper judged this likely makes the post ambiguous: no link.
RIVAL = 0.5
#: The most a paper already told (:func:`told_before`) is judged to be what a post announces.
_TOLD_CAP = 0.05
#: A paper the poster already posted about this many days or more before the post is
#: not what it announces (chosen on the dev split's announcements: see ``told_before``).
TOLD_DAYS = 3.0

#: Words every announcement uses, whatever its paper: no evidence for one paper.
_ANNOUNCING = frozenset(
    stem
    for word in (
        "new paper papers preprint preprints work works article our we i out now check "
        "excited happy share announce arxiv accepted link thread joint with led "
        "first author authors coauthors congrats proud appear appears published today "
        "read here blog post code available "
        "a an the and or but of in on at to for from by as is are was were be been being "
        "have has had do does did this that these those it its it's i'm we're you your "
        "my me us they them their there here what which who how why when where can could "
        "will would should may might must not no yes so very more most much many some any "
        "all also just about into over under than then too up down get got make made "
        "one two three lot lots great cool nice interesting hope love like see look "
        "thanks thank feedback comments welcome team colleagues amazing awesome"
    ).split()
    for stem in stems(word)
)
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»\n]{8,200})[\"“”«»]")
_TITLED = re.compile(
    r"\b(?:paper|preprint|work|article)\b[:,]?\s+((?:[A-Z0-9][\w'’-]*[:,]?\s+){2,}[A-Z0-9][\w'’-]*)"
    r"|\b(?:paper|preprint|article)\s*:\s*([^.\n<]{12,200})"
    r"|\b(?:paper|preprint|article)\b[^:.\n<]{1,20}:\s*"
    r"((?!(?:We|I|Our|This|Here|It|In|Check|See|Read)\b)[A-Z0-9][^.\n<(]{11,200})"
    # "MAGAN: Margin Adaptation for Adversarial Networks": a name, a colon, Title Case words.
    r"|\b([A-Z][\w-]*[A-Z][\w-]*:\s+[A-Z][\w'’-]*(?:\s+(?:(?:a|an|the|of|for|and|in|on|"
    r"with|to|via|from|by)\s+)*[A-Z][\w'’-]*){2,})"
)
_LINK = re.compile(r"<LINK>|https?://\S+|\b[\w.-]+\.(?:com|org|io|net|ai|pdf)/\S*", re.I)
_HANDLE = re.compile(r"@[\w.-]+")
_ANNOUNCES = re.compile(
    r"\b(?:new|our|latest|recent|first)\s+(?:\w+\s+)?(?:pre-?print|paper|work|article|study|"
    r"manuscript|results?)\b|\bpre-?print\b|\baccepted\s+(?:at|to|in|for)\b|\bon\s+arxiv\b|"
    r"\bcheck\s+(?:it\s+)?out\b|\bexcited\s+to\s+(?:share|announce|present)\b|\bout\s+now\b|"
    r"\bjust\s+(?:posted|released|out|appeared)\b|\b(?:we|i)\s+(?:show|propose|introduce|"
    r"present|study|find|prove|develop)\b|\bin\s+this\s+(?:paper|work)\b|\bwith\s+@",
    re.I,
)


@dataclass(frozen=True, slots=True)
class OwnPaper:
    """One of the poster's recent papers, as the linker needs it."""

    arxiv_id: str
    title: str
    abstract: str = ""
    #: When its first version appeared (ISO 8601).
    published: str | None = None
    #: Its authors' names as written (the poster among them).
    authors: tuple[str, ...] = ()
    #: Its vector in the library's encoder (unit length), if it has one.
    vector: tuple[float, ...] | None = None
    #: When the poster posted about it before (ISO 8601, oldest first).
    told: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Judged:
    """One recent paper judged against a post: the features and the probability."""

    paper: OwnPaper
    probability: float
    features: tuple[tuple[str, float], ...]


def post_words(text: str) -> str:
    """The post's own words: links and handles taken out (a handle is read apart)."""
    return _HANDLE.sub(" ", _LINK.sub(" ", text))


def _pairs(words: Sequence[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(words))


def _days(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    try:
        first = datetime.fromisoformat(a.replace("Z", "+00:00")[:25])
        second = datetime.fromisoformat(b.replace("Z", "+00:00")[:25])
    except ValueError:
        return None
    if (first.tzinfo is None) != (second.tzinfo is None):
        first, second = first.replace(tzinfo=None), second.replace(tzinfo=None)
    return (second - first).total_seconds() / 86_400


def _months(published: str | None, posted: str | None) -> float:
    """Calendar months from the paper's first version to the post (0-3; 1 when unknown).

    Calendar months, not days: the announcements the model is fitted on give the
    post's month only, so a post ten days after its paper must read as what it
    read there (the same month: 0), not as a third of a month later.
    """
    if not published or not posted or _days(published, posted) is None:
        return 1.0
    first = int(published[:4]) * 12 + int(published[5:7])
    second = int(posted[:4]) * 12 + int(posted[5:7])
    return float(min(abs(second - first), 3))


def in_window(paper: OwnPaper, posted: str | None) -> bool:
    """Whether ``paper`` is recent enough at ``posted`` to be what a post announces."""
    days = _days(paper.published, posted)
    return days is None or -EARLY_DAYS <= days <= WINDOW_DAYS


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def announcement_features(
    text: str,
    papers: Sequence[OwnPaper],
    weight: Callable[[str], float],
    *,
    posted: str | None = None,
    vector: Sequence[float] | None = None,
) -> tuple[list[dict[str, float]], bool]:
    """Each paper's features (``ANNOUNCEMENT_FEATURES``), and whether meaning was measured."""
    own = post_words(text)
    words = stems(own)
    post = {s for s in words if weight(s) > 0 and s not in _ANNOUNCING}
    total = sum(weight(s) for s in post)
    # Two telling words side by side in the post ("twisted bilayer", "dose finding").
    phrases = {(a, b) for a, b in _pairs(words) if a in post and b in post}
    names = [m.group(1) for m in _QUOTED.finditer(own)] + [
        next(g for g in m.groups() if g) for m in _TITLED.finditer(own)
    ]
    names = [n for n in names if title_like(n)]
    named = [{s for s in stems(n) if weight(s) > 0} for n in names]
    named = [n for n in named if len(n) >= 3]
    meaning = vector is not None and all(p.vector is not None for p in papers)
    if not papers or total <= 0:
        return [], meaning
    rows: list[dict[str, float]] = []
    for paper in papers:
        body_words = stems(f"{paper.title} {paper.abstract}")
        body = set(body_words)
        shared = sum(weight(s) for s in post & body)
        paired = sum(weight(a) + weight(b) for a, b in phrases & _pairs(body_words))
        title = {s for s in stems(paper.title) if weight(s) > 0}
        title_total = sum(weight(s) for s in title)
        row = {
            "shared": shared,
            "words": shared / total,
            "information": min(shared / 20.0, 1.0),
            "phrases": min(paired / 20.0, 1.0),
            "title_words": sum(weight(s) for s in title & post) / title_total
            if title_total
            else 0.0,
            "meaning": _dot(vector, paper.vector)
            if meaning and vector is not None and paper.vector is not None
            else 0.0,
            "announces": float(bool(_ANNOUNCES.search(text))),
            "months": _months(paper.published, posted),
            "post_information": min(total / 40.0, 1.0),
            "named": float(bool(named)),
            # The rarest word the post and the paper share ("Scan2Mesh", "HEXTOR"), and the
            # rarest the post writes that the paper lacks ("HD 91312": another object's paper).
            "rarest_shared": min(max((weight(s) for s in post & body), default=0.0) / 10.0, 1.0),
            "rarest_missing": min(max((weight(s) for s in post - body), default=0.0) / 10.0, 1.0),
            "named_fit": max(
                (sum(weight(s) for s in n & title) / sum(weight(s) for s in n) for n in named),
                default=0.0,
            ),
        }
        rows.append(row)
    for i, row in enumerate(rows):
        others = [r for j, r in enumerate(rows) if j != i]
        for name in ("words", "meaning", "phrases"):
            best = max((r[name] for r in others), default=0.0)
            row[f"{name}_margin"] = row[name] - best
        rival = max((r["shared"] for r in others), default=0.0)
        row["information_margin"] = max(min((row["shared"] - rival) / 20.0, 1.0), -1.0)
        row["unexplained"] = min((total - row["shared"]) / 20.0, 1.0)
    for row in rows:
        del row["shared"]
    return rows, meaning


def _unless_named_other(probability: float, row: dict[str, float]) -> float:
    """A post that writes a title ("New paper: Modeling the co-evolution of cities") names
    that paper: another of the scholar's papers, whose title holds little of it, is not it.

    A rule, as for titles named after the text was written: the fitted weights see it
    as one feature among many, and a post naming its own title is, with its paper in
    the library, linked by the title route first.
    """
    if row["named"] and row["named_fit"] < NAMED_FIT:
        return min(probability, 0.05)
    return probability


def told_before(paper: OwnPaper, posted: str | None) -> bool:
    """Whether the poster already posted about ``paper`` :data:`TOLD_DAYS` or more before.

    An announcement tells something new. A scholar who posted about a paper weeks
    ago and now describes a paper in the same words is, far more often than not,
    announcing its companion (the same group, month and topic: the gamma rays of
    TXS 0506+056, then the magnetic fields they constrain), which the library may
    not hold yet. The words and the meaning cannot tell the two apart; the
    scholar's own history can. The cost is the rare untitled second telling of a
    paper weeks later ("a thread on this new paper"), which in a live stream
    mostly carries its link or card and is linked by them.
    """
    return any(
        (days := _days(when, posted)) is not None and days >= TOLD_DAYS for when in paper.told
    )


def _unless_told(paper: OwnPaper, posted: str | None, probability: float) -> float:
    return min(probability, _TOLD_CAP) if told_before(paper, posted) else probability


def judge_announcement(
    text: str,
    papers: Sequence[OwnPaper],
    weight: Callable[[str], float],
    *,
    posted: str | None = None,
    vector: Sequence[float] | None = None,
) -> list[Judged]:
    """Each of the poster's recent ``papers`` judged as what ``text`` announces, likeliest first.

    ``weight`` gives a word stem's information (the library's title weights);
    ``vector`` is the post's vector in the encoder the papers' vectors come
    from: without it (or when a paper lacks one) the words-only model judges.
    """
    rows, meaning = announcement_features(text, papers, weight, posted=posted, vector=vector)
    if not rows:
        return []
    route = model("announcement" if meaning else "announcement-words")
    judged = [
        Judged(
            paper,
            _unless_told(paper, posted, _unless_named_other(route.probability(row), row)),
            tuple((f, feature_value(row, f)) for f in route.features),
        )
        for paper, row in zip(papers, rows, strict=True)
    ]
    return sorted(judged, key=lambda j: j.probability, reverse=True)


def decide_announcement(judged: Sequence[Judged], bar: float = BAR) -> Mention | None:
    """The link to assert: the likeliest paper at ``bar`` or above, unless a second fits too."""
    if not judged or judged[0].probability < bar:
        return None
    if dict(judged[0].features).get("information", 0.0) < MIN_INFORMATION:
        return None  # the post says too little to tell this paper from one the library lacks
    if len(judged) > 1 and judged[1].probability >= RIVAL:
        return None  # two of the scholar's papers fit alike: the post names neither for sure
    best = judged[0]
    return Mention(
        best.paper.arxiv_id, "announcement", round(best.probability, 4), best.paper.title
    )


def link_announcement(
    text: str,
    papers: Sequence[OwnPaper],
    weight: Callable[[str], float],
    *,
    posted: str | None = None,
    vector: Sequence[float] | None = None,
    bar: float | None = None,
) -> Mention | None:
    """The recent paper of the poster's that ``text`` announces, if one clearly is
    (at ``bar``, by default the judging model's: :data:`BAR` or :data:`WORDS_BAR`)."""
    recent = [p for p in papers if in_window(p, posted)]
    judged = judge_announcement(text, recent, weight, posted=posted, vector=vector)
    if bar is None:
        meaning = vector is not None and all(p.vector is not None for p in recent)
        bar = BAR if meaning else WORDS_BAR
    return decide_announcement(judged, bar)
