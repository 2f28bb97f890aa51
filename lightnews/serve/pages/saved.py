"""The saved list, newest saved first: as HTML, JSON, feeds, and exported as BibTeX or JSON.

``?format=bibtex`` and ``?format=json`` download it (a file to keep);
``/api/saved`` answers the same JSON.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from lightnews.deliver.export import FeedEntry, bibtex
from lightnews.errors import NotFound
from lightnews.normalize.times import utc_now
from lightnews.rank import Reason, Story, reason
from lightnews.serve.cards import relative_time
from lightnews.serve.owned import reader_states, saved_keys
from lightnews.serve.pages.feed import feed_cards
from lightnews.serve.site import JsonAnswer, Site, feed_links, own_state, reader_of, wants_json
from lightnews.store.views import PaperPage

__all__ = ["saved"]

TITLE = "Lightnews: saved"


def saved(site: Site, request: Request) -> Response:
    """The saved list, newest saved first; ``?format=bibtex`` or ``json`` export it."""
    stories, papers = _saved_stories(site, request)
    fmt = request.query_params.get("format")
    if fmt == "bibtex":
        return Response(
            bibtex(papers),
            media_type="application/x-bibtex",
            headers={"content-disposition": 'attachment; filename="lightnews-saved.bib"'},
        )
    cards = feed_cards(site, stories, request)
    if fmt == "json" and not wants_json(request):  # the same JSON, as a file to keep
        return JsonAnswer(
            {"saved": [c.to_json() for c in cards]},
            headers={"content-disposition": 'attachment; filename="lightnews-saved.json"'},
        )
    return site.respond(
        request,
        lambda: {"saved": [c.to_json() for c in cards]},
        lambda: site.page(
            "saved.html", cards=cards, title="Saved", feeds=feed_links(request, TITLE)
        ),
        feed=(
            TITLE,
            lambda: [
                FeedEntry(
                    c.href or c.key, c.title, c.href, c.time, c.summary, [a.name for a in c.authors]
                )
                for c in cards
            ],
        ),
    )


def _saved_stories(site: Site, request: Request) -> tuple[list[Story], list[PaperPage]]:
    """The reader's saved stories, and the papers among them (none on a public page)."""
    stories: list[Story] = []
    papers = []
    reader = reader_of(request)
    states = reader_states(site.store, reader)
    for key in saved_keys(site.store, reader) if own_state(request) else []:
        at = states[key][1] or ""
        try:
            if key.startswith("item:"):
                item = site.store.get_item(int(key.removeprefix("item:")))
                stories.append(
                    Story(
                        key=key,
                        title=item.title,
                        time=item.published or "",
                        url=item.url,
                        reasons=[saved_reason(at)],
                    )
                )
                continue
            paper = site.store.get_paper(key)
        except (NotFound, ValueError):
            continue  # its paper or item was removed since
        papers.append(paper)
        stories.append(
            Story(
                key=key,
                title=paper.title,
                time=paper.published or "",
                arxiv_id=paper.arxiv_id,
                category=paper.primary_category,
                url=f"https://arxiv.org/abs/{paper.arxiv_id}",
                reasons=[saved_reason(at)],
            )
        )
    return stories, papers


def saved_reason(at: str) -> Reason:
    return reason("saved " + relative_time(at, utc_now()) if at else "saved")
