"""Rank: a story, the feed's entry, and the reasons it carries.

A story is a paper with everything that records or mentions it, or an item that
mentions no paper; its reasons say why it is in the feed, in words whose parts
link to what they name. Gathering stories (:mod:`.candidates`) and scoring them
(:mod:`lightnews.rank`) both read and write these, so they live apart from both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lightnews.rank.category_slice import Pick
from lightnews.store.views import FeedCandidate

__all__ = ["Part", "Reason", "Story", "display_name", "reason"]


@dataclass(frozen=True, slots=True)
class Part:
    """Words of a reason; ``href`` when they name something with a page (site path or URL)."""

    text: str
    href: str | None = None


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a story is in the feed: words in parts (some linked) and the points they brought."""

    parts: tuple[Part, ...]
    weight: float = 0.0

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts)

    def to_json(self) -> dict[str, Any]:
        links = [{"text": p.text, "href": p.href} for p in self.parts if p.href]
        return {"text": self.text, "weight": round(self.weight, 4), "links": links}


def reason(*parts: str | Part | list[Part], weight: float = 0.0) -> Reason:
    """A reason from words, linked parts and lists of linked parts (joined "A, B and C")."""
    flat: list[Part] = []
    for part in parts:
        if isinstance(part, str):
            flat.append(Part(part))
        elif isinstance(part, Part):
            flat.append(part)
        else:
            flat.extend(_joined(part))
    return Reason(tuple(flat), weight)


def _joined(names: list[Part]) -> list[Part]:
    """``A``, ``A and B``, ``A, B and C``."""
    out: list[Part] = []
    for n, name in enumerate(names):
        if n:
            out.append(Part(" and " if n == len(names) - 1 else ", "))
        out.append(name)
    return out


def display_name(author: str | None, fallback: str = "") -> str:
    """A display name from an item's author: ``mail@host (Name)`` gives Name."""
    text = (author or "").strip()
    found = re.search(r"\(([^()]+)\)\s*$", text)
    if found:
        return found.group(1).strip()
    return text if text and "@" not in text else fallback


@dataclass(slots=True)
class Story:
    """One entry of the feed: a paper and its items, or a lone item."""

    key: str
    title: str
    time: str
    arxiv_id: str | None = None
    url: str | None = None
    category: str | None = None
    items: list[FeedCandidate] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)
    score: float = 0.0
    #: Where the paper was accepted or published ("accepted at ICLR 2025"), if it says.
    venue: str | None = None
    #: The paper was withdrawn by its authors (every surface says so).
    withdrawn: bool = False
    #: Its newest version's change ("v3: abstract changed") and when it was stored.
    revision: str | None = None
    revised_at: str | None = None
    #: When the paper first appeared, and when code for it appeared after that.
    published: str | None = None
    code_released: str | None = None
    #: Brought by the reader's slice of their followed categories (:mod:`.category_slice`).
    pick: Pick | None = None
    #: In the shared window only for being new: a paper no item but its arXiv listing is
    #: about, not revised, no code since, not discussed network-wide.
    only_new: bool = False

    @property
    def why(self) -> list[str]:
        """The reasons' words, most weighty first."""
        return [r.text for r in self.reasons]

    def to_json(self, items: int = 10) -> dict[str, Any]:
        """The entry, with its newest ``items`` items (the story page has them all)."""
        data: dict[str, Any] = {"arxiv_id": self.arxiv_id} if self.arxiv_id else {"item": self.key}
        newest = sorted(self.items, key=lambda i: i.time or "", reverse=True)[:items]
        data.update(
            title=self.title,
            score=round(self.score, 4),
            why=self.why,
            reasons=[r.to_json() for r in self.reasons],
            time=self.time,
            url=self.url,
            items_total=len(self.items),
            venue=self.venue,
            withdrawn=self.withdrawn,
            revision=self.revision,
            code_released=self.code_released,
            items=[
                {"kind": i.kind, "source": i.source, "title": i.title, "url": i.url, "time": i.time}
                for i in newest
            ],
        )
        return data
