"""Attribution: which paper authors are which scholar, and how sure we are.

arXiv authors are strings: "Sepp Hochreiter", "S. Hochreiter", "Hochreiter,
S.", "J\\"urgen" or "Jurgen". A scholar is followed under one or more name
variants. An authorship is attributed to the scholar with a confidence built
from evidence, in two passes:

1. *names*: the surname must match (the store only offers such candidates);
   given names are compared token by token (full names, initials, hyphenated
   and middle names; a clash rules the candidate out). An initial alone is weak
   evidence when many different people share the surname in the library.
2. *context*: the papers that pass 1 attributes surely (a full given name, or
   a user's confirmation) teach who the scholar writes with, in which subjects
   and when; each candidate then gains from shared co-authors and subjects and
   loses when it is far from the scholar's subjects or years.

A user's confirm (1.0) or reject (never attributed) overrides everything and
is stored apart, so it outlives every re-ingest and re-attribution. The pure
scoring is :func:`score_candidates`; :func:`attribute_scholar` reads and
writes through the store.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from lightnews.normalize.names import fold

if TYPE_CHECKING:
    from lightnews.store import Store
    from lightnews.store.views import AuthorshipCandidate

__all__ = [
    "Candidate",
    "Evidence",
    "NameParts",
    "attribute_all",
    "attribute_new",
    "attribute_scholar",
    "decide_attribution",
    "given_name_score",
    "merge_scholars",
    "parse_name",
    "scholar_keys",
    "score_candidates",
    "split_scholar",
]

SURE = 0.85  # pass-1 confidence that teaches context
_PARTICLES = {
    "van",
    "von",
    "der",
    "den",
    "de",
    "del",
    "della",
    "di",
    "da",
    "du",
    "le",
    "la",
    "dos",
    "das",
    "ter",
    "ten",
    "bin",
    "al",
    "el",
    "y",
}


@dataclass(frozen=True, slots=True)
class NameParts:
    """A name folded for comparison: given-name tokens and the surname."""

    given: tuple[str, ...]
    surname: str


def parse_name(name: str, keyname: str | None = None, forenames: str | None = None) -> NameParts:
    """Split a name as written into folded given names and surname.

    >>> parse_name("Hochreiter, S.")
    NameParts(given=('s',), surname='hochreiter')
    >>> parse_name("Jean-Pierre  van der Berg")
    NameParts(given=('jean', 'pierre'), surname='van der berg')
    """
    if keyname:
        return NameParts(tuple(_tokens(forenames or "")), fold(keyname))
    if "," in name:
        surname, _, given = name.partition(",")
        return NameParts(tuple(_tokens(given)), fold(surname))
    words = name.split()
    if not words:
        return NameParts((), "")
    start = len(words) - 1
    while start > 1 and fold(words[start - 1]) in _PARTICLES:
        start -= 1
    return NameParts(tuple(_tokens(" ".join(words[:start]))), fold(" ".join(words[start:])))


def _tokens(given: str) -> list[str]:
    # "J.-P." -> j p ; "Jean-Pierre" -> jean pierre ; "S.J." -> s j
    spaced = re.sub(r"[.\-‐]", " ", given)
    return [t for t in fold(spaced).split() if t]


def _surname_key(surname: str) -> str:
    return surname.split()[-1] if surname else ""


def given_name_score(scholar: NameParts, written: NameParts) -> float:
    """How well the given names as written fit the scholar's (0 = a different person)."""
    if not written.given:
        return 0.45
    if not scholar.given:
        return 0.5
    first_s, first_w = scholar.given[0], written.given[0]
    if len(first_s) > 1 and len(first_w) > 1:
        if first_s == first_w:
            score = 0.9
        elif len(min(first_s, first_w, key=len)) >= 3 and (
            first_s.startswith(first_w) or first_w.startswith(first_s)
        ):
            score = 0.7  # Alex / Alexander
        else:
            return 0.0
    elif first_s[0] == first_w[0]:
        score = 0.65
    else:
        return 0.0
    # Middle names: both present and clashing is a different person.
    for s_tok, w_tok in zip(scholar.given[1:], written.given[1:], strict=False):
        if s_tok[0] != w_tok[0] or (len(s_tok) > 1 and len(w_tok) > 1 and s_tok != w_tok):
            return 0.0
        score += 0.03
    return min(score, 0.95)


