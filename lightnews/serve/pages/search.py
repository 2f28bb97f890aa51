"""The search page: papers and items by words and meaning, with filters, as HTML, JSON and feeds.

Filters (subject, dates, source kind, scholar) are read as typed, checked and
put in canonical form by :func:`search_filters`; a page whose filters cannot
be read says so beside the form as typed (the API answers 400). A start after
the end is no error for the API: nothing can match, and it says so.

Each paper found shows its authors, the part of its abstract holding the query's
words (marked), why it matched (words, meaning or both, and which words) and,
for a reader who keeps their own state, a Save button that acts in place.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from lightnews.deliver.export import FeedEntry
from lightnews.errors import Ambiguous, LightnewsError, PastLastPage, UsageError
from lightnews.model import SearchFilters
from lightnews.normalize import validate
from lightnews.normalize.validate import whole_number
from lightnews.search import SearchResults, search_papers
from lightnews.serve.site import (
    MAX_PAGE,
    PER_PAGE,
    JsonAnswer,
    Site,
    feed_links,
    own_state,
    reader_of,
    wants_json,
)
from lightnews.sources import all_traits

__all__ = ["search", "search_filters"]


def search(site: Site, request: Request) -> Response:
    query = request.query_params.get("q", "").strip()
    try:
        number = whole_number(request.query_params.get("page", "1"), "page", MAX_PAGE)
    except LightnewsError as error:
        return site.failure(request, error)
    params = request.query_params
    typed = SearchFilters(
        subject=params.get("subject", "").strip() or None,
        since=params.get("since", "").strip() or None,
        until=params.get("until", "").strip() or None,
        source_kind=params.get("source_kind", "").strip() or None,
    )
    hits = SearchResults([], "lexical")
    try:
        now = site.current_settings().now()  # "1w" is a week before the library's clock
        if wants_json(request) and _empty_range(typed, now):  # nothing can fall in it
            search_filters(replace(typed, until=None), now)  # the other filters are checked
            note = "the start is after the end: nothing can match"
            return JsonAnswer(
                {"query": query, "page": number, "mode": "lexical", "note": note, "hits": []}
            )
        filters = search_filters(typed, now)
        who = params.get("scholar", "").strip()
        if who:
            filters = replace(filters, scholar_id=site.store.find_scholar(who))
        if query:
            hits = search_papers(
                site.store,
                query,
                limit=PER_PAGE,
                offset=(number - 1) * PER_PAGE,
                filters=filters,
                settings=site.current_settings(),
                items=True,
            )
            if number > 1 and not hits and not hits.items:
                raise PastLastPage(f"page {number} is past the last page of results")
    except Ambiguous as error:
        others = {k: v for k, v in params.items() if k != "scholar"}
        return site.failure(
            request, error, lambda key: f"/search?{urlencode({**others, 'scholar': key})}"
        )
    except UsageError as error:  # the API's 400; the page again, with the form as typed
        status, message = 404 if isinstance(error, PastLastPage) else 400, str(error)
        return site.respond(
            request,
            lambda: {"error": message},
            lambda: site.page(
                "search.html",
                status=status,
                query=query,
                hits=hits,
                page=number,
                more=False,
                filters=typed,
                paging={},
                error=message,
                title="Search: check the filters",
            ),
            status=status,
        )
    except LightnewsError as error:
        return site.failure(request, error)
    title = f"Lightnews search: {query}"

    def entries() -> list[FeedEntry]:
        return [
            FeedEntry(
                f"https://arxiv.org/abs/{h.arxiv_id}",
                h.title,
                f"https://arxiv.org/abs/{h.arxiv_id}",
                h.published,
            )
            for h in hits
        ]

    def html() -> Response:
        own = own_state(request)
        states = site.store.story_states(reader_of(request)) if own and hits else {}
        return site.page(
            "search.html",
            query=query,
            hits=hits,
            can_save=own,
            saved={h.arxiv_id for h in hits if (states.get(h.arxiv_id) or (None, None))[1]},
            here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            page=number,
            more=len(hits) == PER_PAGE or len(hits.items) == PER_PAGE,
            filters=filters,
            paging={k: v for k, v in params.items() if k != "page" and v},
            source_kinds=_search_filter_kinds(),
            title=f"Search: {query}" if query else "Search",
            feeds=feed_links(request, title) if query else [],
        )

    return site.respond(
        request,
        lambda: {
            "query": query,
            "page": number,
            **hits.about(),
            "hits": [h.to_json() for h in hits],
            "items": [i.to_json() for i in hits.items],
        },
        html,
        feed=(title, entries),
    )


def search_filters(typed: SearchFilters, now: datetime) -> SearchFilters:
    """The search's filters as typed, checked and in canonical form (UsageError if not);
    relative dates ("1w") are read against ``now``."""
    since = validate.search_date(typed.since, now) if typed.since else None
    until = validate.search_date(typed.until, now) if typed.until else None
    validate.date_range(since, until)
    kind = typed.source_kind
    if kind:
        from lightnews.sources import registry

        kind = validate.source_kind(kind, registry())
    subject = validate.arxiv_category(typed.subject, archives=True) if typed.subject else None
    return SearchFilters(subject=subject, since=since, until=until, source_kind=kind)


def _empty_range(typed: SearchFilters, now: datetime) -> bool:
    """Both dates readable and the start after the end (the API answers "no hits")."""
    try:
        since = validate.search_date(typed.since, now) if typed.since else None
        until = validate.search_date(typed.until, now) if typed.until else None
    except UsageError:
        return False
    return bool(since and until and since > until)


def _search_filter_kinds() -> list[tuple[str, str]]:
    """``(kind, label)`` of the source kinds a search can be narrowed to, "any" first."""
    offered = sorted(
        (t.filter_order, kind, t.filter_label) for kind, t in all_traits().items() if t.filter_label
    )
    return [("", "any"), *((kind, label) for _, kind, label in offered if label)]
