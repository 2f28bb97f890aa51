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
  script, ``frame-ancestors 'none'``, ``nosniff`` and a referrer policy.

Links are the fourth guard and live in the templates: :func:`safe_href` is the
only way a stored URL becomes an ``href`` (the ``link`` template global).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from contextvars import ContextVar
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "CSRF_COOKIE",
    "CSRF_FIELD",
    "CSRF_HEADER",
    "LOOPBACK_HOSTS",
    "SECURITY_HEADERS",
    "SiteGuard",
    "csrf_field",
    "csrf_token_for",
    "link",
    "safe_href",
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
        "default-src 'none'; style-src 'self'; img-src 'self' https: data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}

_token: ContextVar[str] = ContextVar("lightnews_csrf_token", default="")


def csrf_token_for(secret: str, cookie: str) -> str:
    """The form token that goes with a cookie value: its HMAC under the site secret."""
    return hmac.new(secret.encode(), b"csrf:" + cookie.encode(), hashlib.sha256).hexdigest()


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
    label = escape(url if text is None else text)
    href = safe_href(url)
    if href is None:
        return Markup("<span>{}</span>").format(label)
    extra = Markup("").join(
        Markup(' {}="{}"').format(name.rstrip("_").replace("_", "-"), value)
        for name, value in attributes.items()
    )
    return Markup('<a href="{}"{}>{}</a>').format(href, extra, label)


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
    """ASGI middleware: allowed hosts, same-site form posts with a token, security headers."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        secret: str,
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host") or ""
        if not self.any_host and _host_name(host) not in self.hosts:
            await _plain(send, 400, "This site does not answer to that host name.\n")
            return
        cookie = self._cookie(scope)
        fresh = cookie is None
        if cookie is None:
            cookie = secrets.token_urlsafe(32)
        token = csrf_token_for(self.secret, cookie)
        if scope["method"] in CHANGING_METHODS and self.takes(scope["method"], scope["path"]):
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
                if fresh:
                    attrs = "; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
                    headers.append((b"set-cookie", f"{CSRF_COOKIE}={cookie}{attrs}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        reset = _token.set(token)
        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            _token.reset(reset)

    @staticmethod
    def _cookie(scope: Scope) -> str | None:
        raw = _header(scope, b"cookie")
        if not raw:
            return None
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw)
        except Exception:  # a malformed Cookie header is no cookie at all
            return None
        morsel = jar.get(CSRF_COOKIE)
        value = morsel.value if morsel is not None else ""
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

    async def _check_token(
        self, scope: Scope, body: bytes, fresh: bool, token: str
    ) -> str | None:
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


async def _plain(send: Send, status: int, text: str) -> None:
    headers: MutableMapping[str, Any] = {
        "content-type": "text/plain; charset=utf-8",
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
