"""Rank: order stories for the feed.

A story is a paper with everything that records or mentions it; an item that
mentions no paper is a story of its own. For now the order is simply the most
recent activity first (a paper's publication, or the newest item about it);
scholar-weighted ranking with explanations builds on this shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lightnews.store import SQLiteStore

__all__ = ["Story", "newest_stories"]


@dataclass(slots=True)
class Story:
    """One entry of the feed: a paper and its items, or a lone item."""

    key: str
    title: str
    time: str
    arxiv_id: str | None = None
    url: str | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    why: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"arxiv_id": self.arxiv_id} if self.arxiv_id else {"item": self.key}
        data.update(
            title=self.title,
            time=self.time,
            url=self.url,
            why=self.why,
            items=[
                {k: i[k] for k in ("kind", "source", "title", "url", "time")} for i in self.items
            ],
        )
        return data


def newest_stories(store: SQLiteStore, limit: int = 30) -> list[Story]:
    """The ``limit`` stories with the most recent activity, newest first."""
    stories: dict[str, Story] = {}
    for paper in store.recent_papers(limit):
        stories[paper["arxiv_id"]] = Story(
            key=paper["arxiv_id"],
            title=paper["title"],
            time=paper["published"],
            arxiv_id=paper["arxiv_id"],
            url=f"https://arxiv.org/abs/{paper['arxiv_id']}",
            why=[f"new on arXiv ({paper['primary_category']})"]
            if paper["primary_category"]
            else ["new on arXiv"],
        )
    items = store.recent_items(limit * 4)
    wanted = {i["record_of"] for i in items if i["record_of"]}
    for item in items:
        wanted.update((item["mentioned"] or "").split())
    papers = store.papers_by_ids(sorted(wanted - set(stories)))
    for item in items:
        ids = [item["record_of"]] if item["record_of"] else (item["mentioned"] or "").split()
        targets = ids or [f"item:{item['id']}"]
        for key in targets:
            story = stories.get(key)
            if story is None:
                known = papers.get(key)
                title = (known["title"] if known else "") or item["title"] or key
                story = stories[key] = Story(
                    key=key,
                    title=title,
                    time=item["time"],
                    arxiv_id=key if ids else None,
                    url=f"https://arxiv.org/abs/{key}" if ids else item["url"],
                )
            story.items.append(item)
            story.time = max(story.time or "", item["time"] or "")
            if item["kind"] != "paper":
                story.why.append(f"{item['kind']} in {item['source']}")
    ordered = sorted(stories.values(), key=lambda s: s.time or "", reverse=True)
    return ordered[:limit]