@dataclass(slots=True)
class Candidate:
    """One authorship that might be the scholar's."""

    paper_id: int
    position: int
    arxiv_id: str
    name: NameParts
    categories: list[str]
    year: int | None
    coauthors: list[str]

    @classmethod
    def from_row(cls, row: AuthorshipCandidate) -> Candidate:
        published = row.published or ""
        return cls(
            paper_id=row.paper_id,
            position=row.position,
            arxiv_id=row.arxiv_id,
            name=parse_name(row.name, row.keyname, row.forenames),
            categories=(row.categories or "").split(),
            year=int(published[:4]) if published[:4].isdigit() else None,
            coauthors=(row.coauthors or "").split(),
        )


@dataclass(slots=True)
class Evidence:
    """What the surely attributed papers say about the scholar."""

    coauthors: Counter[str] = field(default_factory=Counter)
    categories: Counter[str] = field(default_factory=Counter)
    years: list[int] = field(default_factory=list)
    papers: int = 0

    def learn(self, candidate: Candidate, own_key: str) -> None:
        self.papers += 1
        self.coauthors.update(k for k in set(candidate.coauthors) if k != own_key)
        self.categories.update(candidate.categories)
        if candidate.year:
            self.years.append(candidate.year)


def _context(evidence: Evidence, candidate: Candidate) -> float:
    if evidence.papers == 0:
        return 0.0
    adjust = 0.0
    shared = sum(1 for k in set(candidate.coauthors) if evidence.coauthors[k] > 0)
    adjust += min(0.15 * shared, 0.3)
    if candidate.categories:
        archives = {c.split(".")[0] for c in evidence.categories}
        if candidate.categories[0] in evidence.categories:
            adjust += 0.1
        elif {c.split(".")[0] for c in candidate.categories} & archives:
            adjust += 0.05  # same archive (cond-mat.*), another sub-field
        elif evidence.papers >= 3:
            adjust -= 0.15
    if candidate.year and evidence.years:
        first, last = min(evidence.years), max(evidence.years)
        if candidate.year < first - 12 or candidate.year > last + 12:
            adjust -= 0.2
    return adjust


def score_candidates(
    variants: Sequence[NameParts],
    candidates: Sequence[Candidate],
    decisions: dict[str, str] | None = None,
) -> dict[tuple[int, int], float]:
    """Confidence per ``(paper_id, position)`` for one scholar; rejected ones are left out."""
    decisions = decisions or {}
    keys = {_surname_key(v.surname) for v in variants}
    # How many different people share each surname here: initials are weak when many do.
    first_names: dict[str, set[str]] = {}
    for c in candidates:
        if c.name.given and len(c.name.given[0]) > 1:
            first_names.setdefault(_surname_key(c.name.surname), set()).add(c.name.given[0])

    def name_score(c: Candidate) -> float:
        if _surname_key(c.name.surname) not in keys:
            return 0.0
        best = max((given_name_score(v, c.name) for v in variants), default=0.0)
        crowd = len(first_names.get(_surname_key(c.name.surname), ()))
        if best and best < SURE and crowd >= 5:
            best -= 0.2  # "Y. Wang": an initial says little when many share the surname
        return best

    first = {(c.paper_id, c.position): name_score(c) for c in candidates}
    evidence = Evidence()
    own_key = next(iter(keys), "")
    for c in candidates:
        decided = decisions.get(c.arxiv_id)
        if decided == "confirm" or (decided is None and first[(c.paper_id, c.position)] >= SURE):
            evidence.learn(c, own_key)
    scores: dict[tuple[int, int], float] = {}
    for c in candidates:
        key = (c.paper_id, c.position)
        decided = decisions.get(c.arxiv_id)
        if decided == "reject":
            continue
        if decided == "confirm":
            if first[key] > 0 or not any(
                other.arxiv_id == c.arxiv_id and first[(other.paper_id, other.position)] > 0
                for other in candidates
            ):
                scores[key] = 1.0
            continue
        if first[key] <= 0:
            continue
        scores[key] = round(max(0.0, min(1.0, first[key] + _context(evidence, c))), 3)
    # One paper, one authorship per scholar: keep the best position.
    best: dict[int, tuple[int, float]] = {}
    for (paper_id, position), value in scores.items():
        if paper_id not in best or value > best[paper_id][1]:
            best[paper_id] = (position, value)
    return {(p, pos): v for p, (pos, v) in best.items()}


def name_variants(identities: Iterable[tuple[str, str]], display_name: str) -> list[NameParts]:
    """The names a scholar is matched under: arXiv name identities, else the display name."""
    names = [value for kind, value in identities if kind == "arxiv-name"]
    if not names and display_name:
        names = [display_name]
    return [parse_name(n) for n in names if n.strip()]


