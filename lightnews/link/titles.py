"""Titles: papers named by their title alone, in headings or inside running text.

Blog posts, notes and newsletters often name a paper by title only, and not
always faithfully: machine-paraphrased ("Depth Professional" for "Depth
Pro", "Giant Language Fashions" for "Large Language Models"), with a subtitle
dropped or changed between versions and venues, with typos, abbreviated
("RAG" for "Retrieval-Augmented Generation"), or cut to "Surname: short
title". What survives such rewriting is the *telling* words: paraphrasers
swap common words, not "Monocular", "AdEMAMix" or "Monte Carlo".

So a title is matched by the weight of its telling words:

1. the text is cut into overlapping windows of words; for each, the rarest
   words query the title index for candidate papers (``TitleLookup``);
2. each candidate's title is aligned with the best stretch of the text: the
   share of the title's information (inverse document frequency of its
   words, stemmed, common abbreviations folded to one token) found there, in
   order and close together, and the share of that stretch the title explains;
3. the match is described by features (those, plus the margin over the next
   candidate, an author's surname named nearby, whether the dates fit, and
   whether the stretch stands as a title -- its own line, quoted, Title Case,
   after a colon -- or sits inside a sentence of prose), and a fitted logistic
   model (:mod:`lightnews.link.calibration`) turns them into the probability
   that the link is right. A link is asserted when that probability reaches
   the bar: a wrong link is worse than a missing one. Four rules cap it
   where the features cannot tell: a paper that appeared well after the text,
   another version of the name a title coins, and, in a paper's own abstract,
   a name it presents as its own work ("we introduce AgentLens, ...": another
   "AgentLens: ..." is a different work) and a title of plain words met as a
   topic in its prose ("counting rational curves in a Calabi-Yau threefold"
   is not the paper "Rational Curves on Calabi-Yau Threefolds").

"Surname: short title" references are matched against papers whose titles
hold the short title's words, judged the same way with the surname's
agreement (any author position, a letter or two misspelt) among the features.
Pure code over a :class:`TitleLookup`; the store provides one.
"""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from typing import Protocol

import snowballstemmer
from rapidfuzz.distance import OSA

from lightnews.link.calibration import model
from lightnews.model import Mention
from lightnews.normalize.names import fold

