"""Feed cards: what a researcher scans a feed entry for, gathered once for every surface.

A ranked :class:`~lightnews.rank.Story` knows why it is there; a card adds
what the reader decides with: the authors (the followed ones marked and
linked to their scholar pages), a summary that opens to the abstract, when
it happened (relatively and exactly), badges for code, Daily Papers and
revised versions, and whether the reader saved or read it. The web feed,
the saved list and the feed's Atom and JSON Feed are built from cards.

Titles are shown with their TeX rendered as text. Time words are a pure
function of two moments, so pages and tests agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lightnews.normalize.tex import tex_to_text
from lightnews.normalize.times import utc_now
from lightnews.rank import Reason, Story
from lightnews.store import Store
from lightnews.store.views import CardPaper, PaperAuthorship

__all__ = [
    "AUTHORS_SHOWN",
    "Badge",
    "Card",
    "CardAuthor",
    "absolute_time",
    "build_cards",
    "card_authors",
    "relative_time",
]

#: Authors named on a card before "and N more" (followed ones are always named).
AUTHORS_SHOWN = 6


@dataclass(frozen=True, slots=True)
class CardAuthor:
    """An author as a card shows them: a followed scholar is marked and linked."""

    name: str
    scholar_id: int | None = None
    followed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "scholar_id": self.scholar_id, "followed": self.followed}


@dataclass(frozen=True, slots=True)
class Badge:
    """A short label with where it leads: ``code``, ``Daily Papers · 87``, ``v2``."""

    kind: str
    label: str
    href: str | None = None
    title: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "href": self.href}


@dataclass(frozen=True, slots=True)
class Card:
    """One feed entry as the reader sees it."""

    key: str
    title: str
    href: str | None
    arxiv_id: str | None
    category: str | None
    time: str
    authors: tuple[CardAuthor, ...]
    more_authors: int
    summary: str
    badges: tuple[Badge, ...]
    reasons: tuple[Reason, ...]
    saved: bool = False
    read: bool = False
    #: The feed's score (reasons' points, decayed with age); None where nothing ranked it.
    score: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "url": self.href,
            "arxiv_id": self.arxiv_id,
            "category": self.category,
            "time": self.time,
            "authors": [a.to_json() for a in self.authors],
            "more_authors": self.more_authors,
            "summary": self.summary,
            "badges": [b.to_json() for b in self.badges],
            "reasons": [r.to_json() for r in self.reasons],
            "saved": self.saved,
            "read": self.read,
            "score": None if self.score is None else round(self.score, 4),
        }


def card_authors(
    authorships: Iterable[PaperAuthorship], followed: Mapping[int, str], bar: float
) -> tuple[tuple[CardAuthor, ...], int]:
    """The authors to name and how many more there are; followed ones always named."""
    every = [
        CardAuthor(a.name, a.scholar_id, True)
        if a.scholar_id in followed and (a.confidence or 0.0) >= bar
        else CardAuthor(a.name)
        for a in authorships
    ]
    shown = [a for n, a in enumerate(every) if n < AUTHORS_SHOWN or a.followed]
    return tuple(shown), len(every) - len(shown)


def _badges(story: Story, paper: CardPaper | None) -> tuple[Badge, ...]:
    badges = []
    if paper is not None and paper.code:
        badges.append(Badge("code", "code", paper.code[0], "Code for this paper"))
    daily = [i for i in story.items if i.kind == "daily"]
    if daily:
        counts = [n for i in daily if (n := i.engagement.get("upvotes")) is not None]
        upvotes = max(counts) if counts else None  # unknown is not 0
        label, title = "Daily Papers", "On Hugging Face Daily Papers"
        if upvotes is not None:
            label, title = f"{label} · {upvotes}▲", f"{title}, {upvotes} upvotes"
        badges.append(Badge("daily", label, daily[0].url, title))
    if paper is not None and (paper.latest_version or 1) > 1:
        last = paper.last_version_date
        when = f", {absolute_time(last)}" if last else ""
        badges.append(
            Badge(
                "version",
                f"v{paper.latest_version}",
                f"https://arxiv.org/abs/{paper.arxiv_id}",
                f"Revised: version {paper.latest_version}{when}",
            )
        )
    if paper is not None and paper.withdrawn:
        badges.append(Badge("withdrawn", "withdrawn", None, "The authors withdrew it"))
    if paper is not None and paper.stub:
        badges.append(
            Badge(
                "stub",
                "stub",
                None,
                "Known from what mentions it; its metadata is fetched on the next refresh",
            )
        )
    return tuple(badges)


def build_cards(
    store: Store,
    stories: Iterable[Story],
    *,
    followed: Mapping[int, str],
    states: Mapping[str, tuple[str | None, str | None]],
    bar: float,
) -> list[Card]:
    """Cards for ``stories``: their papers and texts read at once (a few queries a page)."""
    stories = list(stories)
    papers = store.card_papers([s.arxiv_id for s in stories if s.arxiv_id])
    untitled = [s.arxiv_id for s in stories if s.arxiv_id and not s.title.strip()]
    link_cards = store.paper_cards(untitled) if untitled else {}  # what a stub is, meanwhile
    texts = store.item_texts(
        [s.items[0].id for s in stories if s.items and (s.arxiv_id or "") not in papers]
    )
    cards = []
    for story in stories:
        paper = papers.get(story.arxiv_id) if story.arxiv_id else None
        summary = ""
        authors: tuple[CardAuthor, ...] = ()
        more = 0
        if paper is not None:
            authors, more = card_authors(paper.authorships, followed, bar)
            summary = tex_to_text(paper.abstract)
        elif story.items:
            text = texts.get(story.items[0].id, "")
            summary = text if text and text.rstrip("…") != story.title.rstrip("…") else ""
            author = story.items[0].author
            authors = (CardAuthor(author),) if author else ()
        read_at, saved_at = states.get(story.key, (None, None))
        href = f"/paper/{story.arxiv_id}" if story.arxiv_id else story.url
        title = tex_to_text(story.title)
        if not title.strip():  # never empty: a stub's link card, else its id
            found = link_cards.get(story.arxiv_id or "")
            title = (
                found.title
                if found
                else f"arXiv:{story.arxiv_id}"
                if story.arxiv_id
                else (story.url or story.key)
            )
        cards.append(
            Card(
                key=story.key,
                title=title,
                href=href,
                arxiv_id=story.arxiv_id,
                category=story.category,
                time=story.time or "",
                authors=authors,
                more_authors=more,
                summary=summary,
                badges=_badges(story, paper),
                reasons=tuple(story.reasons),
                saved=saved_at is not None,
                read=read_at is not None,
                score=story.score,
            )
        )
    return cards


def _moment(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def relative_time(value: str | None, now: datetime) -> str:
    """``just now``, ``5 minutes ago``, ``3 hours ago``, ``2 days ago``, ``1 year ago``.

    ``now`` is the library's now (its ``clock`` setting, else the real clock); a
    moment after it, yet past, is the reader's own doing in a library whose clock
    stands still (a save in the demo), and is told against the real clock.
    """
    moment = _moment(value)
    if moment is None:
        return ""
    if moment > now:
        now = max(now, utc_now())
    seconds = (now - moment).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    for size, unit in (
        (31_536_000, "year"),
        (2_592_000, "month"),
        (604_800, "week"),
        (86_400, "day"),
        (3_600, "hour"),
        (60, "minute"),
    ):
        if seconds >= size:
            count = int(seconds // size)
            words = f"{count} {unit}{'s' if count != 1 else ''}"
            return f"in {words}" if future else f"{words} ago"
    return "just now"


def absolute_time(value: str | None) -> str:
    """``2025-11-27 19:20 UTC`` (a date alone when the source gave only a date)."""
    moment = _moment(value)
    if moment is None:
        return value or ""
    if len(value or "") <= 10:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%d %H:%M UTC")
