"""Title features: what describes a title match, and the rules that cap what it cannot tell.

A match found by :func:`~lightnews.link.title_words.align` is described by
features (:func:`describe_match`): the shares it holds, the margin over the
next candidate, an author's surname named nearby (:func:`surname_agrees`),
whether the dates fit, and whether the stretch stands as a title (its own
line, quoted, Title Case, after a colon) or sits inside a sentence of prose.
The fitted model (:mod:`lightnews.link.calibration`) turns them into a
probability. Rules cap it where the features cannot tell: a paper that
appeared well after the text (:func:`unless_late`), another version of the
name a title coins or another part of its series (:func:`numbering_clash`), a
proper name the title is about written without the rest of the title
(:func:`names_its_subject`), a title found inside a longer title the text
writes (:func:`inside_a_longer_title`), and, in a paper's own abstract, a
name it presents as its own work (:func:`presents_as_own`) and a title of
plain words met as a topic in its prose (:func:`reads_as_topic`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, timedelta
from functools import lru_cache

from rapidfuzz.distance import OSA

from lightnews.link.title_words import (
    FILLER,
    WORD,
    TitleMatch,
    Tokens,
    Weights,
    stems_of_title,
)
from lightnews.store.views import TitleCandidate

__all__ = [
    "CLEAR_MARGIN",
    "CONTEXT_AFTER",
    "CONTEXT_BEFORE",
    "LATE_DAYS",
    "describe_match",
    "inside_a_longer_title",
    "is_late",
    "names_its_subject",
    "numbering_clash",
    "presents_as_own",
    "reads_as_topic",
    "surname_agrees",
    "title_like",
    "unless_late",
]


#: Words right after / before a matched stretch checked for unexplained telling words.
CONTEXT_AFTER = 3

CONTEXT_BEFORE = 1

#: Days a paper may appear after the text that names it (preprint after the blog post).
LATE_DAYS = 60
#: Margin over the next candidate beyond which a match counts as clearly ahead.
CLEAR_MARGIN = 0.3
#: A match holding a name the title is about (:func:`names_its_subject`) names the title
#: only when it also holds this share of the information of the title's other words ...
SUBJECT_FOUND = 0.5
#: ... a rule that applies only when those missing words hold this share of the title.
SUBJECT_MISSING = 0.2


#: A quoted title names a paper whose title explains at least this share of its telling
#: words' information. Set between what the announcements' dev split shows: siblings inside
#: a longer quoted title explain 0.48 and 0.52 of it; a title renamed between versions, 0.63.
QUOTE_EXPLAINED = 0.57
#: A quote longer than this many words is a quoted sentence, not a title.
QUOTE_WORDS = 25


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


def is_late(published: str | None, candidate: TitleCandidate) -> bool:
    """Whether the paper appeared well after the text that names it was written."""
    if not published or not candidate.published:
        return False
    try:
        written = date.fromisoformat(published[:10])
    except ValueError:
        return False
    return candidate.published[:10] > (written + timedelta(days=LATE_DAYS)).isoformat()


def _standing(tokens: Tokens, start: int, end: int) -> dict[str, float]:
    """Whether words ``start:end`` stand as a title or sit inside a sentence of prose."""
    text = tokens.text
    begin, finish = tokens.spans[start][0], tokens.spans[end - 1][1]
    line_start = text.rfind("\n", 0, begin) + 1
    line_end = text.find("\n", finish)
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start:begin].rstrip()
    after = text[finish:line_end].lstrip()
    own_line = len(WORD.findall(before)) + len(WORD.findall(after)) <= 2
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
        if tokens.words[i] not in FILLER
        and text[tokens.spans[i][0] : tokens.spans[i][1]][:1].islower()
    )
    return {
        "own_line": float(own_line),
        "quoted": float(quoted),
        "title_case": title_case,
        "after_colon": float(before.endswith(":")),
        "prose": lower / 8.0,
    }


def _surname_near(tokens: Tokens, start: int, end: int, surnames: Sequence[str]) -> bool:
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


def _names_coined(text: str, title: str, weight: Weights) -> bool:
    """Whether ``text`` writes the name the title coins, a name rare among titles: a
    post about "FastVLM" is about "FastVLM: Efficient Vision Encoding for Vision..."."""
    pattern = _coined_name(title)
    if pattern is None or not pattern.search(text):
        return False
    stems = [s for s in stems_of_title(title.split(":", 1)[0]) if s]
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


def describe_match(
    match: TitleMatch,
    rival: TitleMatch | None,
    tokens: Tokens,
    offset: int,
    weight: Weights,
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
        "late": float(is_late(published, match.candidate)),
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


def _name_runs(tokens: Tokens, start: int, end: int) -> list[tuple[int, int]]:
    """The runs of capitalised words (small words allowed inside: "Taurus Molecular
    Cloud", "James Webb Space Telescope") that reach into words ``start:end``, whole.
    A run is words apart by spaces or hyphens only: punctuation ends it."""
    text = tokens.text
    n = len(tokens.words)

    def capital(i: int) -> bool:  # capitalised, or a number inside a name ("10 Hosts")
        a, b = tokens.spans[i]
        return text[a:b][:1].isupper() or text[a:b][:1].isdigit()

    def joined(i: int) -> bool:  # word i follows word i - 1 with nothing but a space between
        return i > 0 and not text[tokens.spans[i - 1][1] : tokens.spans[i][0]].strip(" -")

    def inside(i: int) -> bool:  # word i continues a run from word i - 1
        if not joined(i):
            return False
        if capital(i):
            return True
        j = i  # small words ("with the", "of") inside a name: a capitalised word follows
        while j < n and tokens.words[j] in FILLER and not capital(j) and (j == i or joined(j)):
            j += 1
        return j < n and j - i <= 3 and joined(j) and capital(j)

    runs: list[tuple[int, int]] = []
    i = start
    while i < end:
        if not capital(i):
            i += 1
            continue
        a = i
        while a > 0 and inside(a) and (capital(a - 1) or (a > 1 and inside(a - 1))):
            a -= 1
        while not capital(a):
            a += 1
        b = i + 1
        while b < n and inside(b):
            b += 1
        while not capital(b - 1):
            b -= 1
        runs.append((a, b))
        i = max(b, i + 1)
    return runs


def names_its_subject(
    tokens: Tokens, start: int, end: int, title: str, weight: Weights, features: dict[str, float]
) -> bool:
    """Whether what a text shares with ``title`` is a name the title is about, not the title.

    "using the James Webb Space Telescope" is not the paper "Scientific Discovery
    with the James Webb Space Telescope", nor "deuteration in starless cores in the
    Taurus Molecular Cloud" the paper "A Survey of CH2DOH Towards Starless and
    Prestellar Cores in the Taurus Molecular Cloud": the text writes a proper name
    (a run of capitalised words inside a sentence, each of them the title's) that
    the title is about, and little of the rest of the title, which says what the
    paper does with it. A title cited in Title Case keeps its other words, or their
    synonyms, in the run: a run with a capitalised word the title lacks is not such
    a name. A rule, like the others: these are links to papers a post does not name,
    which the match features (a long, rare, in-order stretch) cannot tell from a
    title; not applied to a title that stands as one (quoted, on its own line, after
    a colon, the whole text), written whole, cited by its head or subtitle alone, or
    whose name (before its colon: "Native Sparse Attention") the text writes.
    """
    if features["exact"] or features["named"] or features["whole"] or features["partial"]:
        return False
    if features["quoted"] or features["own_line"] or features["after_colon"]:
        return False
    title_stems = set(stems_of_title(title)) - {""}
    telling = {s for s in title_stems if weight(s) > 0.5}
    full = sum(weight(s) for s in telling)
    if full <= 0:
        return False
    name: set[str] = set()
    for a, b in _name_runs(tokens, start, end):
        capitalised = [
            tokens.stems[i]
            for i in range(a, b)
            if tokens.words[i] not in FILLER and tokens.text[tokens.spans[i][0]].isupper()
        ]
        if len(capitalised) >= 2 and all(s in title_stems for s in capitalised):
            name.update(s for s in capitalised if s in telling)
    written = set(tokens.stems)
    head = set(stems_of_title(title.split(":", 1)[0])) & telling if ":" in title else set()
    if not name or (head and head <= written):
        return False  # none, or the text writes the name the title gives its work
    rest = telling - name
    rest_info = sum(weight(s) for s in rest)
    found = sum(weight(s) for s in rest & written)
    return rest_info - found >= SUBJECT_MISSING * full and found < SUBJECT_FOUND * rest_info


#: Double quotation marks and the marks that close each (a straight one closes itself).
_DOUBLE_QUOTES = {'"': '"', "“": "”", "„": "“”", "«": "»"}

_SENTENCE_BREAK = re.compile(r"[.!?]\s")


def _quote_around(text: str, start: int, end: int) -> str | None:
    """The double-quoted stretch of one line that holds ``text[start:end]``, if any."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start:start]
    opening = max(before.rfind(mark) for mark in _DOUBLE_QUOTES)
    if opening < 0:
        return None
    mark = before[opening]
    if mark == '"' and before.count('"') % 2 == 0:
        return None  # the last straight mark before the stretch closed a quote
    if any(c in before[opening + 1 :] for c in _DOUBLE_QUOTES[mark] if c != '"'):
        return None  # that quote closed before the stretch
    after = text[end:line_end]
    closing = min((i for c in _DOUBLE_QUOTES[mark] if (i := after.find(c)) >= 0), default=-1)
    if closing < 0:
        return None
    return text[line_start + opening + 1 : end + closing]


#: Small words a title writes in lower case ("Learning to Rank with Graphs").
_SMALL = frozenset(
    "a an the of for and in on with to via from by at as is are or its their into under over "
    "through towards toward using without beyond vs versus".split()
)


def title_like(name: str) -> bool:
    """Whether a quoted or introduced stretch reads as a title, not a remark.

    Posts quote all sorts ("brain-damaged", "Why? Hard to say Why!"); only a
    stretch of three words or more, with no question or exclamation, most of
    whose words other than small ones are capitalised, is taken as a title the
    post names (a rule measured on dev: with every quote counted, one in ten
    untitled announcements was barred from its own paper).
    """
    words = re.findall(r"[\w'’-]+", name)
    if not 3 <= len(words) <= 30 or re.search(r"[?!]", name):
        return False
    big = [w for w in words if w.lower() not in _SMALL]
    capitalised = sum(1 for w in big if w[0].isupper() or any(c.isdigit() for c in w))
    return bool(big) and capitalised / len(big) >= 0.6


#: How a post introduces a title: "New paper: X", "Our latest preprint, out today: X".
_INTRODUCED = re.compile(r"\b(?:paper|preprint|article)\b[^:.\n<]{0,30}:\s*", re.I)

#: Where a title a post writes ends and the post runs on: a link, a handle, "with" or
#: "w/" and names (a title's own "with" after the match ends it too, which can only spare
#: a link), a comma before a word in lower case (", to appear at ..."), a closing quote,
#: a dash or a bar set apart, a bracket, a sentence break, an emoji.
_TITLE_ENDS = re.compile(
    r"<LINK>|https?://|\S+\.(?:com|org|io|net|ai|pdf)/|@|,?\s+(?:with|w/)\s|,\s+(?=[a-z])"
    r"|[\"'”’](?=\s|$)|\s[-–—|]\s|\s\(|[.!?](?:\s|$)|[\U0001F300-\U0001FAFF\u2600-\u27BF]"
)

#: A line that goes on as a sentence: a comma or a stop before a word in lower case, or a
#: final stop.
_RUNS_ON_AS_PROSE = re.compile(r"[,.;:!?]\s+[a-z]|[.!?]\s*$")


def _introduced_around(text: str, start: int, end: int) -> str | None:
    """The title a post writes that holds ``text[start:end]``: after "paper:" or at the
    start of a line, to where the post runs on (``_TITLE_ENDS``), if it reads as a title."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start:start]
    introducers = list(_INTRODUCED.finditer(before))
    head = line_start + introducers[-1].end() if introducers else line_start
    if _TITLE_ENDS.search(text[head:start].lstrip(_QUOTES_OPEN + " \t")) or (
        not introducers and before.strip(_QUOTES_OPEN + " \t")
    ):
        return None  # the stretch is not at the head of what the line introduces
    after = text[end:line_end]
    if not introducers and _RUNS_ON_AS_PROSE.search(after):
        return None  # a line that reads as a sentence opens with its subject, not a title
    ends = _TITLE_ENDS.search(after)
    title = text[head : end + (ends.start() if ends else len(after))].strip()
    names, colon, rest = title.rpartition(": ")
    if colon and "," in names and head + len(names) + 2 <= start:
        title = rest  # "Hatakeyama, Sakuma, Suenaga: Visualizing ...": authors, then the title
    return title if title_like(title) else None


def inside_a_longer_title(text: str, start: int, end: int, title: str, weight: Weights) -> bool:
    """Whether ``text[start:end]`` sits inside a title the text writes that is not ``title``.

    "Selfish Mining and Dyck Words in Bitcoin and Ethereum Networks", quoted or
    after "New paper:", is not the paper "Selfish Mining in Ethereum", nor "On
    Second Order Behaviour in Augmented Neural ODEs" the paper "Augmented Neural
    ODEs": a post that writes a title names the paper of that title, and another
    paper whose title holds some of its words is a sibling (the same authors'
    earlier work, usually). The match features cannot tell: they describe the
    stretch the title aligns with, which is in order, rare and dense.

    A rule, like the others. The written title is a quote of one line (at most
    ``QUOTE_WORDS`` words, no sentence break), or what follows "paper:" or opens
    a line, up to where the post runs on (a link, a handle, ", with" and names);
    either must read as a title (:func:`title_like`). It must hold every telling
    word of ``title`` and more words than ``title`` has (small words aside), and
    ``title`` must explain less than ``QUOTE_EXPLAINED`` of its telling words. A paraphrase ("Giant
    Language Fashions") lacks some of the title's words, and a title with a word
    spun or misspelt ("... Embedding Mannequins?") is no longer than the title:
    neither is judged by this rule. A title whose words changed a little between
    versions still explains most of the written one ("... first passage process
    via Loschmidt echo" for "... first passage process").
    """
    written = _quote_around(text, start, end) or _introduced_around(text, start, end)
    if written is None or _SENTENCE_BREAK.search(written) or len(written.split()) > QUOTE_WORDS:
        return False
    written_words = [s for s in stems_of_title(written) if weight(s) > 0]
    title_words = [s for s in stems_of_title(title) if weight(s) > 0]
    if len(written_words) <= len(title_words):
        return False  # no longer than the title: a word spun or misspelt, not another title
    named = {s for s in written_words if weight(s) > 0.5}
    own = {s for s in title_words if weight(s) > 0.5}
    if not own <= named:
        return False  # words of the title are not in the written one: a paraphrase, perhaps
    return sum(weight(s) for s in own) < QUOTE_EXPLAINED * sum(weight(s) for s in named)


def unless_late(probability: float, features: dict[str, float]) -> float:
    """A paper that appeared well after the text was written is not what it names (a rule)."""
    return min(probability, 0.05) if features["late"] else probability


_NUMBER = re.compile(r"\d+(?:\.\d+)*")

#: A part of a series, as titles number it: "Stars V:", "Star Formation. III.",
#: "Part 2", "Paper II".
#: A lone "I" counts only before a stop or a colon ("Simulations I: ..."), not as the
#: pronoun ("What I Learned").
_PART = re.compile(
    r"(?:\b(?:[Pp]art|[Pp]aper)\s+(?P<word>\d{1,2}|[IVX]{1,5})(?=[.:,;)]?(?:\s|$))"
    r"|(?<=[\w.)]\s)(?P<roman>[IVX]{2,5}|[VX])(?=[.:,;)]?(?:\s|$))"
    r"|(?<=[\w.)]\s)(?P<one>I)(?=[.:;)](?:\s|$)|$))"
)


def _versions(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def _parts(text: str) -> set[str]:
    return {m["word"] or m["roman"] or m["one"] for m in _PART.finditer(text)}


def _coined_head(title: str) -> str:
    """The name a title coins before its colon (at most four words), or nothing."""
    head = title.split(":", 1)[0] if ":" in title else ""
    return head if len(head.split()) <= 4 else ""


def numbering_clash(text: str, start: int, end: int, title: str) -> bool:
    """Whether the text at ``text[start:end]`` numbers what it names otherwise than the
    title does: another version of the name the title coins ("InternVL3.5" is not
    "InternVL3: ...", "Wan-Streamer v0.3" not "v0.2"), or another part of the title's
    series ("The ASAS-SN Catalog of Variable Stars VI: ..." is not "... Stars V: ...",
    "GMC Collisions as Triggers of Star Formation. IV." not "... III.").

    A rule, like a paper that appeared after the text: versions and parts share
    every word but their number, and parts often their subtitles' field too, so
    the match features cannot tell them apart. Only a title that numbers its
    coined name (before its colon, at most four words) or its part is checked,
    against the numbers of that kind in the matched stretch and just after it; a
    text that writes none is not judged.
    """
    near = text[start : end + 8]
    for wanted, read in ((_versions(_coined_head(title)), _versions), (_parts(title), _parts)):
        found = read(near) if wanted else set()
        if found and not wanted & found:
            return True
    return False