__all__ = [
    "ABBREVIATIONS",
    "Reference",
    "ScoredMatch",
    "TitleCandidate",
    "TitleLookup",
    "TitleMatch",
    "find_title_mentions",
    "match_reference",
    "match_title",
    "presents_as_own",
    "reads_as_topic",
    "score_reference",
    "score_titles",
    "stems",
    "surname_agrees",
    "title_weights",
    "version_clash",
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
#: Abbreviations that titles and the people citing them swap for the words they stand for.
ABBREVIATIONS = {
    "mllm": "multimodal large language model",
    "llm": "large language model",
    "vlm": "vision language model",
    "vla": "vision language action",
    "slm": "small language model",
    "rag": "retrieval augmented generation",
    "moe": "mixture of experts",
    "rlhf": "reinforcement learning from human feedback",
    "rl": "reinforcement learning",
    "cot": "chain of thought",
    "vit": "vision transformer",
    "gnn": "graph neural network",
    "lora": "low rank adaptation",
    "sft": "supervised fine tuning",
    "dpo": "direct preference optimization",
    "gan": "generative adversarial network",
    "nerf": "neural radiance field",
    "kv": "key value",
    "asr": "automatic speech recognition",
    "tts": "text to speech",
    "qa": "question answering",
    "mcts": "monte carlo tree search",
    "ssm": "state space model",
}
#: Score at which a longer cited form of a title is preferred for the information it holds.
VARIANT_FIT = 0.6
#: Margin over the next candidate beyond which a match counts as clearly ahead.
CLEAR_MARGIN = 0.3
#: Share of a title's information a text must hold (typos aside) for the title to be aligned.
SCREEN_SHARE = 0.3
#: A title cited without its subtitle (or by it alone) must keep this share of its information.
VARIANT_SHARE = 0.45
#: Words right after / before a matched stretch checked for unexplained telling words.
CONTEXT_AFTER = 3
CONTEXT_BEFORE = 1
#: Library size ``min_information`` is calibrated for (the evaluation corpus).
REFERENCE_SIZE = 11_000
MIN_INFORMATION = 9.0
WINDOW = 40
STRIDE = 20
QUERY_WORDS = 14
CANDIDATES = 25
#: Candidates per window that are described and judged (the rest score too low to matter).
JUDGED = 6
REFERENCE_CANDIDATES = 40
#: Days a paper may appear after the text that names it (preprint after the blog post).
LATE_DAYS = 60


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


_PHRASES: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _abbr, _phrase in sorted(ABBREVIATIONS.items(), key=lambda kv: -len(kv[1].split())):
    _words = tuple(_stem(w) for w in _phrase.split())
    _PHRASES.setdefault(_words[0], []).append((_words, _stem(_abbr)))
_EXPANSIONS = {_stem(a): p.split() for a, p in ABBREVIATIONS.items()}


def _canon(words: Sequence[str]) -> list[str]:
    """Stems with each spelled-out abbreviation folded to it, positions kept ("" after it)."""
    out = list(words)
    i = 0
    while i < len(out):
        for phrase, abbr in _PHRASES.get(out[i], ()):
            n = len(phrase)
            if tuple(out[i : i + n]) == phrase:
                out[i : i + n] = [abbr] + [""] * (n - 1)
                i += n - 1
                break
        i += 1
    return out


@lru_cache(maxsize=131072)
def _title_stems(title: str) -> tuple[str, ...]:
    return tuple(_canon([_stem(w) for w in _WORD.findall(fold(title))]))


@lru_cache(maxsize=131072)
def _folded(word: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(fold(word)))


@dataclass(frozen=True, slots=True)
class _Tokens:
    """A text's words: folded, stemmed (abbreviations folded) and where each sits."""

    text: str
    words: list[str]
    stems: list[str]
    spans: list[tuple[int, int]]


def _tokens(text: str) -> _Tokens:
    words: list[str] = []
    spans: list[tuple[int, int]] = []
    for found in _WORD.finditer(text):
        for word in _folded(found[0]):
            words.append(word)
            spans.append((found.start(), found.end()))
    return _Tokens(text, words, _canon([_stem(w) for w in words]), spans)


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
    """How a candidate's title aligns with the best stretch of a text (word positions)."""

    candidate: TitleCandidate
    score: float
    information: float
    start: int
    end: int
    exact: bool = False
    recall: float = 1.0
    full_recall: float = 1.0
    precision: float = 1.0
    coverage: float = 1.0
    order: float = 1.0
    density: float = 1.0
    stray: float = 0.0
    typo: float = 0.0
    partial: bool = False
    coined: bool = False
    content: int = 0
    unique: bool = False


@dataclass(frozen=True, slots=True)
class ScoredMatch:
    """A paper a text may name, the features it was judged by and the probability it is right.

    ``start``/``end`` are character offsets of the evidence in the text.
    """

    arxiv_id: str
    method: str
    probability: float
    features: tuple[tuple[str, float], ...]
    evidence: str
    start: int
    end: int

    def mention(self) -> Mention:
        confidence = round(min(self.probability, 1.0 if self.method == "exact-title" else 0.999), 3)
        return Mention(self.arxiv_id, self.method, confidence, self.evidence[:300])


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
            if stem in _FILLER_STEMS or len(stem) <= 1:
                known = 0.0
            else:
                if not self.total:
                    self.total = max(self.lookup.paper_count(), 1)
                df = self.lookup.title_doc_freq(stem)
                known = max(math.log((self.total + 1) / (df + 0.5)), 0.0)
            self.cache[stem] = known
        return known

    def rare(self) -> float:
        """The weight of a word in at most three papers: a misspelling is one of those."""
        if not self.total:
            self.total = max(self.lookup.paper_count(), 1)
        return math.log((self.total + 1) / 3.5)

    def only(self) -> float:
        """The weight of a word in one paper's title alone."""
        if not self.total:
            self.total = max(self.lookup.paper_count(), 1)
        return math.log((self.total + 1) / 1.5)

    def min_information(self) -> float:
        """Nats a fuzzy match must carry: less in a small library, where every word looks rare."""
        if not self.total:
            self.total = max(self.lookup.paper_count(), 1)
        return MIN_INFORMATION * min(1.0, math.log(self.total + 2) / math.log(REFERENCE_SIZE))


_FILLER_STEMS = frozenset(_stem(w) for w in _FILLER)


_SHARED: weakref.WeakKeyDictionary[TitleLookup, _Weights] = weakref.WeakKeyDictionary()
#: Words whose weights one library keeps between calls (about 50 bytes each).
MAX_CACHED_WORDS = 500_000


def title_weights(lookup: TitleLookup) -> _Weights:
    """Word weights for ``lookup``, kept between calls while the library stays about as big.

    Looking a word's frequency up costs a query; linking one abstract needs
    hundreds (its words and its candidates' titles). Weights move little as a
    library grows, so they are kept until it has grown by a twentieth.
    """
    try:
        known = _SHARED.get(lookup)
    except TypeError:  # a lookup that cannot be weakly referenced
        return _Weights(lookup)
    count = max(lookup.paper_count(), 1)
    if known is None or not (
        known.total <= count <= known.total * 1.05 + 100 and len(known.cache) < MAX_CACHED_WORDS
    ):
        known = _Weights(lookup, count)
        _SHARED[lookup] = known
    return known


def _credits(
    title: Sequence[str], text: Sequence[str], weight: _Weights
) -> tuple[dict[str, float], list[tuple[int, str, float]]]:
    """The title's stems with weights, and which text positions credit which stem.

    A text word matching a title stem credits it fully; a word one edit away
    (a typo: "Evlauating", "Bridgnig") credits most of it, for long words only.
    """
    wanted: dict[str, float] = {}
    for stem in title:
        if stem:
            wanted[stem] = max(wanted.get(stem, 0.0), weight(stem))
    credits: list[tuple[int, str, float]] = []
    long_stems = [t for t in wanted if len(t) >= 5 and wanted[t] > 0]
    for i, stem in enumerate(text):
        if not stem:
            continue
        if stem in wanted:
            credits.append((i, stem, wanted[stem]))
        elif len(stem) >= 5 and long_stems and weight(stem) >= weight.rare():
            for target in long_stems:
                if abs(len(target) - len(stem)) <= 1 and OSA.distance(stem, target) <= 1:
                    credits.append((i, target, 0.85 * wanted[target]))
                    break
    return wanted, credits


@dataclass(frozen=True, slots=True)
class _Stretch:
    found: float
    stretch: float
    start: int
    end: int
    credits: tuple[tuple[int, str, float], ...]


def _align(title: Sequence[str], text: Sequence[str], weight: _Weights) -> _Stretch | None:
    """Best stretch of ``text`` for ``title``: the most title information, shortest first."""
    _, credits = _credits(title, text, weight)
    if not credits:
        return None
    longest = int(len(title) * 1.5) + 4
    best: tuple[float, int, int] = (0.0, 0, 0)
    shortest = 0
    for a, (start, _, _) in enumerate(credits):
        got: dict[str, float] = {}
        found = 0.0
        for b in range(a, len(credits)):
            end, stem, credit = credits[b]
            if end - start >= longest:
                break
            known = got.get(stem, 0.0)
            if credit > known:
                got[stem] = credit
                found += credit - known
            # The most of the title; of stretches holding as much, the shortest (the
            # earliest start is not it: a stretch reaching back over a sentence to an
            # earlier title word holds no more than the title's own words).
            if found > best[0] + 1e-9 or (
                found > best[0] - 1e-9 and end - start < shortest
            ):
                best, shortest = (found, a, b), end - start
    found, a, b = best
    if found <= 0:
        return None
    start, end = credits[a][0], credits[b][0] + 1
    stretch = sum(weight(s) for s in set(text[start:end]))
    return _Stretch(found, stretch, start, end, tuple(credits[a : b + 1]))


def _in_order(title: Sequence[str], credits: Sequence[tuple[int, str, float]]) -> float:
    """Share of the matched words that follow the title's order (longest increasing run)."""
    first: dict[str, int] = {}
    for i, stem in enumerate(title):
        first.setdefault(stem, i)
    sequence = [first[s] for _, s, _ in credits if s in first]
    if len(sequence) <= 1:
        return 1.0
    tails: list[int] = []
    for value in sequence:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(tails):
            tails.append(value)
        else:
            tails[lo] = value
    return len(tails) / len(sequence)


@lru_cache(maxsize=131072)
def _heads(title: str) -> frozenset[str]:
    """The first stem of a title and of its subtitle (where a coined name stands)."""
    return frozenset(_title_stems(part)[0] for part in title.split(":", 1) if _title_stems(part))


def _variants(title: str) -> list[tuple[str, bool]]:
    """A title and the forms it is cited under: without its subtitle, or by it alone."""
    forms = [(title, False)]
    if ":" in title:
        head, tail = (part.strip() for part in title.split(":", 1))
        forms += [(head, True), (tail, True)]
    return [(f, partial) for f, partial in forms if f]


def match_title(
    text: str | _Tokens,
    candidates: Sequence[TitleCandidate],
    weight: _Weights,
    *,
    whole: bool = False,
) -> list[TitleMatch]:
    """Align each candidate with ``text``; ``whole`` when the text *is* a title.

    Candidates that share too little with the text (fewer than two of their
    telling words, unless one coined name heads the title) are dropped.
    """
    tokens = text if isinstance(text, _Tokens) else _tokens(text)
    text_stems = tokens.stems
    present_all = set(text_stems)
    folded = " ".join(tokens.words)
    text_info = sum(weight(s) for s in present_all) or 1.0
    only = weight.only() - 1e-9
    matches = []
    for candidate in candidates:
        title_stems = _title_stems(candidate.title)
        full_info = sum(weight(s) for s in set(title_stems))
        if full_info <= 0:
            continue
        exact_title = " ".join(_WORD.findall(fold(candidate.title)))
        if exact_title and (
            exact_title == folded or (not whole and f" {exact_title} " in f" {folded} ")
        ):
            start = f" {folded} ".index(f" {exact_title} ")
            first = folded[:start].count(" ")
            n = len(exact_title.split())
            matches.append(
                TitleMatch(candidate, 1.0, full_info, first, first + n, exact=True, content=n)
            )
            continue
        # Cheap screen before aligning: two telling words, or one that heads the title.
        shared = {s for s in title_stems if s in present_all and weight(s) > 0.5}
        if len(shared) < 2 and not (shared and shared & _heads(candidate.title)):
            continue
        if sum(weight(s) for s in shared) < SCREEN_SHARE * full_info and len(shared) < 3:
            continue  # too little of the title here to ever be linked (typos aside)
        best: TitleMatch | None = None
        for form, partial in _variants(candidate.title):
            form_stems = _title_stems(form) if partial else title_stems
            form_set = set(form_stems)
            info = sum(weight(s) for s in form_set)
            if not form_stems or info <= 0:
                continue
            if partial and (info < VARIANT_SHARE * full_info or len(form_set - {""}) < 2):
                continue
            stretch = _align(form_stems, text_stems, weight)
            if stretch is None:
                continue
            content = {s for s in form_stems if weight(s) > 0.5}
            present = content & set(text_stems[stretch.start : stretch.end])
            needed = 0.67 if partial else 0.5
            coined = (
                len(present) == 1
                and weight(next(iter(present))) >= 8.0
                and next(iter(present)) in (form_stems[0], title_stems[0])
            )
            if not coined and (len(present) < 2 or len(present) < needed * len(content)):
                continue
            recall = stretch.found / info
            precision = min(stretch.found / (text_info if whole else stretch.stretch or 1.0), 1.0)
            score = (0.95 if partial else 1.0) * (0.8 * recall + 0.2 * precision)
            stray = 0.0
            if not whole:
                around = set(text_stems[stretch.end : stretch.end + CONTEXT_AFTER]) | set(
                    text_stems[max(stretch.start - CONTEXT_BEFORE, 0) : stretch.start]
                )
                stray = sum(weight(t) for t in around - set(title_stems))
            positions = {i for i, _, _ in stretch.credits}
            typo_credit = sum(c for i, s, c in stretch.credits if text_stems[i] != s)
            match = TitleMatch(
                candidate,
                score,
                stretch.found,
                stretch.start,
                stretch.end,
                recall=recall,
                full_recall=min(stretch.found / full_info, 1.0),
                precision=precision,
                coverage=len(present) / max(len(content), 1),
                order=_in_order(form_stems, stretch.credits),
                density=len(positions) / max(stretch.end - stretch.start, 1),
                stray=stray,
                typo=typo_credit / stretch.found,
                partial=partial,
                coined=coined,
                content=len(content),
                unique=any(
                    text_stems[i] == s and weight(s) >= only for i, s, _ in stretch.credits
                ),
            )
            # The form that carries the most of the title wins, when it fits well:
            # a subtitle found too must not lose to the bare head it contains.
            if best is None or (
                (match.information, match.score) > (best.information, best.score)
                if min(match.score, best.score) >= VARIANT_FIT
                else match.score > best.score
            ):
                best = match
        if best is not None:
            matches.append(best)
    matches.sort(key=lambda m: (m.score, m.information), reverse=True)
    return matches


def _telling_words(
    text_stems: Sequence[str], words: Sequence[str], weight: _Weights, limit: int = QUERY_WORDS
) -> list[str]:
    """The rarest words of a stretch, as the title index is queried with them.

    An abbreviation brings the words it stands for (titles spell either form).
    """
    ranked = sorted(range(len(words)), key=lambda i: weight(text_stems[i]), reverse=True)
    chosen: list[str] = []
    for i in ranked:
        if weight(text_stems[i]) <= 0.5:
            break
        word = words[i]
        if text_stems[i] in _EXPANSIONS and text_stems[i] != _stem(word):
            word = text_stems[i]  # the words stand for an abbreviation: ask for it
        if word not in chosen:
            chosen.append(word)
            for expansion in _EXPANSIONS.get(text_stems[i], ()):
                if expansion not in _FILLER and expansion not in chosen:
                    chosen.append(expansion)
        if len(chosen) >= limit:
            break
    return chosen


# -- features ------------------------------------------------------------------------------

_QUOTES_OPEN = "\"'“‘«*_„"
_QUOTES_CLOSE = "\"'”’»*_“"


def surname_agrees(word: str, surnames: Sequence[str]) -> tuple[int, int]:
    """Where ``word`` (folded) is among an author list's surname keys: (position, edits).

    (-1, 0) when it is not. Misspellings are tolerated on longer names: one
    edit from five letters, two from eight.
    """
    best = (-1, 0)
    for position, key in enumerate(surnames):
        if not key:
            continue
        if key == word:
            return position, 0
        allowed = 2 if min(len(key), len(word)) >= 8 else 1 if min(len(key), len(word)) >= 5 else 0
        if allowed and abs(len(key) - len(word)) <= allowed:
            edits = OSA.distance(key, word, score_cutoff=allowed)
            if edits <= allowed and (best[0] < 0 or edits < best[1]):
                best = (position, edits)
    return best


def _late(published: str | None, candidate: TitleCandidate) -> bool:
    """Whether the paper appeared well after the text that names it was written."""
    if not published or not candidate.published:
        return False
    try:
        written = date.fromisoformat(published[:10])
    except ValueError:
        return False
    return candidate.published[:10] > (written + timedelta(days=LATE_DAYS)).isoformat()


def _standing(tokens: _Tokens, start: int, end: int) -> dict[str, float]:
    """Whether words ``start:end`` stand as a title or sit inside a sentence of prose."""
    text = tokens.text
    begin, finish = tokens.spans[start][0], tokens.spans[end - 1][1]
    line_start = text.rfind("\n", 0, begin) + 1
    line_end = text.find("\n", finish)
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start:begin].rstrip()
    after = text[finish:line_end].lstrip()
    own_line = len(_WORD.findall(before)) + len(_WORD.findall(after)) <= 2
    quoted = (
        bool(before) and before[-1] in _QUOTES_OPEN and (not after or after[0] in _QUOTES_CLOSE)
    )
    shown = [text[a:b] for a, b in tokens.spans[start:end] if b - a > 3]
    title_case = sum(1 for w in shown if w[:1].isupper()) / len(shown) if shown else 0.0
    near = [
        i
        for i in [*range(max(start - 4, 0), start), *range(end, min(end + 4, len(tokens.words)))]
        if line_start <= tokens.spans[i][0] < line_end
    ]
    lower = sum(
        1
        for i in near
        if tokens.words[i] not in _FILLER
        and text[tokens.spans[i][0] : tokens.spans[i][1]][:1].islower()
    )
    return {
        "own_line": float(own_line),
        "quoted": float(quoted),
        "title_case": title_case,
        "after_colon": float(before.endswith(":")),
        "prose": lower / 8.0,
    }


