"""The sources page: what the instance fetches, as HTML, JSON and OPML, and its admin form.

Every reader sees the sources (and mutes one for themselves); adding a feed
or an arXiv category, or removing a source, is an admin's, recorded in the
audit log. Removing asks first: it drops the source's items.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.deliver.export import sources_opml
from lightnews.errors import LightnewsError, UsageError
from lightnews.normalize import validate
from lightnews.normalize.times import now_iso
from lightnews.normalize.validate import whole_number
from lightnews.serve.owned import actor_of
from lightnews.serve.pages.admin import admin_only
from lightnews.serve.security import visitor_of
from lightnews.serve.site import Site, own_state, read_form, reader_of
from lightnews.sources import kind_traits, kinds_where

__all__ = ["manage_sources", "sources"]


def sources(site: Site, request: Request) -> Response:
    if request.query_params.get("format") == "opml":
        return Response(sources_opml(site.store), media_type="text/x-opml")
    rows = [r.to_json() for r in site.store.list_sources()]

    def html() -> Response:
        muted = site.store.mutes(reader_of(request)).source if own_state(request) else frozenset()
        # Adding and removing sources is an admin's: a reader is shown no such control.
        return site.page(
            "sources.html",
            sources=rows,
            muted=muted,
            title="Sources",
            admin=visitor_of(request).admin,
            note_kinds=set(kinds_where(lambda t: t.note_pages)),
        )

    return site.respond(request, lambda: rows, html)


def manage_sources(site: Site, request: Request) -> Response:
    """Add a feed or an arXiv category, or remove a source, from the sources page (admins)."""
    visitor = visitor_of(request)
    refusal = admin_only(visitor)
    if refusal is not None:
        return site.refused(refusal)
    store = site.store
    actor = actor_of(visitor)
    form = read_form(request)
    now = now_iso()
    try:
        if form.get("remove"):
            source_id = whole_number(str(form.get("remove")), "a source id")
            if form.get("confirm") != "yes":  # ask first: removing drops its items
                row = store.get_source(source_id)
                return site.page("confirm.html", source=row, title="Remove this source?")
            gone = store.remove_source(source_id)
            store.audit(actor, "sources.remove", f"#{gone.id} {gone.kind} {gone.address}", now)
        elif form.get("feed"):
            url = validate.feed_address(str(form.get("feed")))
            folder = str(form.get("folder") or "") or None
            row, _ = store.add_source(
                kinds_where(lambda t: t.in_opml)[0], url, now=now, folder=folder
            )
            store.audit(actor, "sources.add", f"#{row.id} {row.kind} {row.address}", now)
        elif form.get("category"):
            kind = kinds_where(lambda t: t.topic_prefix)[0]
            category = validate.arxiv_category(str(form.get("category")))
            row, _ = store.add_source(kind, kind_traits(kind).topic_address(category), now=now)
            store.audit(actor, "sources.add", f"#{row.id} {row.kind} {row.address}", now)
        else:
            raise UsageError("give a feed URL or an arXiv category to add")
    except ValueError:
        return site.failure(request, UsageError("a source id is a number"))
    except LightnewsError as error:
        return site.failure(request, error)
    return RedirectResponse("/sources", status_code=303)
