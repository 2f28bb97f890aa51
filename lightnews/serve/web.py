"""The web UI and its JSON API: the same page data the CLI prints, as HTML and JSON.

Server-rendered with Starlette and Jinja2 (autoescaped; HTML from sources was
sanitized before it was stored), usable without JavaScript, readable on a
phone. Every page has a JSON twin under ``/api`` built from the same data.
The application holds one store; ``lightnews serve`` and ``lightnews demo
--port`` run it with uvicorn.

Handlers are plain functions: Starlette runs them in its thread pool (at most
``THREADS`` at once), each thread with its own database connection, so a slow
request (a search at its time budget, a write waiting for a refresh to
commit) never holds up the others. A database that cannot answer gives a 503
page that says to try again (JSON under ``/api``), never a 500.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import anyio.from_thread
import anyio.to_thread
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from lightnews.embed.lexical import catch_up_in_background
from lightnews.errors import (
    Ambiguous,
    LightnewsError,
    NotFound,
    PastLastPage,
    Unavailable,
    UsageError,
)
from lightnews.model import SearchFilters
from lightnews.normalize import validate
from lightnews.normalize.arxiv_ids import parse_arxiv_id, parse_arxiv_reference
from lightnews.normalize.tex import tex_to_text
from lightnews.normalize.times import now_iso, utc_now
from lightnews.normalize.validate import whole_number
from lightnews.rank import (
    FEED_VIEWS,
    CandidateWindows,
    Reason,
    Story,
    display_name,
    rank_stories,
    reason,
)
from lightnews.search import SearchResults, search_papers
from lightnews.serve.accounts import StoreGate, account_routes, admin_only
from lightnews.serve.api import openapi as openapi_description
from lightnews.serve.cards import (
    Card,
    CardAuthor,
    absolute_time,
    build_cards,
    card_authors,
    relative_time,
)
from lightnews.deliver.export import FeedEntry, atom_feed, bibtex, json_feed, sources_opml
from lightnews.serve.scholar import numbers_itself, post_units, scholar_page
from lightnews.serve.security import (
    SiteGuard,
    Visitor,
    csrf_field,
    current_visitor,
    link,
    safe_href,
    visitor_of,
    without_post_forms,
)
from lightnews.serve.story import KIND_LABELS, confidence_words, story_authors, story_groups
from lightnews.settings import Settings
from lightnews.sources import all_traits, kind_traits, kinds_where
from lightnews.store import (
    BACKEND_ERRORS,
    ReaderId,
    Store,
    open_store,
    unavailable,
)
from lightnews.store.views import ItemView, Mutes

__all__ = ["app_from_environment", "create_app", "site_secret"]

PER_PAGE = 20
#: The library's now while a page renders (its ``clock`` setting, else the real clock).
_PAGE_NOW: ContextVar[datetime | None] = ContextVar("page_now", default=None)
MAX_PAGE = 100_000
#: Requests handled at once (the rest wait their turn): each holds a thread and a connection.
THREADS = 16
#: Seconds a client is asked to wait before retrying when the database is busy.
RETRY_AFTER = 5
#: Seconds a request waits for a database connection (PostgreSQL) before its 503: a
#: connection is at hand unless the server is down or every one is in use.
CONNECTION_WAIT = 1.0


def _kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


async def _form(request: Request) -> FormData:
    return await request.form()


def read_form(request: Request) -> FormData:
    """The request's form, read from a handler running in the thread pool."""
    return anyio.from_thread.run(_form, request)


async def _json(request: Request) -> dict[str, str]:
    try:
        data = await request.json()
    except ValueError:
        raise UsageError("the body is not JSON") from None
    if not isinstance(data, dict):
        raise UsageError("send a JSON object")
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str | int)}


def read_json(request: Request) -> dict[str, str]:
    """The request's JSON object (its text and number fields), from the thread pool."""
    return anyio.from_thread.run(_json, request)


