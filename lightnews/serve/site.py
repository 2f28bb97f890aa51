"""The one site object every page handler is given: the store, the settings, the templates.

A handler in ``serve/pages/`` is a plain function of ``(site, request)``; what
it shares with the others lives here, made once by ``serve.app.create_app``:
the library's store, the settings (fixed by the caller, or read from the
library on each request), the Jinja2 templates, the feed's candidate windows
kept between requests, and the helpers every page uses. ``site.store`` is the
store the request reads from: the library's primary, or with read replicas
(the ``read_url`` setting) one of them for a reading request, chosen by
:func:`read_from` for the whole request. Then: :meth:`Site.page`
draws a template, :meth:`Site.respond` chooses the answer's form (JSON under
``/api``, a feed for ``?format=atom`` or ``jsonfeed``, else HTML), and
:meth:`Site.failure` and :meth:`Site.busy` turn an error into its page.

Handlers run in Starlette's thread pool, so reading the request's body goes
through :func:`read_form` and :func:`read_json`, which hop to the event loop.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import anyio.from_thread
import orjson
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from lightnews.deliver.export import FeedEntry, atom_feed, json_feed
from lightnews.errors import (
    Ambiguous,
    LightnewsError,
    NotFound,
    PastLastPage,
    Unavailable,
    UsageError,
)
from lightnews.normalize.tex import tex_to_text
from lightnews.normalize.times import utc_now
from lightnews.rank import CandidateWindows, display_name, rank_stories
from lightnews.rank.trained import TRAINER
from lightnews.serve.cards import absolute_time, relative_time
from lightnews.serve.security import (
    csrf_field,
    current_visitor,
    link,
    safe_href,
    visitor_of,
    without_post_forms,
)
from lightnews.serve.story import KIND_LABELS, confidence_words
from lightnews.settings import Settings, with_reader_settings
from lightnews.store import ReaderId, Store, unavailable

__all__ = [
    "MAX_PAGE",
    "PER_PAGE",
    "RETRY_AFTER",
    "Feed",
    "JsonAnswer",
    "Memory",
    "Site",
    "back_to",
    "own_state",
    "read_form",
    "read_json",
    "reader_of",
    "templates",
    "wants_json",
]

PER_PAGE = 20
MAX_PAGE = 100_000
#: Seconds a client is asked to wait before retrying when the database is busy.
RETRY_AFTER = 5
#: The library's now while a page renders (its ``clock`` setting, else the real clock).
_PAGE_NOW: ContextVar[datetime | None] = ContextVar("page_now", default=None)

#: The store the current request reads from (set by the app's read routing; None: the primary).
_READS: ContextVar[Store | None] = ContextVar("reads", default=None)

#: A page's feed: its title and its entries (made only when the feed is asked for).
Feed = tuple[str, Callable[[], list[FeedEntry]]]


class JsonAnswer(JSONResponse):
    """A JSON answer written by orjson: the same bytes as Starlette's compact UTF-8, in
    a tenth of the time (a feed of 50 stories, 34 kB: 0.04 ms of CPU against 0.37)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)


