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

from lightnews.link.threads import assemble_threads, item_uri
from lightnews.model import Item
from lightnews.store import SQLiteStore

__all__ = ["scholar_page"]

MAX_POSTS = 400


def _post(
    item: Item | None,
    unit: list[Item | None],
    root: str | None,
    position: int,
    pinned_key: str | None,
    missing: str | None,
) -> dict[str, Any]:
    size = len(unit)
    if item is None:
        return {"gap": True, "uri": missing, "thread_root": root, "position": position,
                "thread_size": size, "text": "", "links": [], "papers": [], "pinned": False,
                "reposted_by": None, "created_at": None}  # fmt: skip
    counts = item.engagement
    return {
        "gap": False,
        "uri": item_uri(item),
        "url": item.url,
        "kind": item.kind,
        "author": item.author,
        "handle": item.extra.get("handle"),
        "text": item.text,
        "created_at": item.published,
        "pinned": bool(item.extra.get("pinned")) or item.key == pinned_key,
        "reposted_by": item.extra.get("reposted_by") or None,
        "thread_root": root if size > 1 else item.thread_root,
        "position": position,
        "thread_size": size,
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
    """Pinned unit first, then units newest first; a self-thread is one unit in order."""
    items = store.account_items([did], limit=MAX_POSTS)
    threads = assemble_threads(items)
    in_threads = {item_uri(i) for t in threads for i in t.items}
    units: list[tuple[str | None, list[Item | None], list[str]]] = [
        (t.root_key, t.entries, t.gaps) for t in threads
    ]
    units += [(None, [i], []) for i in items if i.kind != "post" or item_uri(i) not in in_threads]

    def latest(unit: tuple[str | None, list[Item | None], list[str]]) -> str:
        times = [(i.extra.get("reposted_at") or i.published or "") for i in unit[1] if i]
        return max(times, default="")

    def pinned(unit: tuple[str | None, list[Item | None], list[str]]) -> bool:
        return any(i.kind == "post" and (i.key == pinned_key or i.extra.get("pinned"))
                   for i in unit[1] if i)  # fmt: skip

    units.sort(key=lambda u: (pinned(u), latest(u)), reverse=True)
    posts = []
    for root, entries, gaps in units:
        missing = iter(gaps)
        # A thread links to everything any of its posts links to.
        links = list(dict.fromkeys(link for e in entries if e for link in e.links))
        papers = list(dict.fromkeys(m.arxiv_id for e in entries if e for m in e.mentions))
        for position, entry in enumerate(entries, start=1):
            gap = next(missing, None) if entry is None else None
            post = _post(entry, entries, root, position, pinned_key, gap)
            post["thread_links"], post["thread_papers"] = links, papers
            posts.append(post)
    return posts


def scholar_page(
    store: SQLiteStore,
    who: str,
    *,
    page: int = 1,
    per_page: int = 20,
    bar: float = 0.6,
    tab: str | None = None,
) -> dict[str, Any]:
    """Everything a scholar's page shows (raises NotFound for an unknown scholar).

    ``tab="papers"`` leaves the posts out (the papers tab does not show them).
    """
    scholar_id = store.find_scholar(who)
    scholar = store.get_scholar(scholar_id)
    keys = [i["value"] for i in scholar["identities"]
            if i["kind"] in ("bluesky-did", "bluesky-handle")]  # fmt: skip
    account = next(
        (a for a in (store.get_account("bluesky", k) for k in keys) if a is not None), None
    )
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
        if tab != "papers":
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