def _surname_near(tokens: _Tokens, start: int, end: int, surnames: Sequence[str]) -> bool:
    if not surnames:
        return False
    for i in range(max(start - 40, 0), min(end + 40, len(tokens.words))):
        if start <= i < end:
            continue
        a = tokens.spans[i][0]
        if tokens.text[a : a + 1].isupper() and surname_agrees(tokens.words[i], surnames)[0] >= 0:
            return True
    return False


@lru_cache(maxsize=131072)
def _coined_name(title: str) -> re.Pattern[str] | None:
    """The name a title coins before its colon, one token ("FastVLM", "AM-Thinking-v1",
    "SeedVR2"), as a pattern that finds it written as such (not "FastVLM2", "SeedVR2 v2").

    Not a word in capitals alone ("DARE", "SAGE", "VGGT"): such acronyms are
    reused for unrelated methods ("DARE" the 2023 merging method is not "DARE:
    Diffusion Large Language Models Alignment..."), so writing one is no sign.
    """
    head = title.split(":", 1)[0].strip() if ":" in title else ""
    if len(head) < 3 or " " in head or (head.isalpha() and head.isupper()):
        return None
    if not (re.search(r"[A-Z]", head[1:]) or re.search(r"\d", head)):
        return None
    return re.compile(rf"(?<![\w.-]){re.escape(head)}(?![\w-]|\.\d|\s+v?\d)")


