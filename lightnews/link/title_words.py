"""Title words: the stems, weights and alignment that matching a title by its words runs on.

A title is matched by the weight of its *telling* words (see
:mod:`lightnews.link.titles`). This module holds what that rests on: words
cut and stemmed (Porter; common abbreviations such as "LLM" folded to one
token with their expansion), each stem weighed by its inverse document
frequency in the library's titles (:func:`title_weights`, shared per library),
and the alignment of a title with the best stretch of a text (:func:`align`):
the share of the title's information found there, in order and close
together, and the share of that stretch the title explains.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from rapidfuzz.distance import OSA

from lightnews.normalize.names import fold
from lightnews.normalize.stems import porter_stem
from lightnews.store.views import TitleCandidate

__all__ = [
    "ABBREVIATIONS",
    "EXPANSIONS",
    "FILLER",
    "FILLER_STEMS",
    "MAX_CACHED_WORDS",
    "MIN_INFORMATION",
    "REFERENCE_SIZE",
    "SCREEN_SHARE",
    "WORD",
    "Stretch",
    "TitleLookup",
    "TitleMatch",
    "Tokens",
    "Weights",
    "align",
    "heads",
    "in_order",
    "stem_word",
    "stems",
    "stems_of_title",
    "title_weights",
    "tokenize",
    "variants",
    "word_credits",
]


WORD = re.compile(r"[^\W_]+(?:[+#]+)?", re.UNICODE)

#: Words that carry no identity in a title (their weight is ignored).
FILLER = frozenset(
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

#: Share of a title's information a text must hold (typos aside) for the title to be aligned.
SCREEN_SHARE = 0.3
MIN_INFORMATION = 9.0

#: Library size ``min_information`` is calibrated for (the evaluation corpus).
REFERENCE_SIZE = 11_000


@lru_cache(maxsize=262144)
def stem_word(word: str) -> str:
    """Porter stem as SQLite's FTS5 ``porter`` tokenizer makes it (Snowball's differs a little)."""
    if len(word) <= 2:
        return word
    stem = porter_stem(word)
    if stem.endswith("logi") or (stem.endswith("bli") and word.endswith("bly")):
        stem = stem[:-1]  # technology -> technolog, assembly -> assembl
    return stem


def stems(text: str) -> list[str]:
    """Folded, Porter-stemmed words of ``text`` (the same stems as the full-text index)."""
    return [stem_word(w) for w in WORD.findall(fold(text))]


_PHRASES: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _abbr, _phrase in sorted(ABBREVIATIONS.items(), key=lambda kv: -len(kv[1].split())):
    _words = tuple(stem_word(w) for w in _phrase.split())
    _PHRASES.setdefault(_words[0], []).append((_words, stem_word(_abbr)))
EXPANSIONS = {stem_word(a): p.split() for a, p in ABBREVIATIONS.items()}


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
def stems_of_title(title: str) -> tuple[str, ...]:
    return tuple(_canon([stem_word(w) for w in WORD.findall(fold(title))]))


@lru_cache(maxsize=131072)
def _folded(word: str) -> tuple[str, ...]:
    return tuple(WORD.findall(fold(word)))


@dataclass(frozen=True, slots=True)
class Tokens:
    """A text's words: folded, stemmed (abbreviations folded) and where each sits."""

    text: str
    words: list[str]
    stems: list[str]
    spans: list[tuple[int, int]]


def tokenize(text: str) -> Tokens:
    words: list[str] = []
    spans: list[tuple[int, int]] = []
    for found in WORD.finditer(text):
        for word in _folded(found[0]):
            words.append(word)
            spans.append((found.start(), found.end()))
    return Tokens(text, words, _canon([stem_word(w) for w in words]), spans)


class TitleLookup(Protocol):
    """Where titles are looked up: the store's full-text index, or a test's list."""

    def title_candidates(
        self, words: Sequence[str], limit: int, surname: str | None = None
    ) -> list[TitleCandidate]: ...

    def title_doc_freq(self, stem: str) -> int: ...

    def paper_count(self) -> int: ...


@dataclass(slots=True)
class Weights:
    lookup: TitleLookup
    total: int = 0
    cache: dict[str, float] = field(default_factory=dict)

    def __call__(self, stem: str) -> float:
        known = self.cache.get(stem)
        if known is None:
            if stem in FILLER_STEMS or len(stem) <= 1:
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


FILLER_STEMS = frozenset(stem_word(w) for w in FILLER)

_SHARED: weakref.WeakKeyDictionary[TitleLookup, Weights] = weakref.WeakKeyDictionary()

#: Words whose weights one library keeps between calls (about 50 bytes each).
MAX_CACHED_WORDS = 500_000


def title_weights(lookup: TitleLookup) -> Weights:
    """Word weights for ``lookup``, kept between calls while the library stays about as big.

    Looking a word's frequency up costs a query; linking one abstract needs
    hundreds (its words and its candidates' titles). Weights move little as a
    library grows, so they are kept until it has grown by a twentieth.
    """
    try:
        known = _SHARED.get(lookup)
    except TypeError:  # a lookup that cannot be weakly referenced
        return Weights(lookup)
    count = max(lookup.paper_count(), 1)
    if known is None or not (
        known.total <= count <= known.total * 1.05 + 100 and len(known.cache) < MAX_CACHED_WORDS
    ):
        known = Weights(lookup, count)
        _SHARED[lookup] = known
    return known


def word_credits(
    title: Sequence[str], text: Sequence[str], weight: Weights
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
class Stretch:
    found: float
    stretch: float
    start: int
    end: int
    credits: tuple[tuple[int, str, float], ...]


def align(title: Sequence[str], text: Sequence[str], weight: Weights) -> Stretch | None:
    """Best stretch of ``text`` for ``title``: the most title information, shortest first."""
    _, credits = word_credits(title, text, weight)
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
            if found > best[0] + 1e-9 or (found > best[0] - 1e-9 and end - start < shortest):
                best, shortest = (found, a, b), end - start
    found, a, b = best
    if found <= 0:
        return None
    start, end = credits[a][0], credits[b][0] + 1
    stretch = sum(weight(s) for s in set(text[start:end]))
    return Stretch(found, stretch, start, end, tuple(credits[a : b + 1]))


def in_order(title: Sequence[str], credits: Sequence[tuple[int, str, float]]) -> float:
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
def heads(title: str) -> frozenset[str]:
    """The first stem of a title and of its subtitle (where a coined name stands)."""
    parts = (stems_of_title(part) for part in title.split(":", 1))
    return frozenset(found[0] for found in parts if found)


def variants(title: str) -> list[tuple[str, bool]]:
    """A title and the forms it is cited under: without its subtitle, or by it alone."""
    forms = [(title, False)]
    if ":" in title:
        head, tail = (part.strip() for part in title.split(":", 1))
        forms += [(head, True), (tail, True)]
    return [(f, partial) for f, partial in forms if f]


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