def create_app(
    db_path: str | Path,
    settings: Settings | None = None,
    *,
    public_read_only: bool = False,
    open_without_accounts: bool = True,
) -> Starlette:
    """The web application over the database at ``db_path``.

    ``public_read_only``: pages and feeds only, every form hidden and every
    change refused. ``open_without_accounts`` False (an instance listening
    beyond loopback): with no accounts, nothing is served.
    """
    store: Store = open_store(db_path)
    #: The settings last read from the library: the 503 page is drawn with them, from
    #: memory, when the library cannot answer (an outage must not turn it into a 500).
    remembered = [settings or Settings(store.saved_settings())]
    store.write_wait = float(remembered[0].write_wait)
    store.connection_wait = min(store.write_wait, CONNECTION_WAIT) or CONNECTION_WAIT
    windows = CandidateWindows()  # the feed's candidates, kept between requests
    env = Environment(
        loader=PackageLoader("lightnews.serve", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["day"] = lambda value: (value or "")[:10]
    env.filters["kind_label"] = _kind_label
    env.filters["tex"] = tex_to_text
    env.filters["person"] = display_name
    env.filters["ago"] = lambda value: relative_time(value, _PAGE_NOW.get() or utc_now())
    env.filters["exact"] = absolute_time
    env.globals["link"] = link
    env.globals["csrf_field"] = csrf_field
    env.globals["visitor"] = current_visitor
    env.globals["confidence_words"] = confidence_words
    env.globals["alternate"] = alternate_link
    env.globals["thumbnail"] = thumbnail

    def current_settings() -> Settings:
        if settings is not None:
            return settings
        remembered[0] = Settings(store.saved_settings())
        return remembered[0]

    def page(name: str, status: int = 200, *, from_memory: bool = False,
             **context: Any) -> HTMLResponse:  # fmt: skip
        """The template as a response; ``from_memory``: without asking the library."""
        shown = remembered[0] if from_memory else current_settings()
        _PAGE_NOW.set(shown.now())  # "3 hours ago" by the library's clock
        html = env.get_template(name).render(**context)
        if public_read_only:
            html = without_post_forms(html)
        return HTMLResponse(html, status_code=status)

    def feed_links(request: Request, title: str) -> list[tuple[str, str, str]]:
        """This page's feeds as ``(type, title, href)``: linked and autodiscovered."""
        query = {k: v for k, v in request.query_params.items() if k not in ("format", "page")}
        base = request.url.path + "?" + urlencode({**query, "format": ""})
        return [("application/atom+xml", f"{title} (Atom)", base + "atom"),
                ("application/feed+json", f"{title} (JSON Feed)", base + "jsonfeed")]  # fmt: skip

    def as_feed(request: Request, title: str, entries: list[FeedEntry]) -> Response | None:
        """The page as Atom (``?format=atom``) or JSON Feed (``?format=jsonfeed``)."""
        kind = request.query_params.get("format")
        if kind == "atom":
            return Response(atom_feed(title, str(request.url), entries),
                            media_type="application/atom+xml")  # fmt: skip
        if kind == "jsonfeed":
            return JSONResponse(json_feed(title, str(request.url), entries),
                                media_type="application/feed+json")  # fmt: skip
        return None

    def wants_json(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    def busy(request: Request, error: Exception) -> Response:
        """503: the database could not answer (busy past its wait, or broken); try again."""
        message = str(unavailable(error))
        headers = {"Retry-After": str(RETRY_AFTER)}
        if wants_json(request):
            return JSONResponse({"error": message, "retry_after": RETRY_AFTER},
                                status_code=503, headers=headers)  # fmt: skip
        response = page("error.html", status=503, title="Busy: please try again",
                        message=f"{message}. Nothing was lost; reload the page in a few "
                        "seconds.", from_memory=True)  # fmt: skip
        response.headers.update(headers)
        return response

    def failure(
        request: Request,
        error: LightnewsError,
        choice: Callable[[str], str] = lambda key: f"/scholar/{key}",
    ) -> Response:
        """The error's page (JSON under /api): 404, 400, or 503 for the database.

        Several matches (:class:`Ambiguous`) answer 300 Multiple Choices: a page
        that lists them, each linked to ``choice(key)``.
        """
        if isinstance(error, Unavailable):
            return busy(request, error)
        if isinstance(error, Ambiguous):
            choices = [(choice(key), label) for key, label in error.choices]
            if wants_json(request):
                return JSONResponse({"error": str(error), "choices": [
                    {"id": key, "label": label, "url": href}
                    for (key, label), (href, _) in zip(error.choices, choices, strict=True)
                ]}, status_code=300)  # fmt: skip
            paths = [(href.removeprefix("/"), label) for href, label in choices]  # on this site
            return page("error.html", status=300, title="Which one?", choices=paths,
                        message=str(error).partition(":")[0] + ". Choose one:")  # fmt: skip
        status = 404 if isinstance(error, NotFound | PastLastPage) else 400
        if wants_json(request):
            return JSONResponse({"error": str(error)}, status_code=status)
        return page("error.html", status=status, message=str(error), title="Not found"
                    if status == 404 else "Cannot do that")  # fmt: skip

    def reader_settings(reader: ReaderId) -> Settings:
        """The instance's settings with the reader's own over them."""
        base = settings or Settings(store.saved_settings())
        own = store.reader_settings(reader)
        if not own:
            return base
        typed = Settings(own)  # read and checked as saved settings are
        return base.with_overrides(**{name: getattr(typed, name) for name in own})

    def home(request: Request, status: int = 200, **form: Any) -> Response:
        """The feed; ``form`` keeps what was typed in the follow form, with its error."""
        reader = reader_of(request)
        s = reader_settings(reader)
        view = request.query_params.get("view", FEED_VIEWS[0])
        if view not in FEED_VIEWS:
            return failure(request, UsageError(
                f"view must be {' or '.join(FEED_VIEWS)}, got {view[:40]!r}"))
        # The story just marked read or "not interested" stays where it was, once, with
        # an undo (the way back from /mark names it); it is gone on the next visit.
        marked = request.query_params.get("marked", "")[:64]
        stories = rank_stories(store, reader, limit=50, half_life_hours=s.half_life_hours,
                               bar=s.attribution_bar, settings=s, windows=windows,
                               papers_only=view == "papers", own_state=own_state(request),
                               keep_read=frozenset({marked} if marked else ()))  # fmt: skip
        if wants_json(request):
            return JSONResponse([story.to_json() for story in stories])
        cards = feed_cards(stories, request)
        feed = as_feed(request, "Lightnews: your feed", [
            FeedEntry(f"{request.base_url}paper/{c.arxiv_id}" if c.arxiv_id else c.key,
                      c.title, f"https://arxiv.org/abs/{c.arxiv_id}" if c.arxiv_id else c.href,
                      c.time, c.summary, [a.name for a in c.authors],
                      [r.text for r in c.reasons])
            for c in cards])  # fmt: skip
        if feed is not None:
            return feed
        own = own_state(request)  # a public read-only page: no one's follows or mutes
        scholars = store.followed_scholars(reader) if own else []
        muted = store.mutes(reader) if own else Mutes()
        names = store.scholar_names(int(v) for v in muted.scholar)
        titles = {str(r.id): r.title or r.address for r in store.list_sources()
                  if str(r.id) in muted.source} if muted.source else {}  # fmt: skip
        mutes = ([("keyword", v, v) for v in sorted(muted.keyword)]
                 + [("scholar", v, names.get(int(v), v)) for v in sorted(muted.scholar)]
                 + [("source", v, titles.get(v, v)) for v in sorted(muted.source)])  # fmt: skip
        hidden = {c.key for c in cards if c.key == marked and c.arxiv_id and (
            store.paper_feedback(reader).get(store.paper_row_id(c.key) or 0) == "not-interested")}
        return page("home.html", status, cards=cards, scholars=scholars, mutes=mutes,
                    title="Your feed", follow=form, view=view, marked=marked,
                    hidden=hidden,
                    feeds=feed_links(request, "Lightnews: your feed"))  # fmt: skip

    def feed_cards(stories: list[Story], request: Request) -> list[Card]:
        reader = reader_of(request)
        followed = {r.id: r.name for r in store.followed_scholars(reader)}
        states = reader_states(store, reader) if own_state(request) else {}
        return build_cards(store, stories, followed=followed, states=states,
                           bar=current_settings().attribution_bar)  # fmt: skip

    def scholar(request: Request) -> Response:
        who = request.path_params["who"]
        asked = request.query_params.get("tab")
        tab = asked or "posts"
        try:
            if tab not in ("posts", "papers"):
                raise UsageError(f"tab must be posts or papers, got {tab[:40]!r}")
            number = whole_number(request.query_params.get("page", "1"), "page", MAX_PAGE)
            data = scholar_page(store, who, page=number, per_page=PER_PAGE, tab=tab,
                                bar=current_settings().attribution_bar,
                                reader=reader_of(request))  # fmt: skip
        except LightnewsError as error:
            tail = f"?tab={tab}" if tab == "papers" else ""
            return failure(request, error, lambda key: f"/scholar/{key}{tail}")
        if wants_json(request):
            return JSONResponse(data.to_json())
        feed = as_feed(request, f"Lightnews: {data.scholar.name}", [
            FeedEntry(p.url, p.title, p.url, None, p.abstract[:500])
            for p in data.papers] + [
            FeedEntry(p.uri or "", (p.text or "")[:120], p.url, p.created_at, p.text,
                      [p.author or ""]) for p in data.posts if not p.gap])  # fmt: skip
        if feed is not None:
            return feed
        if asked is None and data.profile is None:
            tab = "papers"  # an arXiv-only scholar has no posts to open on
        reader = reader_of(request)
        own = own_state(request)
        muted = own and str(data.scholar.id) in muted_scholars(store, reader)
        decided = decisions(store, data.scholar.id)
        rejected = store.papers_by_ids(sorted(k for k, v in decided.items() if v == "reject"))
        return page("scholar.html", data=data, tab=tab, who=who, muted=muted,
                    units=post_units(data.posts), numbers_itself=numbers_itself,
                    decided=decided, rejected=rejected, title=data.scholar.name,
                    deciders=store.deciders(data.scholar.id),
                    shared=visitor_of(request).admin,
                    hidden=hidden_papers(store, reader) if own else frozenset(),
                    not_fetched=request.query_params.get("not_fetched") == "1",
                    feeds=feed_links(request, f"Lightnews: {data.scholar.name}"))  # fmt: skip

    def paper(request: Request) -> Response:
        asked = request.path_params["arxiv_id"]
        reference = parse_arxiv_reference(asked) if parse_arxiv_id(asked) is None else None
        if reference is not None:  # /paper/https://arxiv.org/abs/ID: the paper's own page
            base = "/api/paper/" if wants_json(request) else "/paper/"
            return RedirectResponse(f"{base}{reference.base}", status_code=301)
        try:
            data = store.get_paper(asked)
        except LightnewsError as error:
            return failure(request, error)
        from lightnews.search import related_papers

        related = SearchResults([], "lexical")
        if not data.stub:
            related = related_papers(store, data.arxiv_id, limit=5,
                                     settings=current_settings(), paper=data)  # fmt: skip
        from lightnews.rank.discussed import second_order_of
        from lightnews.serve.conversation import read_conversation

        chain = second_order_of(store, data.arxiv_id)
        try:
            posts_page = whole_number(request.query_params.get("posts", "1"), "posts", MAX_PAGE)
        except LightnewsError as error:
            return failure(request, error)
        talk = read_conversation(store, data.arxiv_id, reader_of(request),
                                 current_settings().now(), posts_page)  # fmt: skip
        # A stub says what it is by a post's link card until its metadata is fetched.
        card = store.paper_cards([data.arxiv_id]).get(data.arxiv_id) if data.stub else None
        if wants_json(request):
            hits = [h.to_json() for h in related]
            return JSONResponse({**data.to_json(), "related": {**related.about(), "hits": hits},
                                 "second_order": [c.to_json() for c in chain],
                                 "conversation": talk.to_json(),
                                 "link_card": card.to_json() if card else None})  # fmt: skip
        if request.query_params.get("format") == "bibtex":
            return Response(bibtex([data]), media_type="application/x-bibtex")
        reader = reader_of(request)
        followed = {r.id: r.name for r in store.followed_scholars(reader)}
        states = reader_states(store, reader) if own_state(request) else {}
        read_at, saved_at = states.get(data.arxiv_id, (None, None))
        from datetime import timedelta

        from lightnews.rank.discussed import discussion_of
        from lightnews.watch import is_watching, reader_key

        week = current_settings().now() - timedelta(days=7)
        heard = discussion_of(store, reader, [data.arxiv_id], week)
        named = tex_to_text(data.title) or (card.title if card else data.arxiv_id)
        return page("paper.html", paper=data, groups=story_groups(data), related=related,
                    authors=story_authors(data, followed, current_settings().attribution_bar),
                    saved=saved_at is not None, read=read_at is not None,
                    watching=own_state(request)
                    and is_watching(store, reader_key(reader), data.arxiv_id),
                    discussion=heard.get(data.arxiv_id),
                    chain=chain, talk=talk, card=card,
                    title=named)  # fmt: skip

    def search(request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        try:
            number = whole_number(request.query_params.get("page", "1"), "page", MAX_PAGE)
        except LightnewsError as error:
            return failure(request, error)
        params = request.query_params
        typed = SearchFilters(
            subject=params.get("subject", "").strip() or None,
            since=params.get("since", "").strip() or None,
            until=params.get("until", "").strip() or None,
            source_kind=params.get("source_kind", "").strip() or None,
        )
        hits = SearchResults([], "lexical")
        try:
            now = current_settings().now()  # "1w" is a week before the library's clock
            if wants_json(request) and _empty_range(typed, now):  # nothing can fall in it
                search_filters(replace(typed, until=None), now)  # the other filters are checked
                note = "the start is after the end: nothing can match"
                return JSONResponse({"query": query, "page": number, "mode": "lexical",
                                     "note": note, "hits": []})  # fmt: skip
            filters = search_filters(typed, now)
            who = params.get("scholar", "").strip()
            if who:
                filters = replace(filters, scholar_id=store.find_scholar(who))
            if query:
                hits = search_papers(store, query, limit=PER_PAGE,
                                     offset=(number - 1) * PER_PAGE, filters=filters,
                                     settings=current_settings(), items=True)  # fmt: skip
                if number > 1 and not hits and not hits.items:
                    raise PastLastPage(f"page {number} is past the last page of results")
        except Ambiguous as error:
            others = {k: v for k, v in params.items() if k != "scholar"}
            return failure(
                request, error, lambda key: f"/search?{urlencode({**others, 'scholar': key})}"
            )
        except UsageError as error:
            if wants_json(request):
                return failure(request, error)
            status = 404 if isinstance(error, PastLastPage) else 400
            return page("search.html", status=status, query=query, hits=hits, page=number,
                        more=False, filters=typed, paging={}, error=str(error),
                        title="Search: check the filters")  # fmt: skip
        except LightnewsError as error:
            return failure(request, error)
        if wants_json(request):
            return JSONResponse({"query": query, "page": number, **hits.about(),
                                 "hits": [h.to_json() for h in hits],
                                 "items": [i.to_json() for i in hits.items]})  # fmt: skip
        feed = as_feed(
            request,
            f"Lightnews search: {query}",
            [
                FeedEntry(
                    f"https://arxiv.org/abs/{h.arxiv_id}",
                    h.title,
                    f"https://arxiv.org/abs/{h.arxiv_id}",
                    h.published,
                )
                for h in hits
            ],
        )
        if feed is not None:
            return feed
        return page(
            "search.html",
            query=query,
            hits=hits,
            page=number,
            more=len(hits) == PER_PAGE or len(hits.items) == PER_PAGE,
            filters=filters,
            paging={k: v for k, v in params.items() if k != "page" and v},
            source_kinds=_search_filter_kinds(),
            title=f"Search: {query}" if query else "Search",
            feeds=feed_links(request, f"Lightnews search: {query}") if query else [],
        )

    def sources(request: Request) -> Response:
        if request.query_params.get("format") == "opml":
            return Response(sources_opml(store), media_type="text/x-opml")
        rows = [r.to_json() for r in store.list_sources()]
        if wants_json(request):
            return JSONResponse(rows)
        muted = store.mutes(reader_of(request)).source if own_state(request) else frozenset()
        return page("sources.html", sources=rows, muted=muted, title="Sources",
                    note_kinds=set(kinds_where(lambda t: t.note_pages)))  # fmt: skip

    def follow(request: Request) -> Response:
        """Follow a scholar for this reader. Adding what the instance fetches (a source for a
        new account or author) is an admin's, or every reader's with ``readers_add_sources``;
        otherwise the reader follows what is already fetched and is told what is not."""
        from lightnews.pipeline import follow_fetched, follow_scholar

        form = read_form(request)
        typed = {name: str(form.get(name) or "").strip()
                 for name in ("handle", "arxiv_author", "orcid")}  # fmt: skip
        try:
            if not any(typed.values()):
                raise UsageError("give a Bluesky handle or an arXiv author's name to follow")
            handle = typed["handle"] and validate.bluesky_handle(
                typed["handle"], by_name="the arXiv author box:"
            )
            author = typed["arxiv_author"] and validate.arxiv_author(typed["arxiv_author"])
            orcid = typed["orcid"] and validate.orcid(typed["orcid"])
            if visitor_of(request).admin or current_settings().readers_add_sources:
                scholar_id = follow_scholar(store, reader_of(request), now_iso(),
                                            handle=handle or None, arxiv_author=author or None,
                                            orcid=orcid or None)  # fmt: skip
            else:
                followed, unfetched = follow_fetched(store, reader_of(request), now_iso(),
                                                     handle=handle or None,
                                                     arxiv_author=author or None,
                                                     orcid=orcid or None)  # fmt: skip
                scholar_id = followed[0]
                if unfetched:  # followed for what the library holds; the page says the rest
                    return RedirectResponse(f"/scholar/{scholar_id}?not_fetched=1",
                                            status_code=303)  # fmt: skip
        except UsageError as error:  # the feed again, the form as typed, what is wrong
            return home(request, 400, error=str(error), **typed)
        except LightnewsError as error:
            return failure(request, error)
        return RedirectResponse(f"/scholar/{scholar_id}", status_code=303)

    def mark(request: Request) -> Response:
        """Mark a story read or saved, or (un)mute a scholar, source or keyword.

        The form's ``back`` (a path on this site) is where the browser returns.
        ``POST /api/mark`` takes the same fields as JSON (with an API token when
        the instance has accounts) and answers JSON.
        """
        api = wants_json(request)
        form: Any = read_json(request) if api else read_form(request)
        now = now_iso()
        action = str(form.get("action") or "")
        key = str(form.get("story") or "").strip()
        kind = str(form.get("kind") or "keyword")
        value = str(form.get("value") or form.get("keyword") or "").strip()
        try:
            if action in ("read", "unread", "save", "unsave") and key:
                key = validate.story_key(key)
                if key.startswith("item:"):
                    store.get_item(int(key.removeprefix("item:")))
                else:
                    store.get_paper(key)
                if action in ("save", "unsave"):
                    mark_story(store, reader_of(request), key, now, saved=action == "save")
                else:
                    mark_story(store, reader_of(request), key, now, read=action == "read")
            elif action in FEEDBACK_ACTIONS and key:
                paper = store.paper_row_id(validate.story_key(key))
                if paper is None:
                    raise UsageError("only a paper's story takes “more like this” or “not "
                                     "interested”")  # fmt: skip
                store.set_paper_feedback(reader_of(request), paper,
                                         FEEDBACK_ACTIONS[action], now)  # fmt: skip
            elif action in ("mute", "unmute") and value:
                if kind == "keyword":
                    value = value.lower()
                elif kind == "scholar":
                    value = str(store.find_scholar(value))
                elif kind == "source":
                    value = str(store.get_source(whole_number(value, "a source id")).id)
                set_mute(store, reader_of(request), kind, value, now, muted=action == "mute")
            else:
                raise UsageError("nothing to do: give a story and read, unread, save, unsave, "
                                 "more-like-this, not-interested or no-feedback, or what to "
                                 "(un)mute")  # fmt: skip
        except ValueError:
            return failure(request, UsageError("a source is given by its number"))
        except LightnewsError as error:
            return failure(request, error)
        if api:
            return JSONResponse({"done": action, "story": key or None,
                                 "kind": kind if action in ("mute", "unmute") else None,
                                 "value": value or None})  # fmt: skip
        back = _back(form, "/")
        if action in ("read", "not-interested") and key:
            back = _with_marked(back, key)  # shown once where it was, with an undo
        return RedirectResponse(back, status_code=303)

    def item(request: Request) -> Response:
        """An article, post or note with the papers it names (seed: a lab's blog post)."""
        try:
            data = store.get_item(whole_number(request.path_params["item_id"], "an item id"))
        except LightnewsError as error:
            return failure(request, error)
        if wants_json(request):
            return JSONResponse(data.to_json())
        return page("item.html", item=data, title=data.title or "Item")

    def daily(request: Request) -> Response:
        """Daily papers of one day with their upvotes (the newest day by default).

        ``?day=`` (the day picker's form) goes to that day's own address.
        """
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
            return failure(request, error)
        days = store.daily_days()
        day = asked or (days[0] if days else "")
        entries = store.daily_items(day) if day else []
        if wants_json(request):
            return JSONResponse({"day": day, "days": days,
                                 "papers": [e.to_json() for e in entries]})  # fmt: skip
        followed = {r.id: r.name for r in store.followed_scholars(reader_of(request))}
        bar = current_settings().attribution_bar
        authors: dict[int, tuple[tuple[CardAuthor, ...], int]] = {}
        for entry in entries:
            if entry.record_of:
                try:
                    paper = store.get_paper(entry.record_of)
                except NotFound:
                    continue
                authors[entry.id] = card_authors(paper.authorships, followed, bar)
        older = next((d for d in days if d < day), None)
        newer = next((d for d in reversed(days) if d > day), None)
        return page("daily.html", day=day, days=days, entries=entries, authors=authors,
                    older=older, newer=newer, title=f"Daily papers {day}")  # fmt: skip

    def notes(request: Request) -> Response:
        """A notes page: "N papers reviewed", notes by section, each linked to its papers."""
        try:
            source = store.get_source(whole_number(request.path_params["source_id"], "a source id"))
        except LightnewsError as error:
            return failure(request, error)
        entries = store.source_items(source.id, "note")
        sections: dict[str, list[ItemView]] = {}
        for entry in entries:
            sections.setdefault((entry.note and entry.note.section) or "Notes", []).append(entry)
        reviewed = next((e.note.papers_reviewed for e in entries
                         if e.note and e.note.papers_reviewed), None)  # fmt: skip
        title = source.title or source.address
        if wants_json(request):
            shown = {name: [e.to_json() for e in notes] for name, notes in sections.items()}
            return JSONResponse({"title": title, "papers_reviewed": reviewed, "sections": shown})
        data = {"title": title, "papers_reviewed": reviewed, "sections": sections}
        return page("notes.html", notes=data, title=title)

    def manage_sources(request: Request) -> Response:
        """Add a feed or an arXiv category, or remove a source, from the sources page (admins)."""
        visitor = visitor_of(request)
        refusal = admin_only(visitor)
        if refusal is not None:
            return page("error.html", status=403, title="Not allowed", message=refusal)
        actor = actor_of(visitor)
        form = read_form(request)
        now = now_iso()
        try:
            if form.get("remove"):
                source_id = whole_number(str(form.get("remove")), "a source id")
                if form.get("confirm") != "yes":  # ask first: removing drops its items
                    row = store.get_source(source_id)
                    return page("confirm.html", source=row, title="Remove this source?")
                gone = store.remove_source(source_id)
                store.audit(actor, "sources.remove", f"#{gone.id} {gone.kind} {gone.address}", now)
            elif form.get("feed"):
                url = validate.feed_address(str(form.get("feed")))
                folder = str(form.get("folder") or "") or None
                row, _ = store.add_source(kinds_where(lambda t: t.in_opml)[0], url, now=now,
                                          folder=folder)  # fmt: skip
                store.audit(actor, "sources.add", f"#{row.id} {row.kind} {row.address}", now)
            elif form.get("category"):
                kind = kinds_where(lambda t: t.topic_prefix)[0]
                category = validate.arxiv_category(str(form.get("category")))
                row, _ = store.add_source(kind, kind_traits(kind).topic_address(category), now=now)
                store.audit(actor, "sources.add", f"#{row.id} {row.kind} {row.address}", now)
            else:
                raise UsageError("give a feed URL or an arXiv category to add")
        except ValueError:
            return failure(request, UsageError("a source id is a number"))
        except LightnewsError as error:
            return failure(request, error)
        return RedirectResponse("/sources", status_code=303)

    def watch(request: Request) -> Response:
        """Watch a paper (or stop): the story page's Watch button."""
        from lightnews.watch import reader_key, start_watching, stop_watching

        form = read_form(request)
        action = str(form.get("action") or "watch")
        try:
            arxiv_id = validate.paper_id(str(form.get("paper") or "")).base
            store.get_paper(arxiv_id)
            if action == "watch":
                start_watching(store, reader_key(reader_of(request)), arxiv_id)
            elif action == "unwatch":
                stop_watching(store, reader_key(reader_of(request)), arxiv_id)
            else:
                raise UsageError("action must be watch or unwatch")
        except LightnewsError as error:
            return failure(request, error)
        return RedirectResponse(f"/paper/{arxiv_id}", status_code=303)

    def discussed(request: Request) -> Response:
        """Papers the network discusses now, each saying who and how many (``?since=24h``)."""
        from lightnews.rank.discussed import discussed_papers

        period = request.query_params.get("since", "24h").strip() or "24h"
        try:
            since = validate.moment(period, current_settings().now())
            weight = float(current_settings().discussed_bot_weight)
            entries = discussed_papers(store, reader_of(request), since, limit=50,
                                       bot_weight=weight)  # fmt: skip
        except LightnewsError as error:
            return failure(request, error)
        if wants_json(request):
            return JSONResponse({"since": since.isoformat(),
                                 "papers": [e.to_json() for e in entries]})  # fmt: skip
        periods = [("6h", "6 hours"), ("24h", "24 hours"), ("7d", "7 days"), ("30d", "30 days")]
        return page("discussed.html", entries=entries, since=since.isoformat(), period=period,
                    periods=periods, listening=bool(store.network_paper_posts(1)),
                    title="Discussed now")  # fmt: skip

    def saved(request: Request) -> Response:
        """The saved list, newest saved first; ``?format=bibtex`` or ``json`` export it."""
        stories: list[Story] = []
        papers = []
        reader = reader_of(request)
        states = reader_states(store, reader)
        for key in saved_keys(store, reader) if own_state(request) else []:
            at = states[key][1] or ""
            try:
                if key.startswith("item:"):
                    item = store.get_item(int(key.removeprefix("item:")))
                    stories.append(Story(key=key, title=item.title, time=item.published or "",
                                         url=item.url, reasons=[saved_reason(at)]))  # fmt: skip
                    continue
                paper = store.get_paper(key)
            except (NotFound, ValueError):
                continue  # its paper or item was removed since
            papers.append(paper)
            stories.append(Story(key=key, title=paper.title, time=paper.published or "",
                                 arxiv_id=paper.arxiv_id, category=paper.primary_category,
                                 url=f"https://arxiv.org/abs/{paper.arxiv_id}",
                                 reasons=[saved_reason(at)]))  # fmt: skip
        fmt = request.query_params.get("format")
        if fmt == "bibtex":
            return Response(bibtex(papers), media_type="application/x-bibtex", headers={
                "content-disposition": 'attachment; filename="lightnews-saved.bib"'})  # fmt: skip
        cards = feed_cards(stories, request)
        if wants_json(request) or fmt == "json":
            headers = {} if wants_json(request) else {
                "content-disposition": 'attachment; filename="lightnews-saved.json"'}  # fmt: skip
            return JSONResponse({"saved": [c.to_json() for c in cards]}, headers=headers)
        feed = as_feed(request, "Lightnews: saved", [
            FeedEntry(c.href or c.key, c.title, c.href, c.time, c.summary,
                      [a.name for a in c.authors]) for c in cards])  # fmt: skip
        if feed is not None:
            return feed
        return page("saved.html", cards=cards, title="Saved",
                    feeds=feed_links(request, "Lightnews: saved"))  # fmt: skip

    def scholars(request: Request) -> Response:
        """Every scholar: identities, records, and whether they are followed or muted."""
        reader = reader_of(request)
        mine = store.follows(reader)  # "followed" is whether *this* reader follows them
        rows = [replace(r, followed=r.id in mine)
                for r in store.list_scholars(current_settings().attribution_bar)]  # fmt: skip
        if wants_json(request):
            return JSONResponse([r.to_json() for r in rows])
        muted = muted_scholars(store, reader) if own_state(request) else frozenset()
        return page("scholars.html", scholars=rows, muted=muted,
                    title="Scholars")  # fmt: skip

    def suggestions(request: Request) -> Response:
        """Accounts the reader might follow, each with its reasons and a Follow button."""
        from lightnews.rank.suggest import follow_suggestions

        found = follow_suggestions(store, reader_of(request), limit=50,
                                   bar=current_settings().attribution_bar)  # fmt: skip
        if wants_json(request):
            return JSONResponse({"suggestions": [s.to_json() for s in found]})
        return page("suggestions.html", suggestions=found, title="Whom to follow")

    def manage_scholar(request: Request) -> Response:
        """Follow or unfollow a scholar; confirm, reject or undecide an attributed paper
        (shared: admins), or hide it from the reader's own feed (or show it again).

        Whether a paper is a scholar's is one answer for every reader of the
        instance, so only an admin (or the local reader of an install without
        accounts) gives it, and the audit log records who did. A reader's own
        "hide from my feed" is their "not interested" in the paper: theirs alone.
        """
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
                    return page("error.html", status=403, title="Not allowed", message=SHARED)
                choice = None if action == "undecide" else action
                decide(store, scholar_id, arxiv_id, choice, now_iso(), by=actor_of(visitor))
            elif action in ("hide", "unhide"):
                arxiv_id = validate.paper_id(str(form.get("paper") or "")).base
                hide_paper(store, reader_of(request), arxiv_id, action == "hide", now_iso())
            else:
                raise UsageError("give follow, unfollow, confirm, reject, undecide, hide or unhide")
        except LightnewsError as error:
            return failure(request, error)
        return RedirectResponse(_back(form, f"/scholar/{scholar_id}"), status_code=303)

    def notes_index(request: Request) -> Response:
        """Every notes page among the sources."""
        kinds = set(kinds_where(lambda t: t.note_pages))
        rows = [r for r in store.list_sources() if r.kind in kinds]
        if wants_json(request):
            return JSONResponse([{"id": r.id, "title": r.title or r.address, "url": r.address,
                                  "page": f"/notes/{r.id}"} for r in rows])  # fmt: skip
        return page("notes_index.html", sources=rows, title="Notes")

    def openapi(request: Request) -> Response:
        return JSONResponse(openapi_description())

    routes = [
        Route("/", home), Route("/api/feed", home),
        Route("/scholar/{who:path}", scholar), Route("/api/scholar/{who:path}", scholar),
        Route("/paper/{arxiv_id:path}", paper), Route("/api/paper/{arxiv_id:path}", paper),
        Route("/search", search), Route("/api/search", search),
        Route("/sources", sources), Route("/api/sources", sources),
        Route("/sources/manage", manage_sources, methods=["POST"]),
        Route("/item/{item_id}", item), Route("/api/item/{item_id}", item),
        Route("/daily", daily), Route("/daily/{day}", daily), Route("/api/daily", daily),
        Route("/api/daily/{day}", daily),
        Route("/notes", notes_index), Route("/api/notes", notes_index),
        Route("/notes/{source_id}", notes), Route("/api/notes/{source_id}", notes),
        Route("/discussed", discussed), Route("/api/discussed", discussed),
        Route("/saved", saved), Route("/api/saved", saved),
        Route("/scholars", scholars), Route("/api/scholars", scholars),
        Route("/scholars/manage", manage_scholar, methods=["POST"]),
        Route("/suggestions", suggestions), Route("/api/suggestions", suggestions),
        Route("/follow", follow, methods=["POST"]),
        Route("/mark", mark, methods=["POST"]), Route("/api/mark", mark, methods=["POST"]),
        Route("/watch", watch, methods=["POST"]),
        Route("/api/openapi.json", openapi),
        *account_routes(store, page, current_settings, reader_settings,
                        lambda: secret, read_form, windows),
        Mount("/static", StaticFiles(packages=[("lightnews.serve", "static")]), name="static"),
    ]  # fmt: skip

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = THREADS
        catch_up_in_background(True)
        yield
        catch_up_in_background(False)
        store.close()

    async def no_route(request: Request, exc: Exception) -> Response:
        """Starlette's own 404 and 405, in the site's layout (JSON under /api)."""
        status = getattr(exc, "status_code", 404)
        message = ("There is no page at this address." if status == 404
                   else "This address does not take that kind of request.")  # fmt: skip
        headers = getattr(exc, "headers", None)  # 405 says which methods it takes (Allow)
        if wants_json(request):
            return JSONResponse({"error": message}, status_code=status, headers=headers)
        # Drawn from memory: this runs on the event loop, where a database call would hold
        # up every request (and an outage would turn a 404 into a 500).
        response = page("error.html", status=status, message=message, from_memory=True,
                        title="Not found" if status == 404 else "Cannot do that")  # fmt: skip
        response.headers.update(headers or {})
        return response

    def uncaught(request: Request, error: Exception) -> Response:
        """A Lightnews error no handler caught (a search too expensive...), or the database's."""
        if isinstance(error, LightnewsError):
            return failure(request, error)
        return busy(request, error)

    secret = site_secret(store, current_settings())
    handlers: dict[Any, Any] = dict.fromkeys((LightnewsError, *BACKEND_ERRORS), uncaught)
    handlers.update({404: no_route, 405: no_route})
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    app.state.store = store
    first = current_settings()

    def takes(method: str, path: str) -> bool:
        """A route takes ``method`` at ``path`` (a form to check), else the router says 405."""
        return any(isinstance(r, Route) and method in (r.methods or ())
                   and r.path_regex.match(path) for r in routes)  # fmt: skip

    app.add_middleware(
        SiteGuard, secret=secret, allowed_hosts=first.allowed_hosts, gate=StoreGate(store),
        session_seconds=float(first.session_hours) * 3600, read_only=public_read_only,
        open_without_accounts=open_without_accounts, on_error=busy, takes=takes,
    )  # fmt: skip
    return app


def own_state(request: Request) -> bool:
    """Whether the page shows and uses the reader's own saves, reads, mutes and feedback:
    not on a public read-only instance, whose pages show no one's private state."""
    return not visitor_of(request).read_only


def reader_of(request: Request) -> ReaderId:
    """Whose page this is: the signed-in reader, or the local reader of an install without
    accounts (found for every request by :class:`~lightnews.serve.security.SiteGuard`)."""
    return visitor_of(request).reader


# -- the reader's own state ---------------------------------------------------------------
# Every read and write of what the reader owns (read, saved, followed, muted, decisions)
# goes through these few functions, so that per-user state changes them alone.


def reader_states(store: Store, reader: ReaderId) -> dict[str, tuple[str | None, str | None]]:
    """Story key → (read at, saved at)."""
    return store.story_states(reader)


#: Why a reader who is not an admin may not confirm or reject a scholar's paper.
SHARED = ("Whether a paper is a scholar's is decided for every reader, by an admin: ask one "
          "of them. “Hide from my feed” hides it for you alone.")  # fmt: skip

#: The reader's word on a paper, for their learned ranker (store/feedback.py): the form's
#: action and what is stored (None takes it back).
FEEDBACK_ACTIONS: dict[str, str | None] = {
    "more-like-this": "more-like-this", "not-interested": "not-interested", "no-feedback": None,
}  # fmt: skip


def mark_story(store: Store, reader: ReaderId, key: str, now: str, *, read: bool | None = None,
               saved: bool | None = None) -> None:  # fmt: skip
    store.mark_story(reader, key, now, read=read, saved=saved)


def saved_keys(store: Store, reader: ReaderId) -> list[str]:
    """Saved stories' keys, the most recently saved first."""
    states = reader_states(store, reader)
    saved = [(at, key) for key, (_, at) in states.items() if at]
    return [key for _, key in sorted(saved, reverse=True)]


def set_followed(store: Store, reader: ReaderId, scholar_id: int, followed: bool) -> None:
    store.set_followed(reader, scholar_id, followed, now_iso())


def set_mute(store: Store, reader: ReaderId, kind: str, value: str, now: str, muted: bool) -> None:
    store.set_mute(reader, kind, value, now, muted=muted)


def muted_scholars(store: Store, reader: ReaderId) -> frozenset[str]:
    return store.mutes(reader).scholar


def decide(
    store: Store, scholar_id: int, arxiv_id: str, decision: str | None, now: str, *, by: str
) -> None:
    """Confirm or reject a paper for a scholar, for every reader (kept across re-ingest),
    then re-attribute; the audit log says ``by`` whom."""
    from lightnews.link.attribution import attribute_scholar

    store.get_paper(arxiv_id)
    store.set_decision(scholar_id, arxiv_id, decision, now, by=by)
    store.audit(by, f"attribution.{decision or 'undecide'}", f"#{scholar_id} {arxiv_id}", now)
    attribute_scholar(store, scholar_id)


def hide_paper(store: Store, reader: ReaderId, arxiv_id: str, hidden: bool, now: str) -> None:
    """Hide a paper from the reader's own feed (their "not interested"), or show it again."""
    paper = store.paper_row_id(arxiv_id)
    if paper is None:
        raise NotFound(f"no paper {arxiv_id} in the library")
    if hidden:
        store.set_paper_feedback(reader, paper, "not-interested", now)
    elif store.paper_feedback(reader).get(paper) == "not-interested":
        store.set_paper_feedback(reader, paper, None, now)


def hidden_papers(store: Store, reader: ReaderId) -> frozenset[str]:
    """arXiv ids of the papers the reader hid from their feed ("not interested")."""
    ids = [p for p, said in store.paper_feedback(reader).items() if said == "not-interested"]
    if not ids:
        return frozenset()
    return frozenset(h.arxiv_id for h in store.papers_by_rowids(ids).values())


def actor_of(visitor: Visitor) -> str:
    """Who the audit log names for what ``visitor`` does."""
    return visitor.user.name if visitor.user else "local reader"


def decisions(store: Store, scholar_id: int) -> dict[str, str]:
    return store.decisions(scholar_id)


def site_secret(store: Store, settings: Settings) -> str:
    """The key that signs form tokens: the setting, else the one saved in the library.

    Made at random the first time and saved, so that every web process of the
    library (``serve --workers N``, several machines) signs with the same key;
    two processes starting at once keep whichever was saved first.
    """
    if settings.secret_key:
        return str(settings.secret_key)
    saved = store.saved_settings().get("secret_key")
    if saved:
        return saved
    with store.transaction():
        if not store.saved_settings().get("secret_key"):
            store.save_setting("secret_key", secrets.token_urlsafe(32))
    return store.saved_settings()["secret_key"]


def app_from_environment() -> Starlette:
    """The application for ``LIGHTNEWS_DB`` (``serve --workers N`` starts it in each process)."""
    from lightnews.store import default_db_path

    return create_app(
        os.environ.get("LIGHTNEWS_DB") or default_db_path(),
        public_read_only=bool(os.environ.get("LIGHTNEWS_SERVE_READ_ONLY")),
        open_without_accounts=bool(os.environ.get("LIGHTNEWS_SERVE_LOOPBACK", "1")),
    )


def _search_filter_kinds() -> list[tuple[str, str]]:
    """``(kind, label)`` of the source kinds a search can be narrowed to, "any" first."""
    offered = sorted((t.filter_order, kind, t.filter_label) for kind, t in all_traits().items()
                     if t.filter_label)  # fmt: skip
    return [("", "any"), *((kind, label) for _, kind, label in offered if label)]


def alternate_link(kind: str, title: str, href: str) -> Markup:
    """``<link rel="alternate">`` to one of the page's feeds (autodiscovery), if safe."""
    safe = safe_href(href)
    if safe is None:
        return Markup("")
    return Markup('<link rel="alternate" type="{}" title="{}" href="{}">').format(kind, title, safe)


def thumbnail(url: str) -> Markup:
    """A decorative thumbnail from an https address (nothing for any other)."""
    safe = safe_href(url)
    if safe is None or not safe.lower().startswith("https://"):
        return Markup("")
    return Markup('<img class="thumb" src="{}" alt="" loading="lazy" width="120" height="63">'
                  ).format(safe)  # fmt: skip


def _empty_range(typed: SearchFilters, now: datetime) -> bool:
    """Both dates readable and the start after the end (the API answers "no hits")."""
    try:
        since = validate.search_date(typed.since, now) if typed.since else None
        until = validate.search_date(typed.until, now) if typed.until else None
    except UsageError:
        return False
    return bool(since and until and since > until)


def _with_marked(back: str, key: str) -> str:
    """``back`` (a path, maybe with a query and an anchor) naming the story just marked."""
    path, _, anchor = back.partition("#")
    base, _, query = path.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query) if k != "marked"]
    return f"{base}?{urlencode([*kept, ('marked', key)])}" + (f"#{anchor}" if anchor else "")


def _back(form: FormData, default: str) -> str:
    """The form's ``back``: a path on this site, else ``default`` (only ever back to this site)."""
    back = str(form.get("back") or default)
    # Browsers drop tabs and newlines and read a backslash as "/": "/\t/host" would leave.
    if any(c < " " or c in "\\\x7f" for c in back):
        return default
    return back if back.startswith("/") and not back.startswith("//") else default


def saved_reason(at: str) -> Reason:
    return reason("saved " + relative_time(at, utc_now()) if at else "saved")


def pages_for(total: int, per_page: int) -> int:
    return max(1, math.ceil(total / per_page))


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