def _names_coined(text: str, title: str, weight: _Weights) -> bool:
    """Whether ``text`` writes the name the title coins, a name rare among titles: a
    post about "FastVLM" is about "FastVLM: Efficient Vision Encoding for Vision..."."""
    pattern = _coined_name(title)
    if pattern is None or not pattern.search(text):
        return False
    stems = [s for s in _title_stems(title.split(":", 1)[0]) if s]
    return bool(stems) and max(weight(s) for s in stems) >= weight.rare()


#: Verbs with which a text presents work of its own ("we present X", "this paper introduces X").
_PRESENT = (
    r"present|introduce|propose|develop|build|release|design|construct|create|curate|"
    r"contribute|offer|unveil|open-source|devise|establish|formulate|put forward|call"
)
_LEAD = re.compile(
    rf"(?i:\b(?:we|this (?:paper|work|report|study|article|thesis)|here)\b[^.;!?]{{0,40}}?"
    rf"\b(?:{_PRESENT})(?:s|d|ed|es|ing)?\b(?!\s+(?:on|upon|from|off)\b))"
)
#: Words that, between such a verb and the name, make the name someone else's ("we
#: propose to use X", "we build a model based on X", "revealing that X").
_BORROWED = re.compile(
    r"(?i:\b(?:us(?:e|es|ed|ing)|based|built|upon|on|from|extend\w*|than|over|like|such|"
    r"including|with|against|of|to|compare\w*|follow\w*|adapt\w*|apply\w*|via|by|recent|"
    r"existing|prior|previous|into|in|that|and)\b)"
)
#: Words between the verb and the name, at most (a benchmark, a framework...).
_LEAD_GAP = 8
_LISTED = re.compile(r"\s+(?:and|or|&)\s")
#: How an abstract or summary opens before its first word ("Abstract UniGeo is...").
_OPENING = re.compile(r"\s*(?:Abstract\b[\s:.]*)?[\"'“*_]*")