class Memory:
    """The settings last read from the library: the 503 page is drawn with them, from
    memory, when the library cannot answer (an outage must not turn it into a 500)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings


@dataclass(frozen=True, slots=True)
class Site:
    """What every page of one web application shares (see the module's docstring)."""

    #: The library: every write, and every read without a replica.
    primary: Store
    templates: Environment
    #: The feed's candidates, kept between requests (the home page and secret feeds).
    windows: CandidateWindows
    memory: Memory
    #: The key that signs form tokens and session cookies.
    secret: str
    #: Settings given by the caller (tests, the demo); None: read from the library.
    given: Settings | None = None
    #: Pages and feeds only: every form hidden and every change refused.
    public_read_only: bool = False
    #: Read replicas of the primary (PostgreSQL hot standbys), taken in turn.
    replicas: tuple[Store, ...] = ()
    turns: Iterator[int] = field(default_factory=itertools.count)

    @property
    def store(self) -> Store:
        """The store this request reads from (its writes go to the primary through it only
        when it is the primary: a reading request never writes)."""
        return _READS.get() or self.primary

    def read_from(self, reading: bool) -> Token[Store | None]:
        """Route the current request: a reading one to the next replica, when there are any;
        returns the token that :meth:`done_reading` takes back."""
        chosen = (
            self.replicas[next(self.turns) % len(self.replicas)]
            if (reading and self.replicas)
            else None
        )
        return _READS.set(chosen)

    @staticmethod
    def done_reading(token: Token[Store | None]) -> None:
        _READS.reset(token)

    def current_settings(self) -> Settings:
        if self.given is not None:
            return self.given
        self.memory.settings = Settings(self.store.saved_settings())
        return self.memory.settings

    def reader_settings(self, reader: ReaderId) -> Settings:
        """The instance's settings with the reader's own over them."""
        base = self.given or Settings(self.store.saved_settings())
        return with_reader_settings(base, self.store.reader_settings(reader))

    def learn_from(self, reader: ReaderId) -> None:
        """The reader did something their learned model learns from: have it trained again
        off this request (by the workers, or a thread of this process), if it changed; a
        model trained here has the reader's slice chosen with it there too, so that their
        next feed reads it (:meth:`warm_feed`)."""
        settings = self.reader_settings(reader)
        TRAINER.schedule(
            self.primary, reader, settings, then=lambda: self.warm_feed(reader, settings)
        )

    def warm_feed(self, reader: ReaderId, settings: Settings) -> None:
        """Rank the reader's feed once, off any request, for what it keeps between requests
        (the slice their new model chooses, the shared window)."""
        rank_stories(
            self.primary,
            reader,
            limit=1,
            half_life_hours=float(settings.half_life_hours),
            bar=float(settings.attribution_bar),
            settings=settings,
            windows=self.windows,
        )

    def page(
        self, name: str, status: int = 200, *, from_memory: bool = False, **context: Any
    ) -> HTMLResponse:
        """The template as a response; ``from_memory``: without asking the library."""
        shown = self.memory.settings if from_memory else self.current_settings()
        _PAGE_NOW.set(shown.now())  # "3 hours ago" by the library's clock
        html = self.templates.get_template(name).render(**context)
        if self.public_read_only:
            html = without_post_forms(html)
        return HTMLResponse(html, status_code=status)

    def respond(
        self,
        request: Request,
        json: Callable[[], Any],
        html: Callable[[], Response],
        *,
        feed: Feed | None = None,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """The answer in the form asked for: ``json()`` under ``/api``, the page's ``feed``
        for ``?format=atom`` or ``?format=jsonfeed``, else the page ``html()`` draws.

        Only the form chosen is made. ``status`` is the JSON answer's (a page gives
        its own to :meth:`page`); ``headers`` go with either.
        """
        if wants_json(request):
            return JsonAnswer(json(), status_code=status, headers=headers)
        kind = request.query_params.get("format")
        if feed is not None and kind in ("atom", "jsonfeed"):
            title, entries = feed
            if kind == "atom":
                return Response(
                    atom_feed(title, str(request.url), entries()), media_type="application/atom+xml"
                )
            return JsonAnswer(
                json_feed(title, str(request.url), entries()), media_type="application/feed+json"
            )
        response = html()
        response.headers.update(headers or {})
        return response

    def busy(self, request: Request, error: Exception) -> Response:
        """503: the database could not answer (busy past its wait, or broken); try again."""
        message = str(unavailable(error))

        def html() -> Response:
            return self.page(
                "error.html",
                status=503,
                title="Busy: please try again",
                message=f"{message}. Nothing was lost; reload the page in a few seconds.",
                from_memory=True,
            )

        return self.respond(
            request,
            lambda: {"error": message, "retry_after": RETRY_AFTER},
            html,
            status=503,
            headers={"Retry-After": str(RETRY_AFTER)},
        )

    def failure(
        self,
        request: Request,
        error: LightnewsError,
        choice: Callable[[str], str] = lambda key: f"/scholar/{key}",
    ) -> Response:
        """The error's page (JSON under /api): 404, 400, or 503 for the database.

        Several matches (:class:`Ambiguous`) answer 300 Multiple Choices: a page
        that lists them, each linked to ``choice(key)``.
        """
        if isinstance(error, Unavailable):
            return self.busy(request, error)
        if isinstance(error, Ambiguous):
            choices = [(choice(key), label) for key, label in error.choices]
            paths = [(href.removeprefix("/"), label) for href, label in choices]  # on this site
            return self.respond(
                request,
                lambda: {
                    "error": str(error),
                    "choices": [
                        {"id": key, "label": label, "url": href}
                        for (key, label), (href, _) in zip(error.choices, choices, strict=True)
                    ],
                },
                lambda: self.page(
                    "error.html",
                    status=300,
                    title="Which one?",
                    choices=paths,
                    message=str(error).partition(":")[0] + ". Choose one:",
                ),
                status=300,
            )
        status = 404 if isinstance(error, NotFound | PastLastPage) else 400
        return self.respond(
            request,
            lambda: {"error": str(error)},
            lambda: self.page(
                "error.html",
                status=status,
                message=str(error),
                title="Not found" if status == 404 else "Cannot do that",
            ),
            status=status,
        )

    def refused(self, message: str, status: int = 403) -> Response:
        """The page saying the visitor may not do that."""
        return self.page("error.html", status=status, title="Not allowed", message=message)


def counted(n: object, one: str, many: str) -> str:
    """``1 reply``, ``2 replies``, ``0 replies`` (a missing count reads as 0)."""
    if n is None:
        n = 0
    return f"{n} {one if n == 1 else many}"


def templates() -> Environment:
    """The site's Jinja2 templates (autoescaped) with their filters and globals."""
    env = Environment(
        loader=PackageLoader("lightnews.serve", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["day"] = lambda value: (value or "")[:10]
    env.filters["counted"] = counted
    env.filters["plural"] = lambda n, one, many: one if n == 1 else many
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
    return env


def _kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


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
    return Markup(
        '<img class="thumb" src="{}" alt="" loading="lazy" width="120" height="63">'
    ).format(safe)


def feed_links(request: Request, title: str) -> list[tuple[str, str, str]]:
    """This page's feeds as ``(type, title, href)``: linked and autodiscovered."""
    query = {k: v for k, v in request.query_params.items() if k not in ("format", "page")}
    base = request.url.path + "?" + urlencode({**query, "format": ""})
    return [
        ("application/atom+xml", f"{title} (Atom)", base + "atom"),
        ("application/feed+json", f"{title} (JSON Feed)", base + "jsonfeed"),
    ]


def wants_json(request: Request) -> bool:
    """The request is to the JSON API (``/api/...``)."""
    return request.url.path.startswith("/api/")


def own_state(request: Request) -> bool:
    """Whether the page shows and uses the reader's own saves, reads, mutes and feedback:
    not on a public read-only instance, whose pages show no one's private state."""
    return not visitor_of(request).read_only


def reader_of(request: Request) -> ReaderId:
    """Whose page this is: the signed-in reader, or the local reader of an install without
    accounts (found for every request by :class:`~lightnews.serve.security.SiteGuard`)."""
    return visitor_of(request).reader


async def _form(request: Request) -> FormData:
    return await request.form()


def read_form(request: Request) -> FormData:
    """The request's form, read from a handler running in the thread pool."""
    return anyio.from_thread.run(_form, request)


async def _json(request: Request) -> dict[str, Any]:
    try:
        data = await request.json()
    except ValueError:
        raise UsageError("the body is not JSON") from None
    if not isinstance(data, dict):
        raise UsageError("send a JSON object")
    return data


def read_json(request: Request) -> dict[str, Any]:
    """The request's JSON object as sent, from the thread pool: its handler checks the
    fields it reads (a number where text belongs is refused, not read as text)."""
    return anyio.from_thread.run(_json, request)


def back_to(form: Mapping[str, Any], default: str) -> str:
    """The form's ``back``: a path on this site, else ``default`` (only ever back to this site)."""
    back = str(form.get("back") or default)
    # Browsers drop tabs and newlines and read a backslash as "/": "/\t/host" would leave.
    if any(c < " " or c in "\\\x7f" for c in back):
        return default
    return back if back.startswith("/") and not back.startswith("//") else default
