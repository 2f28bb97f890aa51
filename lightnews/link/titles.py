"""Titles: papers named by their title alone, in headings or inside running text.

Blog posts, notes and newsletters often name a paper by title only, and not
always faithfully: machine-paraphrased ("Depth Professional" for "Depth
Pro", "Giant Language Fashions" for "Large Language Models"), with a subtitle
dropped or changed between versions and venues, with typos, or cut to
"Surname: short title". What survives such rewriting is the *telling* words:
paraphrasers swap common words, not "Monocular", "AdEMAMix" or "Monte Carlo".

So a title is matched by the weight of its telling words:

1. the text is cut into overlapping windows of words; for each, the rarest
   words query the title index for candidate papers (``TitleLookup``);
2. each candidate's title is aligned with the best stretch of the text: the
   share of the title's information (inverse document frequency of its
   words, stemmed) found there, in order and close together, and the share
   of that stretch the title explains;
3. a link is asserted only when the match carries enough information, is
   clearly better than the next candidate, and is not contradicted by dates;
   author surnames named nearby corroborate it. Below the bar, candidates can
   be shown but are never asserted: a wrong link is worse than a missing one.

"Surname: short title" references are matched against the papers of authors
with that surname, by how much of the short title the paper's title holds.
Pure code over a :class:`TitleLookup`; the store provides one.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

import snowballstemmer
from rapidfuzz.distance import OSA

from lightnews.model import Mention
from lightnews.normalize.names import fold

__all__ = [
    "Reference",
    "TitleCandidate",
    "TitleLookup",
    "TitleMatch",
    "find_title_mentions",
    "match_reference",
    "match_title",
    "stems",
    "title_weights",
]

_STEMMER = snowballstemmer.stemmer("porter")
#: The stemmer keeps the word it works on in itself: one thread at a time (the web
#: server's threads stem for related papers, a refresh's for linking).
_STEMMER_LOCK = threading.Lock()
_WORD = re.compile(r"[^\W_]+(?:[+#]+)?", re.UNICODE)
#: Words that carry no identity in a title (their weight is ignored).
_FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "the",
        "their",
        "this",
        "to",
        "towards",
        "toward",
        "via",
        "vs",
        "we",
        "with",
        "without",
        "what",
        "when",
        "which",
        "how",
        "why",
        "do",
        "does",
        "can",
    ]
)
#: A title cited without its subtitle (or by it alone) must keep this share of its information.
VARIANT_SHARE = 0.45
#: Words right after / before a matched stretch checked for unexplained telling words.
CONTEXT_AFTER = 3
CONTEXT_BEFORE = 1
STRAY_FREE = 6.0
STRAY_PENALTY = 0.25
#: Library size ``min_information`` is calibrated for (the evaluation corpus).
REFERENCE_SIZE = 11_000
WINDOW = 40
STRIDE = 20
QUERY_WORDS = 14
CANDIDATES = 25


@lru_cache(maxsize=262144)
def _stem(word: str) -> str:
    """Porter stem as SQLite's FTS5 ``porter`` tokenizer makes it (Snowball's differs a little)."""
    if len(word) <= 2:
        return word
    with _STEMMER_LOCK:
        stem = str(_STEMMER.stemWord(word))
    if stem.endswith("logi") or (stem.endswith("bli") and word.endswith("bly")):
        stem = stem[:-1]  # technology -> technolog, assembly -> assembl
    return stem


def stems(text: str) -> list[str]:
    """Folded, Porter-stemmed words of ``text`` (the same stems as the full-text index)."""
    return [_stem(w) for w in _WORD.findall(fold(text))]


@dataclass(frozen=True, slots=True)
class TitleCandidate:
    """A paper a lookup offers: its id, title, author surname keys and date."""

    arxiv_id: str
    title: str
    surnames: tuple[str, ...] = ()
    published: str | None = None


class TitleLookup(Protocol):
    """Where titles are looked up: the store's full-text index, or a test's list."""

    def title_candidates(
        self, words: Sequence[str], limit: int, surname: str | None = None
    ) -> list[TitleCandidate]: ...

    def title_doc_freq(self, stem: str) -> int: ...

    def paper_count(self) -> int: ...


@dataclass(frozen=True, slots=True)
class TitleMatch:
    candidate: TitleCandidate
    score: float
    information: float
    start: int
    end: int
    exact: bool = False


@dataclass(slots=True)
class Reference:
    """A "Surname: short title" reference, as notes write them."""

    surname: str
    title: str
    raw: str = ""


@dataclass(slots=True)
class _Weights:
    lookup: TitleLookup
    total: int = 0
    cache: dict[str, float] = field(default_factory=dict)

    def __call__(self, stem: str) -> float:
        known = self.cache.get(stem)
        if known is None:
            if not self.total:
                self.total = max(self.lookup.paper_count(), 1)
            df = self.lookup.title_doc_freq(stem)
            known = math.log((self.total + 1) / (df + 0.5))
            if stem in _FILLER_STEMS or len(stem) <= 1:
                known = 0.0
            self.cache[stem] = max(known, 0.0)
        return known


_FILLER_STEMS = frozenset(_stem(w) for w in _FILLER)


def title_weights(lookup: TitleLookup) -> _Weights:
    """Word weights for ``lookup``, to share between many calls (they are cached)."""
    return _Weights(lookup)


def _credits(
    title: list[str], text: list[str], weight: _Weights
) -> tuple[dict[str, float], list[tuple[int, str, float]]]:
    """The title's stems with weights, and which text positions credit which stem.

    A text word matching a title stem credits it fully; a word one edit away
    (a typo: "Evlauating", "Bridgnig") credits most of it, for long words only.
    """
    wanted: dict[str, float] = {}
    for stem in title:
        wanted[stem] = max(wanted.get(stem, 0.0), weight(stem))
    credits: list[tuple[int, str, float]] = []
    long_stems = [t for t in wanted if len(t) >= 5 and wanted[t] > 0]
    for i, stem in enumerate(text):
        if stem in wanted:
            credits.append((i, stem, wanted[stem]))
        elif len(stem) >= 5:
            for target in long_stems:
                if abs(len(target) - len(stem)) <= 1 and OSA.distance(stem, target) <= 1:
                    credits.append((i, target, 0.85 * wanted[target]))
                    break
    return wanted, credits


def _align(title: list[str], text: list[str], weight: _Weights) -> tuple[float, float, int, int]:
    """Best stretch of ``text`` for ``title``: (title info found, stretch info, start, end)."""
    _, credits = _credits(title, text, weight)
    if not credits:
        return 0.0, 0.0, 0, 0
    longest = int(len(title) * 1.5) + 4
    best = (0.0, 1.0, 0, 0)
    for a, (start, _, _) in enumerate(credits):
        got: dict[str, float] = {}
        for end, stem, credit in credits[a:]:
            if end - start >= longest:
                break
            if credit > got.get(stem, 0.0):
                got[stem] = credit
            found = sum(got.values())
            if found > best[0]:
                stretch = sum(weight(s) for s in set(text[start : end + 1]))
                best = (found, stretch, start, end + 1)
    return best


def _variants(title: str) -> list[tuple[str, float]]:
    """A title and the forms it is cited under: without its subtitle, or by it alone."""
    forms = [(title, 1.0)]
    if ":" in title:
        head, tail = (part.strip() for part in title.split(":", 1))
        forms += [(head, 0.97), (tail, 0.95)]
    return [(f, factor) for f, factor in forms if f]


def match_title(
    text: str, candidates: Sequence[TitleCandidate], weight: _Weights, *, whole: bool = False
) -> list[TitleMatch]:
    """Score each candidate against ``text``; ``whole`` when the text *is* a title."""
    text_stems = stems(text)
    folded = " ".join(_WORD.findall(fold(text)))
    text_info = sum(weight(s) for s in set(text_stems)) or 1.0
    matches = []
    for candidate in candidates:
        full_info = sum(weight(s) for s in set(stems(candidate.title)))
        exact_title = " ".join(_WORD.findall(fold(candidate.title)))
        if exact_title and (
            exact_title == folded or (not whole and f" {exact_title} " in f" {folded} ")
        ):
            matches.append(TitleMatch(candidate, 1.0, full_info, 0, len(text_stems), exact=True))
            continue
        best: TitleMatch | None = None
        title_set = set(stems(candidate.title))
        for form, factor in _variants(candidate.title):
            form_stems = stems(form)
            info = sum(weight(s) for s in set(form_stems))
            if not form_stems or info <= 0:
                continue
            if factor < 1.0 and (info < VARIANT_SHARE * full_info or len(set(form_stems)) < 2):
                continue
            found, stretch, start, end = _align(form_stems, text_stems, weight)
            if found <= 0:
                continue
            # Enough of the title's words, not one telling word, unless it is a coined
            # name at the head of the title ("FastVLM").
            content = {s for s in form_stems if weight(s) > 0.5}
            present = content & set(text_stems[start:end])
            needed = 0.5 if factor == 1.0 else 0.67
            coined = (
                len(present) == 1
                and weight(next(iter(present))) >= 8.0
                and (
                    next(iter(present)) == form_stems[0]
                    or next(iter(present)) == stems(candidate.title)[0]
                )
            )
            if not coined and (len(present) < 2 or len(present) < needed * len(content)):
                continue
            recall = found / info
            precision = found / (text_info if whole else stretch or 1.0)
            score = factor * (0.8 * recall + 0.2 * min(precision, 1.0))
            if not whole:
                # Telling words right around the stretch that the title does not hold
                # mean the text names another title that merely shares these words.
                around = set(text_stems[end : end + CONTEXT_AFTER]) | set(
                    text_stems[max(start - CONTEXT_BEFORE, 0) : start]
                )
                stray = sum(weight(t) for t in around - title_set)
                score -= min(STRAY_PENALTY * max(stray - STRAY_FREE, 0.0) / max(found, 1.0), 0.4)
            if best is None or score > best.score:
                best = TitleMatch(candidate, score, found, start, end)
        if best is not None:
            matches.append(best)
    matches.sort(key=lambda m: (m.score, m.information), reverse=True)
    return matches


def _telling_words(text_stems: list[str], words: list[str], weight: _Weights) -> list[str]:
    ranked = sorted(range(len(words)), key=lambda i: weight(text_stems[i]), reverse=True)
    chosen: list[str] = []
    for i in ranked:
        if weight(text_stems[i]) <= 0.5:
            break
        if words[i] not in chosen:
            chosen.append(words[i])
        if len(chosen) == QUERY_WORDS:
            break
    return chosen


def find_title_mentions(
    text: str,
    lookup: TitleLookup,
    *,
    bar: float = 0.8,
    min_information: float = 9.0,
    exclude: Sequence[str] = (),
    whole: bool = False,
    published: str | None = None,
    weight: _Weights | None = None,
) -> list[Mention]:
    """Papers named by title in ``text``, each once, above ``bar``.

    ``whole`` says the text is a title on its own (a heading, a link's text);
    otherwise titles are sought inside it. ``published`` is when the text was
    written: a paper that appeared long after cannot be what it names.
    """
    weight = weight or _Weights(lookup)
    words = _WORD.findall(fold(text))
    if not words:
        return []
    # In a small library every word looks rare: ask for proportionally less information.
    min_information *= min(1.0, math.log(lookup.paper_count() + 2) / math.log(REFERENCE_SIZE))
    text_stems = [_stem(w) for w in words]
    spans = (
        [(0, len(words))]
        if whole or len(words) <= WINDOW
        else [
            (s, min(s + WINDOW, len(words))) for s in range(0, max(len(words) - STRIDE, 1), STRIDE)
        ]
    )
    best: dict[str, Mention] = {}
    for start, end in spans:
        query = _telling_words(text_stems[start:end], words[start:end], weight)
        if not query:
            continue
        candidates = lookup.title_candidates(query, CANDIDATES)
        span_text = " ".join(words[start:end])
        matches = match_title(span_text, candidates, weight, whole=whole)
        claimed: list[tuple[int, int]] = []
        for rank, match in enumerate(matches):
            if match.candidate.arxiv_id in exclude:
                continue
            # A stretch of text names one paper: a weaker match over the same words loses.
            if any(match.start < e and s < match.end for s, e in claimed):
                continue
            claimed.append((match.start, match.end))
            rivals = [o for o in matches[rank + 1 :] if o.start < match.end and match.start < o.end]
            confidence = _confidence(match, rivals, min_information)
            if (
                published
                and match.candidate.published
                and (match.candidate.published[:10] > _plus_days(published, 60))
            ):
                confidence -= 0.3
            nearby = set(words[max(start, start + match.start - 40) : start + match.end + 40])
            if nearby & set(match.candidate.surnames):
                confidence += 0.05
            confidence = round(min(confidence, 1.0 if match.exact else 0.99), 3)
            if confidence < bar:
                continue
            known = best.get(match.candidate.arxiv_id)
            if known is None or known.confidence < confidence:
                method = "exact-title" if match.exact else "fuzzy-title"
                evidence = " ".join(words[start + match.start : start + match.end])[:300]
                best[match.candidate.arxiv_id] = Mention(
                    match.candidate.arxiv_id, method, confidence, evidence
                )
    return sorted(best.values(), key=lambda m: m.confidence, reverse=True)


def _confidence(match: TitleMatch, others: Sequence[TitleMatch], min_information: float) -> float:
    """How sure a title match is: its score, if it says enough and stands out.

    Calibrated on the evaluation harness (``bench/linking_eval.py``): a fuzzy
    match scoring 0.6 is right about 19 times in 20 when it carries at least
    ``min_information`` nats of telling words and beats the next paper by 0.05.
    """
    if match.exact and match.information >= min_information * 0.6:
        return 1.0
    confidence = match.score + 0.2
    if match.information < min_information:
        confidence *= match.information / min_information
    runner_up = next((o for o in others if o.candidate.title != match.candidate.title), None)
    if runner_up is not None and match.score - runner_up.score < 0.05:
        confidence -= 0.2  # two papers fit about as well: not sure which
    return confidence


def _plus_days(moment: str, days: int) -> str:
    from datetime import date, timedelta

    try:
        day = date.fromisoformat(moment[:10])
    except ValueError:
        return "9999"
    return (day + timedelta(days=days)).isoformat()


def match_reference(
    reference: Reference,
    lookup: TitleLookup,
    *,
    bar: float = 0.8,
    weight: _Weights | None = None,
) -> Mention | None:
    """The paper a "Surname: short title" reference names, when one clearly fits."""
    weight = weight or _Weights(lookup)
    surname = fold(reference.surname).split()[-1] if reference.surname.strip() else ""
    short = stems(reference.title)
    if not surname or not short:
        return None
    words = _WORD.findall(fold(reference.title))
    candidates = lookup.title_candidates(words, CANDIDATES, surname=surname)
    info = sum(weight(s) for s in set(short))
    if info <= 0:
        return None
    scored = []
    for candidate in candidates:
        _, credits = _credits(short, stems(candidate.title), weight)
        got: dict[str, float] = {}
        for _, stem, credit in credits:
            got[stem] = max(got.get(stem, 0.0), credit)
        found = sum(got.values())
        scored.append((found / info, found, candidate))
    scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
    if not scored:
        return None
    share, found, candidate = scored[0]
    confidence = share
    if found < 6.0:
        confidence *= found / 6.0
    if len(scored) > 1 and share - scored[1][0] < 0.1:
        confidence -= 0.3  # the same author has another paper that fits as well
    confidence = round(min(confidence + 0.05, 0.99), 3)  # the surname corroborates
    if confidence < bar:
        return None
    return Mention(
        candidate.arxiv_id,
        "surname-title",
        confidence,
        reference.raw or f"{reference.surname}: {reference.title}",
    )
