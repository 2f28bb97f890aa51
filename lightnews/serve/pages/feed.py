"""The home page: the reader's ranked feed, as HTML, JSON, Atom and JSON Feed.

Each story says why it is there. The story just marked read or "not
interested" stays where it was, once, with an undo (the way back from
``/mark`` names it); it is gone on the next visit. The follow form lives on
this page, so a follow that cannot be done (``pages/follow.py``) draws it
again with what was typed and what is wrong.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from lightnews.deliver.export import FeedEntry
from lightnews.errors import UsageError
from lightnews.rank import FEED_VIEWS, Story, rank_stories
from lightnews.serve.cards import Card, build_cards
from lightnews.serve.owned import reader_states
from lightnews.serve.site import Site, feed_links, own_state, reader_of
from lightnews.store.views import Mutes

__all__ = ["feed_cards", "home"]

TITLE = "Lightnews: your feed"


def home(site: Site, request: Request, status: int = 200, **form: Any) -> Response:
    """The feed; ``form`` keeps what was typed in the follow form, with its error."""
    reader = reader_of(request)
    s = site.reader_settings(reader)
    view = request.query_params.get("view", FEED_VIEWS[0])
    if view not in FEED_VIEWS:
        return site.failure(
            request, UsageError(f"view must be {' or '.join(FEED_VIEWS)}, got {view[:40]!r}")
        )
    marked = request.query_params.get("marked", "")[:64]
    stories = rank_stories(
        site.store,
        reader,
        limit=50,
        half_life_hours=s.half_life_hours,
        bar=s.attribution_bar,
        settings=s,
        windows=site.windows,
        papers_only=view == "papers",
        own_state=own_state(request),
        keep_read=frozenset({marked} if marked else ()),
    )

    def entries() -> list[FeedEntry]:
        return [
            FeedEntry(
                f"{request.base_url}paper/{c.arxiv_id}" if c.arxiv_id else c.key,
                c.title,
                f"https://arxiv.org/abs/{c.arxiv_id}" if c.arxiv_id else c.href,
                c.time,
                c.summary,
                [a.name for a in c.authors],
                [r.text for r in c.reasons],
            )
            for c in feed_cards(site, stories, request)
        ]

    def html() -> Response:
        cards = feed_cards(site, stories, request)
        return _page(site, request, cards, status, view=view, marked=marked, follow=form)

    return site.respond(
        request, lambda: [story.to_json() for story in stories], html, feed=(TITLE, entries)
    )


def _page(
    site: Site,
    request: Request,
    cards: list[Card],
    status: int,
    *,
    view: str,
    marked: str,
    follow: dict[str, Any],
) -> Response:
    """The feed's page: its cards, the reader's follows and mutes, the follow form."""
    store = site.store
    reader = reader_of(request)
    own = own_state(request)  # a public read-only page: no one's follows or mutes
    scholars = store.followed_scholars(reader) if own else []
    muted = store.mutes(reader) if own else Mutes()
    names = store.scholar_names(int(v) for v in muted.scholar)
    titles = (
        {str(r.id): r.title or r.address for r in store.list_sources() if str(r.id) in muted.source}
        if muted.source
        else {}
    )
    mutes = (
        [("keyword", v, v) for v in sorted(muted.keyword)]
        + [("scholar", v, names.get(int(v), v)) for v in sorted(muted.scholar)]
        + [("source", v, titles.get(v, v)) for v in sorted(muted.source)]
    )
    hidden = {
        c.key
        for c in cards
        if c.key == marked
        and c.arxiv_id
        and (store.paper_feedback(reader).get(store.paper_row_id(c.key) or 0) == "not-interested")
    }
    return site.page(
        "home.html",
        status,
        cards=cards,
        scholars=scholars,
        mutes=mutes,
        title="Your feed",
        follow=follow,
        view=view,
        marked=marked,
        hidden=hidden,
        feeds=feed_links(request, TITLE),
    )


def feed_cards(site: Site, stories: list[Story], request: Request) -> list[Card]:
    """The stories as the cards a page shows, with the reader's follows and states."""
    reader = reader_of(request)
    followed = {r.id: r.name for r in site.store.followed_scholars(reader)}
    states = reader_states(site.store, reader) if own_state(request) else {}
    return build_cards(
        site.store,
        stories,
        followed=followed,
        states=states,
        bar=site.current_settings().attribution_bar,
    )
