"""A scholar's page: the profile, their posts with threads as units, their papers.

Two halves, like the product's scholar tabs: what the scholar *posts*
(pinned first, then newest; self-threads as one unit in order, reposts with
who reposted, counts, every link in full and the papers they point to) and
what the scholar *wrote* (publications attributed above the confidence bar,
newest first, paged, with "at least N records").
"""

from __future__ import annotations

import math
from typing import Any

from lightnews.link.threads import Thread, assemble_threads
from lightnews.model import Item
from lightnews.store import SQLiteStore

__all__ = ["scholar_page"]

MAX_POSTS = 400


def _post(item: Item | None, unit: Thread, position: int, pinned_key: str | None,
          missing: str | None) -> dict[str, Any]:
    root = unit.root if unit.size > 1 else (item.thread_root if item else None)
    if item is None:
        return {"gap": True, "uri": missing, "thread_root": root, "position": position,
                "thread_size": unit.size, "text": "", "links": [], "papers": []}
    counts = item.engagement
    reposter = item.extra.get("reposted_by")
    return {
        "gap": False,
        "uri": item.extra.get("uri", item.key),
        "url": item.url,
        "kind": item.kind,
        "author": item.author,
        "handle": item.extra.get("handle"),
        "text": item.text,
        "created_at": item.published,
        "pinned": bool(item.extra.get("pinned")) or item.key == pinned_key,
        "reposted_by": reposter or None,
        "thread_root": root,
        "position": position,
        "thread_size": unit.size,
        "reply_count": counts.get("replies", 0),
        "repost_count": counts.get("reposts", 0),
        "like_count": counts.get("likes", 0),
        "quote_count": counts.get("quotes", 0),
        "links": item.links,
        "card": item.extra.get("card"),
        "quote": item.extra.get("quote"),
        "papers": [m.arxiv_id for m in item.mentions],
    }


def _posts(store: SQLiteStore, did: str, pinned_key: str | None) -> list[dict[str, Any]]:
    items = store.account_items([did], limit=MAX_POSTS)
    units = assemble_threads(items)
    pinned = [u for u in units if any(
        i.key == pinned_key or i.extra.get("pinned") for i in u.items if i.kind == "post")]
    ordered = pinned[:1] + [u for u in units if u not in pinned[:1]]
    posts = []
    for unit in ordered:
        gaps = iter(unit.gaps)
        for position, entry in enumerate(unit.entries, start=1):
            missing = next(gaps, None) if entry is None else None
            posts.append(_post(entry, unit, position, pinned_key, missing))
    return posts


def scholar_page(
    store: SQLiteStore, who: str, *, page: int = 1, per_page: int = 20, bar: float = 0.6
) -> dict[str, Any]:
    """Everything a scholar's page shows (raises NotFound for an unknown scholar)."""
    scholar_id = store.find_scholar(who)
    scholar = store.get_scholar(scholar_id)
    dids = [i["value"] for i in scholar["identities"] if i["kind"] == "bluesky-did"]
    account = store.get_account("bluesky", dids[0]) if dids else None
    profile = None
    posts: list[dict[str, Any]] = []
    if account is not None:
        profile = {
            "name": account["name"] or account["handle"],
            "handle": account["handle"],
            "did": account["id"],
            "description": account["description"],
            "avatar": account["avatar"],
            "followers": account["followers"],
            "following": account["following"],
            "posts": account["posts"],
            "bot": bool(account["bot"]),
            "bot_reason": account["bot_reason"],
        }
        posts = _posts(store, account["id"], account["pinned"])
    page = max(page, 1)
    total, rows = store.scholar_papers(scholar_id, bar, per_page, (page - 1) * per_page)
    papers = [
        {
            "arxiv_id": r["arxiv_id"],
            "title": r["title"],
            "year": int(r["published"][:4]) if r["published"] else None,
            "primary_category": r["primary_category"],
            "categories": r["categories"].split(),
            "abstract": r["abstract"],
            "url": f"https://arxiv.org/abs/{r['arxiv_id']}",
            "confidence": r["confidence"],
            "name_as_written": r["name_as_written"],
            "withdrawn": bool(r["withdrawn"]),
        }
        for r in rows
    ]
    return {
        "scholar": scholar,
        "profile": profile,
        "posts": posts,
        "papers": papers,
        "records_at_least": total,
        "page": page,
        "per_page": per_page,
        "pages": max(1, math.ceil(total / per_page)),
    }
