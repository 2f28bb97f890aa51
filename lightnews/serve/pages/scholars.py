"""Scholars: one scholar's page (posts and papers), the list of every scholar, and its forms.

A scholar's page shows their posts and the papers attributed to them, each
with how sure the match is. Whether a paper is a scholar's is one answer for
every reader of the instance, so only an admin (or the local reader of an
install without accounts) confirms or rejects it, and the audit log records
who did; a reader's own "hide from my feed" is their "not interested" in the
paper, theirs alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.deliver.export import FeedEntry
from lightnews.errors import LightnewsError, UsageError
from lightnews.ingest.follow import FirstFetch, first_fetch
from lightnews.link.attribution import merge_scholars
from lightnews.normalize import validate
from lightnews.normalize.times import now_iso
from lightnews.normalize.validate import whole_number
from lightnews.serve.owned import (
    SHARED,
    actor_of,
    decide,
    decisions,
    hidden_papers,
    hide_paper,
    muted_scholars,
    set_followed,
)
from lightnews.serve.scholar import ScholarPage, numbers_itself, post_units, scholar_page
from lightnews.serve.security import visitor_of
from lightnews.serve.site import (
    MAX_PAGE,
    PER_PAGE,
    Site,
    back_to,
    feed_links,
    own_state,
    read_form,
    reader_of,
)

__all__ = ["manage_scholar", "scholar", "scholars"]


def scholar(site: Site, request: Request) -> Response:
    who = request.path_params["who"]
    asked = request.query_params.get("tab")
    tab = asked or "posts"
    try:
        if tab not in ("posts", "papers"):
            raise UsageError(f"tab must be posts or papers, got {tab[:40]!r}")
        number = whole_number(request.query_params.get("page", "1"), "page", MAX_PAGE)
        data = scholar_page(
            site.store,
            who,
            page=number,
            per_page=PER_PAGE,
            tab=tab,
            bar=site.current_settings().attribution_bar,
            reader=reader_of(request),
        )
    except LightnewsError as error:
        tail = f"?tab={tab}" if tab == "papers" else ""
        return site.failure(request, error, lambda key: f"/scholar/{key}{tail}")
    title = f"Lightnews: {data.scholar.name}"
    waiting = first_fetch(site.store, data.scholar.id, site.current_settings())

    def as_json() -> dict[str, Any]:
        return {**data.to_json(), "first_fetch": waiting.to_json() if waiting else None}

    def entries() -> list[FeedEntry]:
        return [FeedEntry(p.url, p.title, p.url, None, p.abstract[:500]) for p in data.papers] + [
            FeedEntry(
                p.uri or "", (p.text or "")[:120], p.url, p.created_at, p.text, [p.author or ""]
            )
            for p in data.posts
            if not p.gap
        ]

    def html() -> Response:
        shown = "papers" if asked is None and data.profile is None else tab
        return _page(site, request, data, shown, who, waiting)  # arXiv-only: no posts to open on

    return site.respond(request, as_json, html, feed=(title, entries))


def _page(
    site: Site,
    request: Request,
    data: ScholarPage,
    tab: str,
    who: str,
    waiting: FirstFetch | None,
) -> Response:
    store = site.store
    reader = reader_of(request)
    own = own_state(request)
    muted = own and str(data.scholar.id) in muted_scholars(store, reader)
    decided = decisions(store, data.scholar.id)
    rejected = store.papers_by_ids(sorted(k for k, v in decided.items() if v == "reject"))
    return site.page(
        "scholar.html",
        data=data,
        tab=tab,
        who=who,
        muted=muted,
        units=post_units(data.posts),
        numbers_itself=numbers_itself,
        decided=decided,
        rejected=rejected,
        title=data.scholar.name,
        deciders=store.deciders(data.scholar.id),
        shared=visitor_of(request).admin,
        hidden=hidden_papers(store, reader) if own else frozenset(),
        not_fetched=request.query_params.get("not_fetched") == "1",
        first_fetch=waiting,
        feeds=feed_links(request, f"Lightnews: {data.scholar.name}"),
    )


def scholars(site: Site, request: Request) -> Response:
    """Every scholar: identities, records, and whether they are followed or muted."""
    reader = reader_of(request)
    mine = site.store.follows(reader)  # "followed" is whether *this* reader follows them
    rows = [
        replace(r, followed=r.id in mine)
        for r in site.store.list_scholars(site.current_settings().attribution_bar)
    ]

    def html() -> Response:
        muted = muted_scholars(site.store, reader) if own_state(request) else frozenset()
        return site.page("scholars.html", scholars=rows, muted=muted, title="Scholars")

    return site.respond(request, lambda: [r.to_json() for r in rows], html)


def manage_scholar(site: Site, request: Request) -> Response:
    """Follow or unfollow a scholar; confirm, reject or undecide an attributed paper
    (shared: admins), or hide it from the reader's own feed (or show it again)."""
    store = site.store
    form = read_form(request)
    action = str(form.get("action") or "")
    visitor = visitor_of(request)
    try:
        scholar_id = whole_number(str(form.get("scholar") or ""), "a scholar id")
        store.get_scholar(scholar_id)
        if action in ("follow", "unfollow"):
            set_followed(store, reader_of(request), scholar_id, action == "follow")
        elif action in ("confirm", "reject", "undecide"):
            arxiv_id = validate.paper_id(str(form.get("paper") or "")).base
            if not visitor.admin:
                return site.refused(SHARED)
            choice = None if action == "undecide" else action
            decide(store, scholar_id, arxiv_id, choice, now_iso(), by=actor_of(visitor))
        elif action in ("hide", "unhide"):
            arxiv_id = validate.paper_id(str(form.get("paper") or "")).base
            hide_paper(store, reader_of(request), arxiv_id, action == "hide", now_iso())
            site.learn_from(reader_of(request))
        elif action == "merge":  # this scholar into the one named (shared: admins, audited)
            if not visitor.admin:
                return site.refused(SHARED)
            keep = whole_number(str(form.get("into") or ""), "a scholar id")
            if keep == scholar_id:
                raise UsageError("a scholar cannot be merged into themself")
            kept, dropped = store.get_scholar(keep), store.get_scholar(scholar_id)
            merge_scholars(store, keep, scholar_id)
            store.audit(
                actor_of(visitor),
                "scholars.merge",
                f"#{scholar_id} {dropped.name} into #{keep} {kept.name}",
                now_iso(),
            )
            return RedirectResponse(f"/scholar/{keep}", status_code=303)
        else:
            raise UsageError(
                "give follow, unfollow, confirm, reject, undecide, hide, unhide or merge"
            )
    except LightnewsError as error:
        return site.failure(request, error)
    return RedirectResponse(back_to(form, f"/scholar/{scholar_id}"), status_code=303)
