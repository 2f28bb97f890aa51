"""Daily papers: one day's papers with their upvotes (the newest day by default).

``/daily/DAY`` is a day's own address; ``?day=`` (the day picker's form) goes
there. Each paper shows its authors as the feed does, followed ones marked.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.errors import NotFound, UsageError
from lightnews.normalize import validate
from lightnews.serve.cards import CardAuthor, card_authors
from lightnews.serve.site import Site, reader_of, wants_json
from lightnews.store.views import ItemView

__all__ = ["daily"]


def daily(site: Site, request: Request) -> Response:
    """Daily papers of one day with their upvotes (the newest day by default)."""
    asked = request.path_params.get("day")
    picked = request.query_params.get("day")
    try:
        if picked is not None and asked is None:
            day = validate.day(picked.strip())
            base = "/api/daily/" if wants_json(request) else "/daily/"
            return RedirectResponse(f"{base}{day}", status_code=303)
        if asked is not None:
            validate.day(asked)
    except UsageError as error:
        return site.failure(request, error)
    days = site.store.daily_days()
    day = asked or (days[0] if days else "")
    entries = site.store.daily_items(day) if day else []
    return site.respond(
        request,
        lambda: {"day": day, "days": days, "papers": [e.to_json() for e in entries]},
        lambda: _page(site, request, day, days, entries),
    )


def _page(
    site: Site, request: Request, day: str, days: list[str], entries: list[ItemView]
) -> Response:
    followed = {r.id: r.name for r in site.store.followed_scholars(reader_of(request))}
    bar = site.current_settings().attribution_bar
    authors: dict[int, tuple[tuple[CardAuthor, ...], int]] = {}
    for entry in entries:
        if entry.record_of:
            try:
                paper = site.store.get_paper(entry.record_of)
            except NotFound:
                continue
            authors[entry.id] = card_authors(paper.authorships, followed, bar)
    older = next((d for d in days if d < day), None)
    newer = next((d for d in reversed(days) if d > day), None)
    return site.page(
        "daily.html",
        day=day,
        days=days,
        entries=entries,
        authors=authors,
        older=older,
        newer=newer,
        title=f"Daily papers {day}",
    )
