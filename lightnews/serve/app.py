"""The web UI and its JSON API: the same page data the CLI prints, as HTML and JSON.

Server-rendered with Starlette and Jinja2 (autoescaped; HTML from sources was
sanitized before it was stored), usable without JavaScript, readable on a
phone. Every page has a JSON twin under ``/api`` built from the same data.
:func:`create_app` makes one :class:`~lightnews.serve.site.Site` (the store,
the settings, the templates) and the route table; the pages themselves are
plain functions in ``serve/pages/``. ``lightnews serve`` and ``lightnews demo
--port`` run it with uvicorn (``serve --workers N`` through
:func:`app_from_environment`).

Handlers are plain functions: Starlette runs them in its thread pool (at most
``THREADS`` at once), each thread with its own database connection, so a slow
request (a search at its time budget, a write waiting for a refresh to
commit) never holds up the others. A database that cannot answer gives a 503
page that says to try again (JSON under ``/api``), never a 500.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from lightnews.embed.lexical import catch_up_in_background
from lightnews.errors import LightnewsError
from lightnews.normalize.times import now_iso
from lightnews.rank import CandidateWindows
from lightnews.rank.trained import TRAINER
from lightnews.serve.pages import (
    account,
    admin,
    daily,
    discussed,
    feed,
    follow,
    group,
    item,
    mark,
    notes,
    openapi,
    papers,
    saved,
    scholars,
    search,
    sources,
    suggestions,
    watch,
)
from lightnews.serve.replicas import ReadRouting, open_replicas
from lightnews.serve.security import SiteGuard
from lightnews.serve.site import Memory, Site, templates
from lightnews.settings import Settings
from lightnews.store import BACKEND_ERRORS, Store, open_store
from lightnews.store.postgres import PostgresStore, is_postgres_url
from lightnews.store.readers import UserView
from lightnews.store.secrets import digest

__all__ = ["StoreGate", "app_from_environment", "create_app", "site_secret"]

#: Requests handled at once (the rest wait their turn): each holds a thread and a connection.
THREADS = 16
#: Seconds a request waits for a database connection (PostgreSQL) before its 503: a
#: connection is at hand unless the server is down or every one is in use.
CONNECTION_WAIT = 1.0

Handler = Callable[[Site, Request], Response]


def one_blas_thread() -> None:
    """Let numpy's BLAS use one thread in this process (when numpy is installed).

    A web process's parallelism is its requests. The feed's matrix products are
    small (a reader's candidates against their saved papers), and OpenBLAS
    splitting each over both cores made the two threads wait for each other
    whenever the other core was busy: p95 of one such product was 49 ms with
    two threads against 7 ms with one, on this 2-core machine under load (the
    median, 0.1 ms, the same)."""
    try:
        import numpy  # noqa: F401  (loads the BLAS: a limit applies to loaded libraries only)
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=1, user_api="blas")


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
    one_blas_thread()
    store: Store = open_store(db_path)
    memory = Memory(settings or Settings(store.saved_settings()))
    store.write_wait = float(memory.settings.write_wait)
    store.connection_wait = min(store.write_wait, CONNECTION_WAIT) or CONNECTION_WAIT
    site = Site(
        primary=store,
        templates=templates(),
        windows=CandidateWindows(),
        memory=memory,
        secret=site_secret(store, memory.settings),
        given=settings,
        public_read_only=public_read_only,
        replicas=open_replicas(store, memory.settings),
    )
    if is_postgres_url(str(db_path)):  # a group's library: its workers train readers' models
        from lightnews.rank.trained import TRAINER
        from lightnews.worker.queue import training_queue

        TRAINER.queue = training_queue
    table = routes(site)
    handlers: dict[Any, Any] = dict.fromkeys(
        (LightnewsError, *BACKEND_ERRORS), partial(_uncaught, site)
    )
    handlers.update({404: partial(_no_route, site), 405: partial(_no_route, site)})
    app = Starlette(routes=table, lifespan=_lifespan, exception_handlers=handlers)
    app.state.store = store
    app.state.site = site
    first = site.current_settings()
    app.add_middleware(
        SiteGuard,
        secret=site.secret,
        allowed_hosts=first.allowed_hosts,
        gate=StoreGate(store),
        session_seconds=float(first.session_hours) * 3600,
        read_only=public_read_only,
        open_without_accounts=open_without_accounts,
        on_error=site.busy,
        takes=partial(_takes, table),
    )
    app.add_middleware(ReadRouting, site=site, own_writes=float(first.read_own_writes))
    return app


def routes(site: Site) -> list[BaseRoute]:
    """Every address of the site and the page that answers it (``/api/...``: its JSON)."""

    def to(handler: Handler) -> Callable[[Request], Response]:
        return partial(handler, site)

    return [
        Route("/", to(feed.home)),
        Route("/api/feed", to(feed.home)),
        Route("/scholar/{who:path}", to(scholars.scholar)),
        Route("/api/scholar/{who:path}", to(scholars.scholar)),
        Route("/paper/{arxiv_id:path}", to(papers.paper)),
        Route("/api/paper/{arxiv_id:path}", to(papers.paper)),
        Route("/search", to(search.search)),
        Route("/api/search", to(search.search)),
        Route("/sources", to(sources.sources)),
        Route("/api/sources", to(sources.sources)),
        Route("/sources/manage", to(sources.manage_sources), methods=["POST"]),
        Route("/item/{item_id}", to(item.item)),
        Route("/api/item/{item_id}", to(item.item)),
        Route("/daily", to(daily.daily)),
        Route("/daily/{day}", to(daily.daily)),
        Route("/api/daily", to(daily.daily)),
        Route("/api/daily/{day}", to(daily.daily)),
        Route("/notes", to(notes.notes_index)),
        Route("/api/notes", to(notes.notes_index)),
        Route("/notes/{source_id}", to(notes.notes_page)),
        Route("/api/notes/{source_id}", to(notes.notes_page)),
        Route("/discussed", to(discussed.discussed)),
        Route("/api/discussed", to(discussed.discussed)),
        Route("/saved", to(saved.saved)),
        Route("/api/saved", to(saved.saved)),
        Route("/scholars", to(scholars.scholars)),
        Route("/api/scholars", to(scholars.scholars)),
        Route("/scholars/manage", to(scholars.manage_scholar), methods=["POST"]),
        Route("/suggestions", to(suggestions.suggestions)),
        Route("/api/suggestions", to(suggestions.suggestions)),
        Route("/follow", to(follow.follow), methods=["POST"]),
        Route("/mark", to(mark.mark), methods=["POST"]),
        Route("/api/mark", to(mark.mark), methods=["POST"]),
        Route("/watch", to(watch.watch), methods=["POST"]),
        Route("/api", to(openapi.api_index)),
        Route("/api/openapi.json", to(openapi.openapi)),
        Route("/signin", to(account.signin_form)),
        Route("/signin", to(account.signin), methods=["POST"]),
        Route("/signout", to(account.signout), methods=["POST"]),
        Route("/account", to(account.account)),
        Route("/account", to(account.account_change), methods=["POST"]),
        Route("/feeds/{key}/{name}", to(account.feeds)),
        Route("/group", to(group.group)),
        Route("/api/group", to(group.group)),
        Route("/admin", to(admin.admin)),
        Route("/admin/users", to(admin.admin_users), methods=["POST"]),
        Route("/favicon.ico", _favicon),  # asked for by browsers whatever the page says
        Mount("/static", StaticFiles(packages=[("lightnews.serve", "static")]), name="static"),
    ]


def _favicon(request: Request) -> Response:
    return RedirectResponse("/static/favicon.svg", status_code=301)


@asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    anyio.to_thread.current_default_thread_limiter().total_tokens = THREADS
    for store in (app.state.store, *app.state.site.replicas):
        if isinstance(store, PostgresStore):  # a connection at hand for each request thread
            store.keep_ready(THREADS)
    catch_up_in_background(True)
    yield
    catch_up_in_background(False)
    await anyio.to_thread.run_sync(TRAINER.settle, app.state.store)  # its thread reads the store
    for replica in app.state.site.replicas:
        replica.close()
    app.state.store.close()


async def _no_route(site: Site, request: Request, exc: Exception) -> Response:
    """Starlette's own 404 and 405, in the site's layout (JSON under /api)."""
    status = getattr(exc, "status_code", 404)
    message = (
        "There is no page at this address."
        if status == 404
        else "This address does not take that kind of request."
    )
    headers = getattr(exc, "headers", None)  # 405 says which methods it takes (Allow)
    # Drawn from memory: this runs on the event loop, where a database call would hold
    # up every request (and an outage would turn a 404 into a 500).
    return site.respond(
        request,
        lambda: {"error": message},
        lambda: site.page(
            "error.html",
            status=status,
            message=message,
            from_memory=True,
            title="Not found" if status == 404 else "Cannot do that",
        ),
        status=status,
        headers=headers,
    )


def _uncaught(site: Site, request: Request, error: Exception) -> Response:
    """A Lightnews error no handler caught (a search too expensive...), or the database's."""
    if isinstance(error, LightnewsError):
        return site.failure(request, error)
    return site.busy(request, error)


def _takes(table: list[BaseRoute], method: str, path: str) -> bool:
    """A route takes ``method`` at ``path`` (a form to check), else the router says 405."""
    return any(
        isinstance(r, Route) and method in (r.methods or ()) and r.path_regex.match(path)
        for r in table
    )


class StoreGate:
    """The guard's questions answered from the library (see ``security.Gate``)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def has_accounts(self) -> bool:
        return self.store.user_count() > 0

    def session_user(self, user_id: int, epoch: int, session: str) -> UserView | None:
        return self.store.session_user(user_id, epoch, digest(session), now_iso())

    def token_user(self, token: str) -> UserView | None:
        if not token or len(token) > 200:
            return None
        return self.store.token_user(digest(token), now_iso())


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
    return store.keep_setting("secret_key", secrets.token_urlsafe(32))


def app_from_environment() -> Starlette:
    """The application for ``LIGHTNEWS_DB`` (``serve --workers N`` starts it in each process)."""
    from lightnews.store import default_db_path

    return create_app(
        os.environ.get("LIGHTNEWS_DB") or default_db_path(),
        public_read_only=bool(os.environ.get("LIGHTNEWS_SERVE_READ_ONLY")),
        open_without_accounts=bool(os.environ.get("LIGHTNEWS_SERVE_LOOPBACK", "1")),
    )
