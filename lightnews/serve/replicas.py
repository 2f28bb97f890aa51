"""Read replicas: a group's web processes read from PostgreSQL standbys, write to the primary.

A busy instance's pages, searches and feeds are reads; with the ``read_url``
setting (one or more streaming standbys of the library's server) the web reads
them from a replica, taken in turn, and keeps the primary for what must be
exact: every write, the sign-in and session checks (a signed-out cookie must stop
working at once, not after the replica's lag), and the workers' queue.

A replica lags the primary by a little. A reader must still see their own
change at once: every request that may change something (any method but GET
and HEAD) is answered with a short-lived cookie, and a request carrying it
reads from the primary for ``read_own_writes`` seconds. The cookie is only a
hint for routing: forging it makes a client read from the primary, nothing
more.
"""

from __future__ import annotations

import math
import time
from http.cookies import CookieError, SimpleCookie

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lightnews.errors import UsageError
from lightnews.serve.site import Site
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.postgres import PostgresStore

__all__ = ["WROTE_COOKIE", "ReadRouting", "open_replicas"]

#: The cookie that sends a client's reads to the primary for a while after it wrote.
WROTE_COOKIE = "ln_wrote"
READING = frozenset({"GET", "HEAD"})


def open_replicas(primary: Store, settings: Settings) -> tuple[Store, ...]:
    """The replicas of ``settings.read_url``; none on SQLite (it has no replicas)."""
    if not settings.read_url:
        return ()
    if not isinstance(primary, PostgresStore):
        raise UsageError("read_url names PostgreSQL replicas: the library must be on PostgreSQL")
    return tuple(PostgresStore(url, pool_size=20, replica_of=primary) for url in settings.read_url)


class ReadRouting:
    """Sends each reading request to a replica (unless its client wrote moments ago) and
    marks each writing request's client, for :attr:`Site.store` to read from the right one."""

    def __init__(self, app: ASGIApp, *, site: Site, own_writes: float) -> None:
        self.app, self.site, self.own_writes = app, site, own_writes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.site.replicas:
            await self.app(scope, receive, send)
            return
        reading = scope["method"] in READING
        token = self.site.read_from(reading and not self._wrote_lately(scope))
        try:
            await self.app(scope, receive, send if reading else self._marking(send))
        finally:
            self.site.done_reading(token)

    def _wrote_lately(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"cookie":
                cookie = SimpleCookie()
                try:
                    cookie.load(value.decode("latin-1"))
                    wrote = float(cookie[WROTE_COOKIE].value)
                except (CookieError, KeyError, ValueError, UnicodeDecodeError):
                    continue
                if 0 <= time.time() - wrote <= self.own_writes:
                    return True
        return False

    def _marking(self, send: Send) -> Send:
        seconds = math.ceil(self.own_writes)

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start" and seconds > 0:
                cookie = (
                    f"{WROTE_COOKIE}={time.time():.3f}; Max-Age={seconds}; Path=/; "
                    "HttpOnly; SameSite=Lax"
                )
                headers = [*message.get("headers", ()), (b"set-cookie", cookie.encode())]
                message = {**message, "headers": headers}
            await send(message)

        return marked
