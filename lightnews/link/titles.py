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
   the bar: a wrong link is worse than a missing one. Six rules cap it
   where the features cannot tell: a paper that appeared well after the text,
   another version of the name a title coins, a proper name the title is about
   written without the rest of the title ("using the James Webb Space
   Telescope" is not "Scientific Discovery with the James Webb Space
   Telescope"), a title inside a longer quoted one (a quoted "Selfish Mining
   and Dyck Words in Bitcoin and Ethereum Networks" is not "Selfish Mining in
   Ethereum"), and, in a paper's own abstract,
   a name it presents as its own work ("we introduce AgentLens, ...": another
   "AgentLens: ..." is a different work) and a title of plain words met as a
   topic in its prose ("counting rational curves in a Calabi-Yau threefold"
   is not the paper "Rational Curves on Calabi-Yau Threefolds").

"Surname: short title" references are matched against papers whose titles
hold the short title's words, judged the same way with the surname's
agreement (any author position, a letter or two misspelt) among the features.
Pure code over a :class:`~lightnews.link.title_words.TitleLookup`; the store
provides one. The words, weights and alignment are in
:mod:`lightnews.link.title_words`, the features and rules in
:mod:`lightnews.link.title_features`; this module finds and decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lightnews.link.calibration import model
from lightnews.link.title_features import (
    CLEAR_MARGIN,
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    describe_match,
    inside_a_longer_title,
    is_late,
    names_its_subject,
    numbering_clash,
    presents_as_own,
    reads_as_topic,
    surname_agrees,
    unless_late,
)
from lightnews.link.title_words import (
    EXPANSIONS,
    FILLER,
    SCREEN_SHARE,
    WORD,
    TitleLookup,
    TitleMatch,
    Tokens,
    Weights,
    align,
    heads,
    in_order,
    stem_word,
    stems_of_title,
    title_weights,
    tokenize,
    variants,
    word_credits,
)
from lightnews.model import Mention
from lightnews.normalize.names import fold
from lightnews.store.views import TitleCandidate

__all__ = [
    "CANDIDATES",
    "JUDGED",
    "QUERY_WORDS",
    "REFERENCE_CANDIDATES",
    "STRIDE",
    "VARIANT_FIT",
    "VARIANT_SHARE",
    "WINDOW",
    "Reference",
    "ScoredMatch",
    "decide",
    "find_title_mentions",
    "match_reference",
    "match_title",
    "score_reference",
    "score_titles",
]


#: Score at which a longer cited form of a title is preferred for the information it holds.
VARIANT_FIT = 0.6


#: A title cited without its subtitle (or by it alone) must keep this share of its information.
VARIANT_SHARE = 0.45


WINDOW = 40

STRIDE = 20

QUERY_WORDS = 14

CANDIDATES = 25

#: Candidates per window that are described and judged (the rest score too low to matter).
JUDGED = 6

REFERENCE_CANDIDATES = 40


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


def match_title(
    text: str | Tokens,
    candidates: Sequence[TitleCandidate],
    weight: Weights,
    *,
    whole: bool = False,
) -> list[TitleMatch]:
    """Align each candidate with ``text``; ``whole`` when the text *is* a title.

    Candidates that share too little with the text (fewer than two of their
    telling words, unless one coined name heads the title) are dropped.
    """
    tokens = text if isinstance(text, Tokens) else tokenize(text)
    text_stems = tokens.stems
    present_all = set(text_stems)
    folded = " ".join(tokens.words)
    text_info = sum(weight(s) for s in present_all) or 1.0
    only = weight.only() - 1e-9
    matches = []
    for candidate in candidates:
        title_stems = stems_of_title(candidate.title)
        full_info = sum(weight(s) for s in set(title_stems))
        if full_info <= 0:
            continue
        exact_title = " ".join(WORD.findall(fold(candidate.title)))
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
        if len(shared) < 2 and not (shared and shared & heads(candidate.title)):
            continue
        if sum(weight(s) for s in shared) < SCREEN_SHARE * full_info and len(shared) < 3:
            continue  # too little of the title here to ever be linked (typos aside)
        best: TitleMatch | None = None
        for form, partial in variants(candidate.title):
            form_stems = stems_of_title(form) if partial else title_stems
            form_set = set(form_stems)
            info = sum(weight(s) for s in form_set)
            if not form_stems or info <= 0:
                continue
            if partial and (info < VARIANT_SHARE * full_info or len(form_set - {""}) < 2):
                continue
            stretch = align(form_stems, text_stems, weight)
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
                order=in_order(form_stems, stretch.credits),
                density=len(positions) / max(stretch.end - stretch.start, 1),
                stray=stray,
                typo=typo_credit / stretch.found,
                partial=partial,
                coined=coined,
                content=len(content),
                unique=any(text_stems[i] == s and weight(s) >= only for i, s, _ in stretch.credits),
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
    text_stems: Sequence[str], words: Sequence[str], weight: Weights, limit: int = QUERY_WORDS
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
        if text_stems[i] in EXPANSIONS and text_stems[i] != stem_word(word):
            word = text_stems[i]  # the words stand for an abbreviation: ask for it
        if word not in chosen:
            chosen.append(word)
            for expansion in EXPANSIONS.get(text_stems[i], ()):
                if expansion not in FILLER and expansion not in chosen:
                    chosen.append(expansion)
        if len(chosen) >= limit:
            break
    return chosen


def score_titles(
    text: str,
    lookup: TitleLookup,
    *,
    exclude: Sequence[str] = (),
    whole: bool = False,
    published: str | None = None,
    weight: Weights | None = None,
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
    tokens = tokenize(text)
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
        window = Tokens(text, words[start:end], tokens.stems[start:end], tokens.spans[start:end])
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
            features = describe_match(
                match, rival, tokens, start, weight, whole=whole, published=published
            )
            probability = unless_late(title_model.probability(features), features)
            a = tokens.spans[start + match.start][0]
            b = tokens.spans[start + match.end - 1][1]
            if (
                numbering_clash(text, a, b, match.candidate.title)
                or (not whole and inside_a_longer_title(text, a, b, match.candidate.title, weight))
                or (
                    not whole
                    and names_its_subject(
                        tokens,
                        start + match.start,
                        start + match.end,
                        match.candidate.title,
                        weight,
                        features,
                    )
                )
                or (
                    exclude
                    and not whole
                    and (
                        presents_as_own(text, match.candidate.title)
                        or reads_as_topic(text[a:b], match.candidate.title, features)
                    )
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
    weight: Weights | None = None,
) -> list[Mention]:
    """Papers named by title in ``text``, each once, with a probability of at least ``bar``."""
    scored = score_titles(
        text, lookup, exclude=exclude, whole=whole, published=published, weight=weight
    )
    return decide(scored, bar)


def _reference_candidates(
    reference: Reference, surname: str, lookup: TitleLookup, weight: Weights
) -> list[TitleCandidate]:
    tokens = tokenize(reference.title)
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
    weight: Weights | None = None,
) -> list[ScoredMatch]:
    """The papers a "Surname: short title" reference may name, judged (likeliest first)."""
    weight = weight or title_weights(lookup)
    names = fold(reference.surname.replace("&", " and ")).split()
    names = [n for n in names if n not in ("and", "et", "al")]
    surname = names[-1] if names else ""
    short = stems_of_title(reference.title)
    info = sum(weight(s) for s in set(short))
    if not surname or info <= 0:
        return []
    scored: list[tuple[float, float, float, float, TitleCandidate]] = []
    for candidate in _reference_candidates(reference, surname, lookup, weight):
        if candidate.arxiv_id in exclude:
            continue
        title = stems_of_title(candidate.title)
        _, credits = word_credits(short, title, weight)
        got: dict[str, float] = {}
        for _, stem, credit in credits:
            got[stem] = max(got.get(stem, 0.0), credit)
        found = sum(got.values())
        if found <= 0:
            continue
        title_info = sum(weight(s) for s in set(title)) or 1.0
        flipped = [(i, s, c) for i, s, c in credits]
        scored.append(
            (found / info, found, found / title_info, in_order(title, flipped), candidate)
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
            "late": float(is_late(published, candidate)),
            "short": float(content <= 2),
        }
        results.append(
            ScoredMatch(
                candidate.arxiv_id,
                "surname-title",
                unless_late(reference_model.probability(features), features),
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
    weight: Weights | None = None,
) -> Mention | None:
    """The paper a "Surname: short title" reference names, when one clearly fits."""
    scored = score_reference(reference, lookup, published=published, weight=weight)
    if not scored or scored[0].probability < bar:
        return None
    return scored[0].mention()