def attribute_scholar(store: Store, scholar_id: int) -> int:
    """Recompute one scholar's attributions; returns how many authorships they now have."""
    scholar = store.get_scholar(scholar_id)
    identities = [(i.kind, i.value) for i in scholar.identities]
    variants = name_variants(identities, "")
    if not variants:
        store.set_attributions(scholar_id, [])
        return 0
    keys = sorted({_surname_key(v.surname) for v in variants})
    rows = store.authorship_candidates(keys)
    candidates = [Candidate.from_row(r) for r in rows]
    decisions = store.decisions(scholar_id)
    scores = score_candidates(variants, candidates, decisions)
    # A paper the user confirmed although no author's surname matches (a typo, a
    # transliteration): the author most like the scholar's names is theirs.
    scored_ids = {c.arxiv_id for c in candidates if (c.paper_id, c.position) in scores}
    names = [f"{' '.join(v.given)} {v.surname}" for v in variants]
    for arxiv_id, decision in decisions.items():
        if decision != "confirm" or arxiv_id in scored_ids:
            continue
        paper = store.paper_authorships(arxiv_id)
        if paper:
            best = max(
                paper, key=lambda a: max(fuzz.token_sort_ratio(fold(a.name), n) for n in names)
            )
            scores[(best.paper_id, best.position)] = 1.0
    store.set_attributions(scholar_id, [(p, pos, c) for (p, pos), c in scores.items()])
    return len(scores)


def merge_scholars(store: Store, keep: int, drop: int) -> int:
    """Merge scholar ``drop`` into ``keep`` (one person known twice) and attribute ``keep``
    again; returns how many authorships they now have."""
    store.merge_scholars(keep, drop)
    return attribute_scholar(store, keep)


def split_scholar(
    store: Store, scholar_id: int, identities: Sequence[tuple[str, str]], name: str, now: str
) -> int:
    """Split ``identities`` off a scholar into a new one named ``name`` (two people known as
    one) and attribute both again; returns the new scholar's id."""
    new_id = store.split_scholar(scholar_id, identities, name, now)
    attribute_scholar(store, scholar_id)
    attribute_scholar(store, new_id)
    return new_id


def decide_attribution(
    store: Store, scholar_id: int, arxiv_id: str, decision: str | None, now: str, *, by: str
) -> None:
    """Confirm or reject (``None``: forget) a paper for a scholar, for every reader (kept
    across re-ingests), then attribute the scholar again; the audit log says ``by`` whom."""
    store.get_paper(arxiv_id)
    store.set_decision(scholar_id, arxiv_id, decision, now, by=by)
    store.audit(by, f"attribution.{decision or 'undecide'}", f"#{scholar_id} {arxiv_id}", now)
    attribute_scholar(store, scholar_id)


def attribute_all(store: Store) -> dict[int, int]:
    """Recompute attributions of every scholar followed under an arXiv name."""
    named = sorted({scholar_id for scholar_id, _ in store.identities_of_kind("arxiv-name")})
    return {scholar_id: attribute_scholar(store, scholar_id) for scholar_id in named}


def scholar_keys(store: Store) -> dict[str, set[int]]:
    """The folded surnames (``authorships.name_key``) scholars are matched under, with whose.

    One query over the arXiv-name identities, whatever the size of the library:
    a save's :attr:`~lightnews.store.SaveResult.name_keys` are looked up in it.
    """
    keys: dict[str, set[int]] = {}
    for scholar_id, name in store.identities_of_kind("arxiv-name"):
        key = _surname_key(parse_name(name).surname)
        if key:
            keys.setdefault(key, set()).add(scholar_id)
    return keys


def attribute_new(
    store: Store, name_keys: Iterable[str], keys: dict[str, set[int]] | None = None
) -> dict[int, int]:
    """Attribute again the scholars whose surname is among the authors of new or changed papers.

    ``name_keys`` are what the saves reported (:attr:`SaveResult.name_keys`);
    ``keys`` is :func:`scholar_keys` when the caller has it. Only the scholars
    they name are recomputed, each once (a scholar's context pass needs all of
    their candidates, so a recompute reads the authorships under their surname,
    never the whole library). Returns authorships per recomputed scholar.
    """
    keys = scholar_keys(store) if keys is None else keys
    wanted: set[int] = set()
    for key in name_keys:
        wanted |= keys.get(key, set())
    return {s: attribute_scholar(store, s) for s in sorted(wanted)}
