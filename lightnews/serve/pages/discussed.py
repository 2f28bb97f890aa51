"""Discussed now: papers the network discusses, each saying who and how many (``?since=24h``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from lightnews.errors import LightnewsError
from lightnews.normalize import validate
from lightnews.serve.site import Site, reader_of

__all__ = ["discussed"]

#: The periods the page offers, as ``(since, label)``.
PERIODS = [("6h", "6 hours"), ("24h", "24 hours"), ("7d", "7 days"), ("30d", "30 days")]


def discussed(site: Site, request: Request) -> Response:
    """Papers the network discusses now, each saying who and how many (``?since=24h``)."""
    from lightnews.rank.discussed import discussed_papers

    period = request.query_params.get("since", "24h").strip() or "24h"
    try:
        since = validate.moment(period, site.current_settings().now())
        weight = float(site.current_settings().discussed_bot_weight)
        entries = discussed_papers(
            site.store, reader_of(request), since, limit=50, bot_weight=weight
        )
    except LightnewsError as error:
        return site.failure(request, error)
    return site.respond(
        request,
        lambda: {"since": since.isoformat(), "papers": [e.to_json() for e in entries]},
        lambda: site.page(
            "discussed.html",
            entries=entries,
            since=since.isoformat(),
            period=period,
            periods=PERIODS,
            listening=bool(site.store.network_paper_posts(1)),
            title="Discussed now",
        ),
    )