@lru_cache(maxsize=65536)
def _presented(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    # The name as written, not a longer name it starts ("SWE-Pruner Pro", "X v2", "X 2.0").
    n = rf"(?<![\w-]){re.escape(name)}(?![\w-]|\.\d|\s+[A-Z0-9]|\s+v\d)"
    told = (
        rf"(?i:\b(?:called|named|dubbed|termed|coined)\b)\s*[\"'“‘*]?{n}"
        rf"|(?i:\bour\b)\s+(?:[\w-]+,?\s+){{0,3}}{n}"
        rf"|{n}\s*\((?i:ours)\)"
    )
    return re.compile(n), re.compile(told)


def _title_name(title: str) -> str:
    """What a title calls its work before the colon: one to three capitalised words."""
    if ":" not in title:
        return ""
    name = " ".join(title.split(":", 1)[0].split())
    words = name.split()
    if not 1 <= len(words) <= 3 or not all(w[:1].isupper() or w[:1].isdigit() for w in words):
        return ""
    return name


def presents_as_own(text: str, title: str) -> bool:
    """Whether ``text`` presents the name ``title`` coins as its own work.

    "We present AgentLens, a framework for...", "a benchmark dubbed MBench",
    "our method, ReCode, ...", "MBench (ours)", or an abstract that opens on
    the name ("Abstract UniGeo is a camera-controllable..."): the text is about
    *its* AgentLens. When that text is a paper's own abstract or summary,
    another paper titled "AgentLens: ..." is a different work of the same name,
    not one the text names. A mention of someone else's work reads otherwise:
    "compared with AgentLens", "we build on AgentLens", "such as AgentLens",
    "we release the AgentLens-distilled data", "we introduce AgentLens 2".
    """
    name = _title_name(title)
    if not name or name not in text:
        return False
    plain, told = _presented(name)
    if told.search(text):
        return True
    opening = _OPENING.match(text)
    first = opening.end() if opening else 0
    for found in plain.finditer(text):
        if found.start() == first:
            return True  # the text opens on the name: that is what it is about
        sentence = max(text.rfind(c, 0, found.start()) for c in ".!?;") + 1
        before = text[sentence : found.start()]
        words = before.split()
        if words and words[-1][:1].isupper() and len(words) > 1:
            continue  # part of a longer name ("Projection Pursuit CPCANet")
        if _LISTED.match(text, found.end()):
            continue  # one of several ("we release the X and Y distilled data")
        for lead in _LEAD.finditer(before):
            between = before[lead.end() :]
            if len(between.split()) <= _LEAD_GAP and not _BORROWED.search(between):
                return True
    return False


_WORDS = re.compile(r"[^\W_]+")


def _plain_words(title: str) -> bool:
    """Whether a title is ordinary words only: none with a digit or a capital past its
    first letter ("Rational Curves on Calabi-Yau Threefolds", not "VGGT: ...",
    "Nemotron 3 Nano Omni", "AM-Thinking-v1")."""
    return not any(
        any(c.isdigit() for c in w) or any(c.isupper() for c in w[1:])
        for w in _WORDS.findall(title)
    )


def reads_as_topic(span: str, title: str, features: dict[str, float]) -> bool:
    """Whether a paper's own abstract uses ``title``'s words as a topic, not as a title.

    An abstract names the work it builds on by that work's name ("compared
    with VGGT", "on Big Bench Extra Hard") or by its whole title, and
    describes its own subject in ordinary words, which are often another
    paper's title: "the capabilities of the Discrete Dipole Approximation",
    "analytic solutions of WZW-type open superstring field theory", "based on
    the Sloan Digital Sky Survey". So, in a text that belongs to a paper, a
    title of plain words (:func:`_plain_words`) matched loosely (not the whole
    title in order) inside a sentence (not quoted, not on its own line, not
    after a colon) names a topic, unless the text writes the name the title
    gives before its colon as the title writes it ("Native Sparse Attention"
    for "Native Sparse Attention: Hardware-Aligned ..."). A rule, like the
    others: such texts are nearly all negatives, where a fitted weight has no
    positives to learn from (on the dev split it capped 80 candidates, none of
    them right).
    """
    if features["exact"] or features["named"] or features["whole"]:
        return False
    if features["quoted"] or features["own_line"] or features["after_colon"]:
        return False
    if not _plain_words(title):
        return False
    head = " ".join(title.split(":", 1)[0].split()) if ":" in title else ""
    return not (head and head in " ".join(span.split()))


def _title_features(
    match: TitleMatch,
    rival: TitleMatch | None,
    tokens: _Tokens,
    offset: int,
    weight: _Weights,
    *,
    whole: bool,
    published: str | None,
) -> dict[str, float]:
    start, end = offset + match.start, offset + match.end
    features = {
        "recall": match.recall,
        "full_recall": match.full_recall,
        "precision": match.precision,
        "information": min(match.information / weight.min_information(), 3.0),
        "coverage": match.coverage,
        "order": match.order,
        "density": match.density,
        "stray": min(match.stray / 10.0, 2.0),
        "typo": match.typo,
        "exact": float(match.exact),
        "partial": float(match.partial),
        "coined": float(match.coined),
        "short": float(match.content <= 2),
        "margin": min(match.score - (rival.score if rival else 0.0), CLEAR_MARGIN),
        "surname": float(_surname_near(tokens, start, end, match.candidate.surnames)),
        "late": float(_late(published, match.candidate)),
        "whole": float(whole),
        "unique": float(match.unique),
        "named": float(_names_coined(tokens.text, match.candidate.title, weight)),
    }
    if whole:
        features.update(own_line=1.0, quoted=0.0, title_case=0.0, after_colon=0.0, prose=0.0)
        shown = [w for w in tokens.text.split() if len(w) > 3]
        features["title_case"] = (
            sum(1 for w in shown if w[:1].isupper()) / len(shown) if shown else 0.0
        )
    else:
        features.update(_standing(tokens, start, end))
    return features


def _unless_late(probability: float, features: dict[str, float]) -> float:
    """A paper that appeared well after the text was written is not what it names (a rule)."""
    return min(probability, 0.05) if features["late"] else probability


_NUMBER = re.compile(r"\d+(?:\.\d+)*")


def version_clash(text: str, start: int, end: int, title: str) -> bool:
    """Whether the name at ``text[start:end]`` carries another version than the title's
    coined name ("InternVL3.5" is not "InternVL3: ...", "Wan-Streamer v0.3" not "v0.2").

    A rule, like a paper that appeared after the text: version siblings share
    every word but the number, so their match features cannot tell them apart.
    Only a title whose coined name (before its colon, at most four words) has a
    number is checked, against the numbers in the span and just after it.
    """
    head = title.split(":", 1)[0] if ":" in title else ""
    if not head or len(head.split()) > 4:
        return False
    wanted = set(_NUMBER.findall(head))
    if not wanted:
        return False
    found = set(_NUMBER.findall(text[start : end + 8]))
    return bool(found) and not wanted & found


def score_titles(
    text: str,
    lookup: TitleLookup,
    *,
    exclude: Sequence[str] = (),
    whole: bool = False,
    published: str | None = None,
    weight: _Weights | None = None,
) -> list[ScoredMatch]:
    """Every paper ``text`` may name by title, each once, judged: the model's probability.

    ``whole`` says the text is a title on its own (a heading, a link's text);
    otherwise titles are sought inside it. ``published`` is when the text was
    written: a paper that appeared long after cannot be what it names.
    ``exclude`` holds the paper the text belongs to (its abstract, its daily
    summary): a name such a text presents as its own work (:func:`presents_as_own`)
    is not another paper that happens to carry it, and a title of plain words it
    uses as its topic (:func:`reads_as_topic`) is not a paper it names.
    """
    weight = weight or title_weights(lookup)
    tokens = _tokens(text)
    words = tokens.words
    if not words:
        return []
    spans = (
        [(0, len(words))]
        if whole or len(words) <= WINDOW
        else [
            (s, min(s + WINDOW, len(words))) for s in range(0, max(len(words) - STRIDE, 1), STRIDE)
        ]
    )
    title_model = model("title")
    best: dict[str, ScoredMatch] = {}
    for start, end in spans:
        query = _telling_words(tokens.stems[start:end], words[start:end], weight)
        if not query:
            continue
        candidates = [
            c for c in lookup.title_candidates(query, CANDIDATES) if c.arxiv_id not in exclude
        ]
        if not candidates:
            continue
        window = _Tokens(text, words[start:end], tokens.stems[start:end], tokens.spans[start:end])
        matches = match_title(window, candidates, weight, whole=whole)
        for rank, match in enumerate(matches[:JUDGED]):
            rival = next(
                (
                    o
                    for o in matches
                    if o is not match
                    and o.candidate.title != match.candidate.title
                    and o.start < match.end
                    and match.start < o.end
                ),
                None,
            )
            if rank and rival is None:
                rival = matches[0]
            features = _title_features(
                match, rival, tokens, start, weight, whole=whole, published=published
            )
            probability = _unless_late(title_model.probability(features), features)
            a = tokens.spans[start + match.start][0]
            b = tokens.spans[start + match.end - 1][1]
            if version_clash(text, a, b, match.candidate.title) or (
                exclude
                and not whole
                and (
                    presents_as_own(text, match.candidate.title)
                    or reads_as_topic(text[a:b], match.candidate.title, features)
                )
            ):
                probability = min(probability, 0.05)
            known = best.get(match.candidate.arxiv_id)
            if known is None or probability > known.probability:
                best[match.candidate.arxiv_id] = ScoredMatch(
                    match.candidate.arxiv_id,
                    "exact-title" if match.exact else "fuzzy-title",
                    probability,
                    tuple(features.items()),
                    " ".join(text[a:b].split()),
                    a,
                    b,
                )
    return sorted(best.values(), key=lambda m: m.probability, reverse=True)


def decide(scored: Sequence[ScoredMatch], bar: float) -> list[Mention]:
    """The links to assert: at or above ``bar``, one paper per stretch of text (the likeliest)."""
    claimed: list[tuple[int, int]] = []
    found: list[Mention] = []
    for match in sorted(scored, key=lambda m: m.probability, reverse=True):
        if match.probability < bar:
            break
        if any(match.start < e and s < match.end for s, e in claimed):
            continue  # a stretch of text names one paper: a likelier one already has it
        claimed.append((match.start, match.end))
        found.append(match.mention())
    return found


def find_title_mentions(
    text: str,
    lookup: TitleLookup,
    *,
    bar: float = 0.8,
    exclude: Sequence[str] = (),
    whole: bool = False,
    published: str | None = None,
    weight: _Weights | None = None,
) -> list[Mention]:
    """Papers named by title in ``text``, each once, with a probability of at least ``bar``."""
    scored = score_titles(
        text, lookup, exclude=exclude, whole=whole, published=published, weight=weight
    )
    return decide(scored, bar)


# -- "Surname: short title" ----------------------------------------------------------------


def _reference_candidates(
    reference: Reference, surname: str, lookup: TitleLookup, weight: _Weights
) -> list[TitleCandidate]:
    tokens = _tokens(reference.title)
    query = _telling_words(tokens.stems, tokens.words, weight, limit=10)
    if not query:
        return []
    found = {c.arxiv_id: c for c in lookup.title_candidates(query, 10, surname=surname)}
    for candidate in lookup.title_candidates(query, REFERENCE_CANDIDATES):
        found.setdefault(candidate.arxiv_id, candidate)
    return list(found.values())


def score_reference(
    reference: Reference,
    lookup: TitleLookup,
    *,
    exclude: Sequence[str] = (),
    published: str | None = None,
    weight: _Weights | None = None,
) -> list[ScoredMatch]:
    """The papers a "Surname: short title" reference may name, judged (likeliest first)."""
    weight = weight or title_weights(lookup)
    names = fold(reference.surname.replace("&", " and ")).split()
    names = [n for n in names if n not in ("and", "et", "al")]
    surname = names[-1] if names else ""
    short = _title_stems(reference.title)
    info = sum(weight(s) for s in set(short))
    if not surname or info <= 0:
        return []
    scored: list[tuple[float, float, float, float, TitleCandidate]] = []
    for candidate in _reference_candidates(reference, surname, lookup, weight):
        if candidate.arxiv_id in exclude:
            continue
        title = _title_stems(candidate.title)
        _, credits = _credits(short, title, weight)
        got: dict[str, float] = {}
        for _, stem, credit in credits:
            got[stem] = max(got.get(stem, 0.0), credit)
        found = sum(got.values())
        if found <= 0:
            continue
        title_info = sum(weight(s) for s in set(title)) or 1.0
        flipped = [(i, s, c) for i, s, c in credits]
        scored.append(
            (found / info, found, found / title_info, _in_order(title, flipped), candidate)
        )
    scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
    reference_model = model("reference")
    results = []
    content = sum(1 for s in set(short) if weight(s) > 0.5)
    for rank, (share, found, title_share, order, candidate) in enumerate(scored[:JUDGED]):
        position, edits = -1, 0
        for name in names:
            position, edits = surname_agrees(name, candidate.surnames)
            if position >= 0:
                break
        if position < 0:
            continue  # not by that author (or authors unknown): judged as a title instead
        rival = scored[1][0] if rank == 0 and len(scored) > 1 else scored[0][0] if rank else 0.0
        features = {
            "share": share,
            "information": min(found / weight.min_information(), 3.0),
            "title_share": min(title_share, 1.0),
            "order": order,
            "surname_first": float(position == 0 and edits == 0),
            "surname_other": float(position > 0 and edits == 0),
            "surname_typo": float(position >= 0 and edits > 0),
            "margin": min(share - rival, CLEAR_MARGIN),
            "late": float(_late(published, candidate)),
            "short": float(content <= 2),
        }
        results.append(
            ScoredMatch(
                candidate.arxiv_id,
                "surname-title",
                _unless_late(reference_model.probability(features), features),
                tuple(features.items()),
                reference.raw or f"{reference.surname}: {reference.title}",
                -1,
                -1,
            )
        )
    return sorted(results, key=lambda m: m.probability, reverse=True)


def match_reference(
    reference: Reference,
    lookup: TitleLookup,
    *,
    bar: float = 0.8,
    published: str | None = None,
    weight: _Weights | None = None,
) -> Mention | None:
    """The paper a "Surname: short title" reference names, when one clearly fits."""
    scored = score_reference(reference, lookup, published=published, weight=weight)
    if not scored or scored[0].probability < bar:
        return None
    return scored[0].mention()
