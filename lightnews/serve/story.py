"""The story page as people read it: who wrote it, who discusses it, how sure each link is.

The store gives a paper with its records and mentions, each mention with the
linker's method and confidence. People are shown words ("linked by title,
likely"); the method and the number stay in a tooltip and in the JSON. Posts
of one thread are one entry (a thread is one unit, as on the scholar page),
and every Daily Papers listing carries its upvotes and comments, shown as
unknown when the source did not give them (never as 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lightnews.serve.cards import CardAuthor
from lightnews.sources import kind_traits
from lightnews.store.views import PaperMention, PaperPage

__all__ = [
    "KIND_LABELS",
    "MENTIONS_SHOWN",
    "MentionEntry",
    "MentionGroup",
    "confidence_words",
    "story_authors",
    "story_groups",
]

#: Entries of one kind the story page lists before "show all".
MENTIONS_SHOWN = 20

KIND_LABELS = {
    "paper": "arXiv record",
    "article": "Blog posts",
    "post": "Posts",
    "repost": "Reposts",
    "note": "Notes",
    "daily": "Daily Papers",
}

#: How the linker found a mention, in words ("linked by ..."); unknown methods say "linked".
_BY = {
    "arxiv-url": "by its arXiv link",
    "hf-url": "by its Hugging Face link",
    "doi": "by its DOI",
    "arxiv-id": "by its arXiv id",
    "bare-id": "by a bare arXiv number",
    "exact-title": "by its exact title",
    "fuzzy-title": "by title",
    "surname-title": "by title",
    "title": "by title",
    "slug": "by a link's name",
    "reference": "as a cited reference",
}


def confidence_words(method: str, confidence: float) -> str:
    """``linked by title, likely``: how a mention was found and how sure it is, for people."""
    if method == "listed":
        return "listed there"
    if confidence >= 0.99:
        sure = "certain"
    elif confidence >= 0.9:
        sure = "very likely"
    elif confidence >= 0.7:
        sure = "likely"
    else:
        sure = "possible"
    by = _BY.get(method)
    return f"linked {by}, {sure}" if by else f"linked, {sure}"


@dataclass(frozen=True, slots=True)
class MentionEntry:
    """One entry of a group: a mention, or the posts of one thread (first post first)."""

    mentions: tuple[PaperMention, ...]
    words: str
    #: The method and confidence behind ``words`` (the tooltip).
    detail: str
    #: For a listing: upvotes and comments when the source gave them, else None (unknown).
    upvotes: int | None = None
    comments: int | None = None

    @property
    def first(self) -> PaperMention:
        return self.mentions[0]


@dataclass(frozen=True, slots=True)
class MentionGroup:
    kind: str
    label: str
    #: The newest, when the group is longer than the page lists.
    entries: tuple[MentionEntry, ...]
    #: Entries in all.
    total: int = 0

    @property
    def hidden(self) -> int:
        """Entries the page leaves out (older ones)."""
        return max(self.total - len(self.entries), 0)


def story_authors(
    paper: PaperPage, followed: Mapping[int, str], bar: float
) -> tuple[CardAuthor, ...]:
    """Every author; those attributed to a scholar (above ``bar``) link to the scholar's page."""
    return tuple(
        CardAuthor(a.name, a.scholar_id, a.scholar_id in followed)
        if a.scholar_id is not None and (a.confidence or 0.0) >= bar
        else CardAuthor(a.name)
        for a in paper.authorships
    )


def _entry(mentions: list[PaperMention]) -> MentionEntry:
    surest = max(mentions, key=lambda m: m.confidence)
    detail = f"{surest.method} {surest.confidence:.2f}"
    return MentionEntry(tuple(mentions), confidence_words(surest.method, surest.confidence), detail)


def _listed(paper: PaperPage, kind: str, source: str, url: str | None) -> PaperMention:
    return PaperMention(
        item_id=None,
        kind=kind,
        source_kind="",
        source=source,
        url=url,
        author=None,
        account=None,
        scholar=None,
        title=source,
        published=None,
        text="",
        method="listed",
        confidence=1.0,
        evidence="",
    )


def story_groups(paper: PaperPage, shown: int | None = None) -> list[MentionGroup]:
    """Mentions by kind (posts of one thread together), newest first, then where the paper
    was listed; ``shown``: at most this many entries of a kind (a popular paper's posts are
    hundreds, and the conversation above pages them)."""
    grouped: dict[str, list[MentionEntry]] = {}
    threads: dict[tuple[str, str], list[PaperMention]] = {}
    for mention in paper.mentions:
        if mention.kind == "post" and mention.thread:
            threads.setdefault((mention.kind, mention.thread), []).append(mention)
        else:
            grouped.setdefault(mention.kind, []).append(_entry([mention]))
    for (kind, _), posts in threads.items():
        posts.sort(key=lambda m: m.published or "")  # the thread in reading order
        grouped.setdefault(kind, []).append(_entry(posts))
    arxiv = [r for r in paper.records if not kind_traits(r.source_kind).daily_papers]
    if arxiv:  # one entry for arXiv, however many listings carried it
        names = ", ".join(dict.fromkeys(r.source for r in arxiv))
        grouped["paper"] = [
            MentionEntry(
                (_listed(paper, "paper", "arXiv", arxiv[0].url),),
                "listed there",
                f"listed in {names}",
            )
        ]
    for record in paper.records:
        if not kind_traits(record.source_kind).daily_papers:
            continue
        grouped.setdefault("daily", []).append(
            MentionEntry(
                (_listed(paper, "daily", record.source, record.url),),
                "listed there",
                f"listed 1.00 ({record.source_kind})",
                upvotes=record.engagement.get("upvotes"),
                comments=record.engagement.get("comments"),
            )
        )
    order = ["post", "repost", "article", "note", "daily", "paper"]
    kinds = sorted(grouped, key=lambda k: order.index(k) if k in order else len(order))
    groups = []
    for kind in kinds:
        entries = sorted(grouped[kind], key=_newest, reverse=True)  # threads among lone posts
        listed = entries[:shown] if shown is not None else entries
        groups.append(MentionGroup(kind, KIND_LABELS.get(kind, kind), tuple(listed), len(entries)))
    return groups


def _newest(entry: MentionEntry) -> str:
    return max((m.published or "" for m in entry.mentions), default="")
