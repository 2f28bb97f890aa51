"""Meaning: a title written in other words, linked by what it says, within its page's period.

Article spinners, translators and hurried note-takers rewrite a title word by
word ("Principle, Evaluation, and Finest Practices for Sigmoid
Self-Consideration" for "Theory, Analysis, and Best Practices for Sigmoid
Self-Attention"), or shorten and misspell it ("Hierachical Autoregressive
Transformers"). The title route (:mod:`lightnews.link.titles`) weighs the
words a title and a text share, so a title with most of its words replaced
falls below its bar or is not aligned at all. Its meaning survives: a sentence
encoder puts the rewritten title next to the original, whatever words were
swapped, without a table of the swaps.

Meaning alone is not enough to name a paper among a million (many titles say
nearly the same thing), so this route runs only on a page that says when its
papers appeared (:mod:`lightnews.link.pagecontext`: its sure links agree on a
period, or it names a venue and year), and only among that period's
candidates. For each title-shaped stretch of the page (a run of Title Case
words in its prose, its heading, a "Surname: short title" reference) the
papers the title index offers for its telling words are kept when they fall
in the period; the stretch and their titles are encoded; the closest is
linked when it is close (:data:`MEANING_BAR`) and clearly closer than the
next (:data:`MARGIN`). A stretch the title route already linked, or whose
closest paper the page already names, adds nothing.

Needs the encoder of the ``semantic`` extra; without it the route is skipped
and linking stays on words (:func:`load_meaning` returns None).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lightnews.link.pagecontext import PageContext, page_context
from lightnews.link.title_features import surname_agrees
from lightnews.link.title_words import TitleLookup, stems
from lightnews.model import Item, Mention
from lightnews.normalize.names import fold
from lightnews.store.views import TitleCandidate

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MARGIN",
    "MEANING_BAR",
    "Span",
    "TitleMeaning",
    "judge_span",
    "link_by_meaning",
    "load_meaning",
    "title_spans",
]

#: Cosine (minilm-int8) a stretch must reach with a paper's title to be linked to it.
MEANING_BAR = 0.65
#: How much closer than the next candidate of the period the linked paper must be.
MARGIN = 0.15
#: Confidence given to a link by meaning (see docs: the share right on the dev pages).
CONFIDENCE = 0.9
#: A stretch this much shorter than a title (in words) may cite its head or subtitle alone.
SHORTER = 0.6
#: Candidates the title index is asked for per stretch (then cut to the period).
CANDIDATES = 40
#: Title Case words a stretch of prose needs to be read as a title.
MIN_CAPITALISED = 3
MAX_TEXT = 20_000

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: Words a title in Title Case writes in lower case.
_SMALL = frozenset(
    "a an and as at but by for from in into is of on or over than the to under up via vs "
    "with without when can do does be are not".split()
)
_TOKEN = re.compile(r"[^\s]+")


@dataclass(frozen=True, slots=True)
class Span:
    """A title-shaped stretch of a page: its words, and the surname cited with it."""

    text: str
    surname: str = ""


def _capitalised(word: str) -> bool:
    core = word.strip("\"'“”‘’()[],.;:?!")
    return bool(core) and (core[0].isupper() or core[0].isdigit())


def title_spans(text: str) -> list[str]:
    """Runs of Title Case words in ``text``: how prose writes a title it cites.

    A run starts and ends on a capitalised word, may hold the small words a
    title leaves in lower case ("of", "for", "and"), and ends at a sentence's
    end or a word in lower case; it needs :data:`MIN_CAPITALISED` capitalised
    words. ("Principle, Evaluation, and Finest Practices for Sigmoid
    Self-Consideration", "Do LLMs Know Internally When They Observe
    Directions?")
    """
    spans: list[str] = []
    run: list[str] = []

    def close() -> None:
        while run and not _capitalised(run[-1]):
            run.pop()
        if sum(1 for w in run if _capitalised(w)) >= MIN_CAPITALISED:
            spans.append(" ".join(run).strip("\"'“”‘’()[],.;: "))
        run.clear()

    for found in _TOKEN.finditer(text):
        word = found[0]
        if _capitalised(word) or (run and word.strip(",:").casefold() in _SMALL):
            run.append(word)
        else:
            close()
            continue
        if word.endswith((".", "?", "!", ";")) and not re.search(r"\.\w", word):
            close()
    close()
    return spans


class TitleMeaning:
    """Sentence vectors of short texts (stretches and titles), titles kept between calls."""

    def __init__(self, encode: Callable[[Sequence[str]], npt.NDArray[np.float32]]) -> None:
        self._encode = encode
        self._titles: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def vector(self, text: str) -> list[float]:
        """One text's vector (unit length), not kept."""
        with self._lock:
            return [float(v) for v in self._encode([text])[0]]

    def similarities(self, text: str, titles: Sequence[str]) -> list[float]:
        """Cosine of ``text`` with each title (vectors are of unit length)."""
        with self._lock:
            wanted = [t for t in dict.fromkeys(titles) if t not in self._titles]
            rows = self._encode([text, *wanted])
            for title, row in zip(wanted, rows[1:], strict=True):
                self._titles[title] = row
            while len(self._titles) > 50_000:
                self._titles.popitem(last=False)
            vectors = [self._titles[t] for t in titles]
        return [float(v @ rows[0]) for v in vectors]


_loaded: dict[str, TitleMeaning | None] = {}
_load_lock = threading.Lock()


def load_meaning(name: str = "minilm-int8") -> TitleMeaning | None:
    """The encoder ``name`` as a :class:`TitleMeaning`, or None without the semantic extra."""
    if name == "off":
        return None
    with _load_lock:
        if name not in _loaded:
            from lightnews.embed.encoders import SemanticUnavailable, load_encoder

            try:
                encoder = load_encoder(name)
            except SemanticUnavailable:
                _loaded[name] = None
            else:
                _loaded[name] = TitleMeaning(encoder.encode)
        return _loaded[name]


def _telling(text: str, weight: Callable[[str], float], limit: int = 14) -> list[str]:
    """The rarest words of a stretch, as the title index is queried with them."""
    words = list(dict.fromkeys(_WORD.findall(fold(text))))
    scored = [(weight(s[0]), w) for w in words if (s := stems(w))]
    return [w for value, w in sorted(scored, reverse=True)[:limit] if value > 0.5]


def judge_span(
    span: Span,
    lookup: TitleLookup,
    weight: Callable[[str], float],
    meaning: TitleMeaning,
    context: PageContext,
    *,
    exclude: Sequence[str] = (),
) -> tuple[TitleCandidate, float, float] | None:
    """The period's paper closest in meaning to ``span``: (paper, cosine, margin), or None."""
    query = _telling(span.text, weight)
    if len(query) < 2:
        return None
    found: dict[str, TitleCandidate] = {}
    if span.surname:
        for c in lookup.title_candidates(query, 10, surname=fold(span.surname).split()[-1]):
            found.setdefault(c.arxiv_id, c)
    for c in lookup.title_candidates(query, CANDIDATES):
        found.setdefault(c.arxiv_id, c)
    pool = [c for c in found.values() if context.holds(c.arxiv_id) and c.arxiv_id not in exclude]
    if span.surname:
        # "Surname: short title" names a paper by that author (a letter or two misspelt).
        name = fold(span.surname).split()[-1]
        pool = [c for c in pool if surname_agrees(name, c.surnames)[0] >= 0]
    if not pool:
        return None
    # A title is cited whole, without its subtitle, or by its subtitle alone.
    forms = [_forms(c.title, span.text) for c in pool]
    flat = meaning.similarities(span.text, [f for group in forms for f in group])
    cosines: list[float] = []
    for group in forms:
        cosines.append(max(flat[: len(group)]))
        flat = flat[len(group) :]
    ranked = sorted(zip(cosines, range(len(pool)), strict=True), reverse=True)
    best, index = ranked[0]
    runner = ranked[1][0] if len(ranked) > 1 else 0.0
    return pool[index], best, best - runner


def _forms(title: str, span: str) -> list[str]:
    """The forms of a title a stretch may cite: the whole title, and when the stretch is
    much shorter than it, its head (two words or more) and its subtitle (three or more)."""
    forms = [title]
    if ":" in title and len(span.split()) < SHORTER * len(title.split()):
        head, tail = (" ".join(part.split()) for part in title.split(":", 1))
        forms += [f for f, n in ((head, 2), (tail, 3)) if len(f.split()) >= n]
    return forms


def _spans(item: Item) -> list[Span]:
    out: list[Span] = [Span(r.title, r.surname) for r in item.references]
    if item.title and item.kind == "article":
        out.append(Span(item.title))
    out += [Span(s) for s in title_spans((item.text or "")[:MAX_TEXT])]
    return out


def _claimed(span: str, mentions: Sequence[Mention]) -> bool:
    """Whether the title route already linked (part of) this stretch."""
    flat = " ".join(span.split()).casefold()
    for mention in mentions:
        evidence = " ".join((mention.evidence or "").split()).casefold()
        if evidence and (evidence in flat or flat in evidence):
            return True
    return False


def _pages(items: Sequence[Item]) -> list[list[Item]]:
    """Items read from one page: an article is a page of its own; a batch's notes are one
    page (a notes page is parsed into one note per heading). Posts are not pages."""
    notes = [i for i in items if i.kind == "note"]
    return [[i] for i in items if i.kind == "article"] + ([notes] if notes else [])


def link_by_meaning(
    items: Sequence[Item],
    lookup: TitleLookup,
    weight: Callable[[str], float],
    meaning: TitleMeaning | None,
) -> None:
    """Link the title-shaped stretches of each page, by meaning, within the page's period."""
    if meaning is None:
        return
    for page in _pages(items):
        mentions = [m for i in page for m in i.mentions]
        text = "\n".join(f"{i.title or ''}\n{(i.text or '')[:MAX_TEXT]}" for i in page)
        context = page_context(mentions, text)
        if context is None:
            continue
        named = {m.arxiv_id for m in mentions}
        for item in page:
            for span in _spans(item):
                if _claimed(span.text, item.mentions):
                    continue
                exclude = (item.paper_id,) if item.paper_id else ()
                judged = judge_span(span, lookup, weight, meaning, context, exclude=exclude)
                if judged is None:
                    continue
                paper, cosine, margin = judged
                if cosine < MEANING_BAR or margin < MARGIN or paper.arxiv_id in named:
                    continue
                named.add(paper.arxiv_id)
                item.mentions = [
                    *item.mentions,
                    Mention(paper.arxiv_id, "meaning-title", CONFIDENCE, span.text[:300]),
                ]
