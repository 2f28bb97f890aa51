"""What a stranger's web page, a rebound DNS name or a stored link cannot do to the site.

Three guards in one place, so that a new route or template cannot skip them:

- **Hosts.** Requests must name one of the site's own hosts (``allowed_hosts``,
  loopback names by default): a DNS-rebinding page that resolves its own name
  to 127.0.0.1 gets 400 instead of the reader's library.
- **Forms.** Every state-changing request (anything but GET, HEAD, OPTIONS)
  must come from this site: a foreign ``Origin`` or ``Referer`` or a browser's
  ``Sec-Fetch-Site: cross-site`` is refused, and so is a request without the
  form token. The token is a double-submit pair: a random value in an
  ``HttpOnly``, ``SameSite=Strict`` cookie, and its HMAC under the instance's
  secret in the form (``csrf_token``) or the ``X-CSRF-Token`` header. Another
  site can neither read the cookie nor compute the HMAC.
- **Headers.** Every response carries a content security policy without inline
  script, ``frame-ancestors 'none'``, ``nosniff`` and a referrer policy (and
  ``Strict-Transport-Security`` when served over HTTPS).
- **Who is asking.** With accounts (a :class:`Gate` says whether there are
  any), every request but the sign-in page, static files and secret feed URLs
  needs a session: a signed cookie (``HttpOnly``, ``SameSite=Lax``, ``Secure``
  over HTTPS) naming the account, its session epoch ("sign out everywhere"
  raises it), when it was made (it expires) and the session's secret, whose
  digest names a row the server keeps for that account: signing out, or the
  account's removal, deletes the row, so a copied cookie opens nothing, and
  never another account. The form token is then bound
  to the session as well as to the double-submit cookie, and both are made
  anew at sign-in, so a token from before (or from another session) is
  refused. JSON API writes need an API token (``Authorization: Bearer``);
  a cookie alone never writes through the API. Without accounts the one
  local reader needs no sign-in (``serve`` allows that on loopback only), and
  a read-only instance refuses every state-changing request.
  The reader of each request is put in the request's scope
  (:func:`visitor_of`), where every page reads it.

Links are the fourth guard and live in the templates: :func:`safe_href` is the
only way a stored URL becomes an ``href`` (the ``link`` template global).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

import anyio.to_thread
import orjson
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lightnews.store.readers import LOCAL_READER, ReaderId, UserView

__all__ = [
    "CSRF_COOKIE",
    "CSRF_FIELD",
    "CSRF_HEADER",
    "HSTS",
    "LOOPBACK_HOSTS",
    "PUBLIC_PATHS",
    "SECURITY_HEADERS",
    "SESSION_COOKIE",
    "Gate",
    "SiteGuard",
    "Visitor",
    "csrf_field",
    "csrf_token_for",
    "current_visitor",
    "link",
    "new_session_secret",
    "safe_href",
    "session_cookies",
    "signed_out_cookies",
    "visitor_of",
    "without_post_forms",
]

CSRF_COOKIE = "lightnews_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Methods that can change state: checked as forms. Others (TRACE...) reach the router,
#: which answers 405, since no route takes them.
CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_FORM_BYTES = 1 << 20

SECURITY_HEADERS: Mapping[str, str] = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
        "img-src 'self' https: data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}

SESSION_COOKIE = "lightnews_session"
HSTS = "max-age=31536000"
#: Paths anyone may open on an instance with accounts (a feed reader cannot sign in).
PUBLIC_PATHS = ("/signin", "/static/", "/feeds/", "/favicon.ico")

_token: ContextVar[str] = ContextVar("lightnews_csrf_token", default="")


def csrf_token_for(secret: str, cookie: str, session: str = "") -> str:
    """The form token that goes with a cookie value and a session: an HMAC under the site secret.

    ``session`` is the signed-in session's own random part ("" before sign-in),
    so a token is good for one browser and one session only.
    """
    message = b"csrf:" + cookie.encode() + b"|" + session.encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


class Gate(Protocol):
    """What the guard asks the library about readers (each call may block: run in a thread)."""

    def has_accounts(self) -> bool: ...

    def session_user(self, user_id: int, epoch: int, session: str) -> UserView | None:
        """The account of a live server-side session (``session``: the cookie's secret)."""
        ...

    def token_user(self, token: str) -> UserView | None: ...


@dataclass(frozen=True, slots=True)
class Visitor:
    """Who is asking: the reader whose state a page shows and changes."""

    reader: ReaderId
    #: The signed-in account (None: the local reader of an instance without accounts,
    #: or nobody signed in on a public path).
    user: UserView | None = None
    #: The session's random part ("" without a session).
    session: str = ""
    #: Came with an API token instead of a session.
    via_token: bool = False
    #: Nobody is signed in on an instance with accounts (public paths only).
    anonymous: bool = False
    #: The instance refuses every change.
    read_only: bool = False

    @property
    def admin(self) -> bool:
        """May manage sources and accounts: an admin, or the one local reader."""
        return (self.user.admin if self.user is not None else not self.anonymous) and not (
            self.read_only
        )


_visitor: ContextVar[Visitor | None] = ContextVar("lightnews_visitor", default=None)


def current_visitor() -> Visitor | None:
    """Who the page being rendered is for (a template global: the account links)."""
    return _visitor.get()


def visitor_of(request: Request) -> Visitor:
    """The :class:`Visitor` the guard found for this request."""
    visitor = request.scope.get("lightnews.visitor")
    if not isinstance(visitor, Visitor):  # only when the app runs without its guard
        raise RuntimeError("the request did not pass through SiteGuard")
    return visitor


def _session_mac(secret: str, payload: str) -> str:
    return hmac.new(secret.encode(), b"session:" + payload.encode(), hashlib.sha256).hexdigest()


def _cookie_attrs(secure: bool, max_age: int | None, same_site: str) -> str:
    age = f"; Max-Age={max_age}" if max_age is not None else ""
    return f"; Path=/; HttpOnly; SameSite={same_site}{age}" + ("; Secure" if secure else "")


def new_session_secret() -> str:
    """The random part of a new session: in the cookie only (the server keeps its digest)."""
    return secrets.token_urlsafe(24)


def session_cookies(
    secret: str,
    user: UserView,
    session: str,
    *,
    secure: bool,
    max_age: int,
    now: float | None = None,
) -> list[str]:
    """``Set-Cookie`` values that sign ``user`` in with the server-side ``session`` (its
    random part, from :func:`new_session_secret`), and a new form cookie."""
    issued = int(time.time() if now is None else now)
    payload = f"{user.id}.{user.session_epoch}.{issued}.{session}"
    value = f"{payload}.{_session_mac(secret, payload)}"
    return [
        f"{SESSION_COOKIE}={value}" + _cookie_attrs(secure, max_age, "Lax"),
        f"{CSRF_COOKIE}={secrets.token_urlsafe(32)}" + _cookie_attrs(secure, None, "Strict"),
    ]


def signed_out_cookies(*, secure: bool) -> list[str]:
    """``Set-Cookie`` values that end the session in this browser (and renew the form cookie)."""
    return [
        f"{SESSION_COOKIE}=" + _cookie_attrs(secure, 0, "Lax"),
        f"{CSRF_COOKIE}={secrets.token_urlsafe(32)}" + _cookie_attrs(secure, None, "Strict"),
    ]


_SESSION = re.compile(r"(\d{1,18})\.(\d{1,18})\.(\d{1,12})\.([\w-]{10,64})\.([0-9a-f]{64})")


def _read_session(secret: str, value: str | None) -> tuple[int, int, int, str] | None:
    """``(user id, epoch, issued, nonce)`` of a well-signed session cookie, else None."""
    match = _SESSION.fullmatch(value or "")
    if match is None:
        return None
    payload = value.rsplit(".", 1)[0] if value else ""
    if not hmac.compare_digest(_session_mac(secret, payload), match[5]):
        return None
    return int(match[1]), int(match[2]), int(match[3]), match[4]


#: A form that posts, to its end (forms do not nest in HTML).
_POST_FORM = re.compile(r"<form\b(?=[^>]*\bmethod=\"post\").*?</form>", re.I | re.S)


def without_post_forms(html: str) -> str:
    """A page of a read-only instance: every form that would change something is gone."""
    return _POST_FORM.sub("", html)


def csrf_field() -> Markup:
    """The hidden form input every POST form carries (a template global)."""
    return Markup('<input type="hidden" name="{}" value="{}">').format(CSRF_FIELD, _token.get())


def safe_href(url: object) -> str | None:
    """``url`` if a browser may follow it from our pages, else None.

    Accepted: absolute http(s) URLs with a host, and paths on this site (``/x``,
    ``?q``, ``#a``; not ``//host``, which leaves the site). Everything else
    (``javascript:``, ``data:``, ``vbscript:``, odd whitespace tricks) is refused.
    """
    if not isinstance(url, str):
        return None
    text = url.strip()
    if not text or any(ord(ch) < 0x20 or ch in "\\\x7f" for ch in text):
        return None
    if text[0] in "?#" or (text[0] == "/" and not text.startswith("//")):
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() in ("http", "https") and parts.hostname:
        return text
    return None


def link(url: object, text: object = None, **attributes: str) -> Markup:
    """An ``<a>`` to ``url`` when it is safe to follow, else the text alone (a template global)."""
    # Every value is escaped before it is joined (Markup.format costs ten times more,
    # and a feed page draws a few hundred links).
    label = escape(url if text is None else text)
    href = safe_href(url)
    if href is None:
        return Markup(f"<span>{label}</span>")
    extra = "".join(
        f' {escape(name.rstrip("_").replace("_", "-"))}="{escape(value)}"'
        for name, value in attributes.items()
    )
    return Markup(f'<a href="{escape(href)}"{extra}>{label}</a>')


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _host_name(host: str) -> str:
    """The name part of a Host header: ``[::1]:8080`` → ``::1``, ``a.org:80`` → ``a.org``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class SiteGuard:
    """ASGI middleware: allowed hosts, who is asking, same-site form posts with a token,
    security headers."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        secret: str,
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
        gate: Gate | None = None,
        session_seconds: float = 14 * 86400,
        read_only: bool = False,
        open_without_accounts: bool = True,
        clock: Callable[[], float] = time.time,
        on_error: Callable[[Request, Exception], Any] | None = None,
        takes: Callable[[str, str], bool] = lambda method, path: True,
    ) -> None:
        self.app = app
        self.secret = secret
        #: Whether a route takes this state-changing method at this path: those requests
        #: are checked as forms. Others change nothing and reach the router, which
        #: answers 405 with the methods the address takes.
        self.takes = takes
        hosts = {h.strip().lower().strip("[]") for h in allowed_hosts if h.strip()}
        self.any_host = "*" in hosts
        self.hosts = frozenset(hosts)
        self.gate = gate
        self.session_seconds = session_seconds
        self.read_only = read_only
        self.open_without_accounts = open_without_accounts
        self.clock = clock
        #: The page (an ASGI response) for a library that cannot say who is asking.
        self.on_error = on_error

    async def _visitor(self, scope: Scope) -> Visitor | tuple[int, str, str]:
        """Who is asking, or the refusal ``(status, content type, body)`` when nobody may."""
        path: str = scope.get("path", "")
        api = path.startswith("/api/") or path == "/api"
        public = path.startswith(PUBLIC_PATHS)
        gate = self.gate
        accounts = gate is not None and await anyio.to_thread.run_sync(gate.has_accounts)
        if gate is None or not accounts:
            if not (self.open_without_accounts or self.read_only):
                return (
                    403,
                    "text/plain; charset=utf-8",
                    (
                        "This instance has no accounts yet, so it answers on loopback only. An "
                        "admin adds one with `lightnews users add NAME --admin`.\n"
                    ),
                )
            return Visitor(LOCAL_READER, read_only=self.read_only)
        authorization = _header(scope, b"authorization") or ""
        if authorization[:7].lower() == "bearer ":
            user = await anyio.to_thread.run_sync(gate.token_user, authorization[7:].strip())
            if user is None or not api:
                return (
                    401,
                    "application/json",
                    orjson.dumps(
                        {
                            "error": (
                                "this API token is unknown or revoked"
                                if user is None
                                else "API tokens are for /api/ addresses"
                            )
                        }
                    ).decode(),
                )
            return Visitor(user.reader, user, via_token=True, read_only=self.read_only)
        found = _read_session(self.secret, _cookie_value(scope, SESSION_COOKIE))
        user = None
        if found is not None:
            user_id, epoch, issued, nonce = found
            if 0 <= self.clock() - issued < self.session_seconds:
                user = await anyio.to_thread.run_sync(gate.session_user, user_id, epoch, nonce)
        if user is not None:
            return Visitor(user.reader, user, session=nonce, read_only=self.read_only)
        if public:
            return Visitor(LOCAL_READER, anonymous=True, read_only=self.read_only)
        if api:
            return (
                401,
                "application/json",
                orjson.dumps(
                    {"error": "sign in, or send an API token (Authorization: Bearer TOKEN)"}
                ).decode(),
            )
        if scope["method"] in SAFE_METHODS:
            target = path + (
                "?" + scope["query_string"].decode("latin-1") if scope.get("query_string") else ""
            )
            expired = "&expired=1" if found is not None else ""
            return 303, "redirect", f"/signin?next={quote(target, safe='')}{expired}"
        return 403, "text/plain; charset=utf-8", "Refused: sign in first.\n"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host") or ""
        if not self.any_host and _host_name(host) not in self.hosts:
            await _plain(send, 400, "This site does not answer to that host name.\n")
            return
        try:
            visitor = await self._visitor(scope)
        except Exception as error:  # the library cannot answer: its own 503 page
            if self.on_error is None:
                raise
            response = self.on_error(Request(scope, receive), error)
            await response(scope, receive, _secured(send))
            return
        if not isinstance(visitor, Visitor):
            status, kind, text = visitor
            if kind == "redirect":
                await _redirect(send, text)
            else:
                await _plain(send, status, text, kind)
            return
        scope["lightnews.visitor"] = visitor
        scope["lightnews.reader"] = visitor.reader
        cookie = self._cookie(scope)
        fresh = cookie is None
        if cookie is None:
            cookie = secrets.token_urlsafe(32)
        token = csrf_token_for(self.secret, cookie, visitor.session)
        # A method no route takes at this address is left to the router (405, not 403).
        unsafe = scope["method"] not in SAFE_METHODS and self.takes(scope["method"], scope["path"])
        if unsafe and self.read_only:
            await _plain(send, 403, "Refused: this instance is read-only.\n")
            return
        if (
            unsafe
            and scope.get("path", "").startswith("/api/")
            and not visitor.via_token
            and (visitor.user is not None)
        ):
            await _plain(
                send,
                403,
                orjson.dumps(
                    {
                        "error": (
                            "JSON API writes need an API token (Authorization: Bearer TOKEN; "
                            "`lightnews tokens create NAME`), not a browser session"
                        )
                    }
                ).decode(),
                "application/json",
            )
            return
        if unsafe and not visitor.via_token:  # a token is not sent by browsers on their own
            refusal = self._foreign(scope, host)
            if refusal is None:
                body, too_big = await _read_body(receive)
                if too_big:
                    await _plain(send, 413, "The form is too large.\n")
                    return
                refusal = await self._check_token(scope, body, fresh, token)
                receive = _replay(body)
            if refusal is not None:
                await _plain(send, 403, refusal)
                return
        secure = scope.get("scheme") == "https"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[tuple[bytes, bytes]] = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                for name, value in SECURITY_HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                if secure:
                    headers.append((b"strict-transport-security", HSTS.encode()))
                if visitor.user is not None:  # a page for one reader is nobody else's
                    headers.append((b"cache-control", b"private, no-store"))
                    headers.append((b"vary", b"Cookie, Authorization"))
                if fresh:
                    attrs = "; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
                    headers.append((b"set-cookie", f"{CSRF_COOKIE}={cookie}{attrs}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        reset = _token.set(token)
        seen = _visitor.set(visitor)
        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            _visitor.reset(seen)
            _token.reset(reset)

    @staticmethod
    def _cookie(scope: Scope) -> str | None:
        value = _cookie_value(scope, CSRF_COOKIE) or ""
        return value if 20 <= len(value) <= 100 else None

    @staticmethod
    def _foreign(scope: Scope, host: str) -> str | None:
        """Why the request comes from another site, or None when nothing says it does."""
        if (_header(scope, b"sec-fetch-site") or "").lower() == "cross-site":
            return "Refused: this form was sent from another site.\n"
        scheme = scope.get("scheme", "http")
        own = f"{scheme}://{host}".lower()
        origin = _header(scope, b"origin")
        if origin is not None:
            if origin.lower() != own:
                return "Refused: this form was sent from another site.\n"
            return None
        referer = _header(scope, b"referer")
        if referer is not None:
            parts = urlsplit(referer)
            if f"{parts.scheme}://{parts.netloc}".lower() != own:
                return "Refused: this form was sent from another site.\n"
        return None

    async def _check_token(self, scope: Scope, body: bytes, fresh: bool, token: str) -> str | None:
        stale = "Refused: the page this form came from is out of date; reload it and try again.\n"
        if fresh:
            return stale
        given = _header(scope, CSRF_HEADER.encode())
        if given is None:
            request = Request(scope, _replay(body))
            try:
                form = await request.form()
            except Exception:  # unreadable form bodies carry no token
                return stale
            value = form.get(CSRF_FIELD)
            given = value if isinstance(value, str) else None
            await form.close()
        if given is None or not hmac.compare_digest(given, token):
            return stale
        return None


def _cookie_value(scope: Scope, name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header is no cookie at all
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks), False


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _secured(send: Send) -> Send:
    """``send`` with the security headers added to the response."""

    async def secured(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                *message.get("headers", []),
                *((k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
            ]
            message = {**message, "headers": headers}
        await send(message)

    return secured


async def _redirect(send: Send, location: str) -> None:
    headers = {
        "location": location,
        "content-type": "text/plain; charset=utf-8",
        **SECURITY_HEADERS,
    }
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": b"Sign in first.\n"})


async def _plain(
    send: Send, status: int, text: str, kind: str = "text/plain; charset=utf-8"
) -> None:
    headers: MutableMapping[str, Any] = {
        "content-type": kind,
        **SECURITY_HEADERS,
    }
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})
