"""Whom to follow: accounts the reader might follow, each with its reasons and a Follow button."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from lightnews.serve.site import Site, reader_of

__all__ = ["suggestions"]


def suggestions(site: Site, request: Request) -> Response:
    """Accounts the reader might follow, each with its reasons and a Follow button."""
    from lightnews.rank.suggest import follow_suggestions

    found = follow_suggestions(
        site.store, reader_of(request), limit=50, bar=site.current_settings().attribution_bar
    )
    return site.respond(
        request,
        lambda: {"suggestions": [s.to_json() for s in found]},
        lambda: site.page("suggestions.html", suggestions=found, title="Whom to follow"),
    )
