"""The one polite HTTP client every network call of Lightnews goes through.

Sources (arXiv, feeds, Bluesky...) never talk to the network themselves: they
ask :class:`HttpClient` for a URL and get back a :class:`Response` or a
:mod:`lightnews.errors` exception. Keeping every request in one place lets us
be a good citizen and a safe one, once, instead of in every source:

* it says who we are (a User-Agent naming Lightnews and the operator's contact);
* it keeps a minimum interval between two requests to the same host (arXiv asks
  for 3 seconds), asking a :class:`~lightnews.sources.pacing.Pacer` for each
  turn (in this process by default; shared by every worker of a PostgreSQL
  library when the worker passes the store's pacer), and honours
  ``Retry-After`` on 429/503, retrying transient failures with exponential
  backoff and jitter; a wait longer than
  ``http_max_wait`` is not slept through but handed back to the caller
  (:attr:`FetchError.retry_after`) so the source can be rescheduled;
* it makes conditional requests (ETag / Last-Modified) so unchanged feeds cost
  the server a 304 and nothing more;
* it caps the size of a body *after* decompression, so a huge or gzip-bomb
  response cannot exhaust memory;
* it refuses URLs that lead, directly or through a redirect, to loopback,
  private or otherwise non-public addresses (user-given feed URLs must not
  become a way into the local network), including IPv6 forms that carry a
  private IPv4 address (IPv4-mapped ``::ffff:10.0.0.1``, 6to4
  ``2002:7f00:1::``, NAT64 ``64:ff9b::7f00:1``), and schemes other than
  http/https. A host name is resolved once, when the connection is opened,
  and the connection goes to exactly the addresses that were checked
  (:class:`_PinnedBackend`): a DNS answer that changes between the check and
  the connection (DNS rebinding) cannot lead elsewhere. TLS still checks the
  certificate of, and the request still names, the host of the URL;
* whatever goes wrong, the caller gets a :class:`~lightnews.errors.FetchError`
  (or its subclasses :class:`~lightnews.errors.TooLarge` and
  :class:`~lightnews.errors.Blocked`) with a message a user can read, never a
  raw httpx exception.

``sleep``, ``clock``, ``rng`` and ``transport`` can be injected so that tests
exercise waits and retries without waiting.
"""

from __future__ import annotations

import importlib.metadata
import ipaddress
import random
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Final

import httpcore
import httpx

from lightnews.errors import Blocked, FetchError, TooLarge
from lightnews.settings import Settings
from lightnews.sources.pacing import LocalPacer, Pacer

__all__ = [
    "MAX_REDIRECTS",
    "HttpClient",
    "Response",
    "refuse_non_public",
    "safe_transport",
    "user_agent",
]

MAX_REDIRECTS: Final = 5
"""Redirects followed for one request before giving up."""

_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
_RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
_ALLOWED_SCHEMES: Final = frozenset({"http", "https"})
_ARXIV_HOSTS: Final = ("export.arxiv.org", "oaipmh.arxiv.org", "arxiv.org")
# Headers that must not travel to another origin when a redirect leaves the first one.
_CREDENTIAL_HEADERS: Final = ("authorization", "cookie", "proxy-authorization")
_DECODE_CHUNK: Final = 64 * 1024  # largest piece of decompressed output produced at once
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: IPv6 prefixes whose last 32 bits are an IPv4 address: NAT64 (well-known and local-use)
#: and the deprecated IPv4-compatible form.
_V4_IN_LAST_32 = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("64:ff9b:1::/48"),
    ipaddress.IPv6Network("::/96"),
)


def _package_version() -> str:
    try:
        return importlib.metadata.version("lightnews")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0"


def user_agent(contact: str = "") -> str:
    """The User-Agent Lightnews sends; ``contact`` lets a service reach the operator."""
    base = f"Lightnews/{_package_version()} (+https://github.com/lightnews/lightnews"
    contact = contact.strip()
    return f"{base}; mailto:{contact})" if contact else f"{base})"


@dataclass(frozen=True, slots=True)
class Response:
    """A successful answer: a 2xx with its (decoded) body, or a 304 Not Modified."""

    url: str
    """Final URL, after redirects."""
    status: int
    headers: Mapping[str, str]
    """Response headers; an :class:`httpx.Headers`, so lookups ignore case."""
    body: bytes
    """Decoded body (``b""`` for a 304)."""

    @property
    def not_modified(self) -> bool:
        """True when the server answered 304: what we have is still current."""
        return self.status == 304

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")


class _Retry(Exception):
    """Internal: the attempt failed in a way worth trying again (wraps the error)."""

    def __init__(self, error: FetchError) -> None:
        super().__init__(str(error))
        self.error = error


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64, compatible), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in network for network in _V4_IN_LAST_32):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _address_forbidden(address: IPAddress) -> bool:
    """True for addresses that are not on the public Internet (nor carry one that is not)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_v4(address)
        if embedded is not None and _plain_forbidden(embedded):
            return True
        if address.ipv4_mapped is not None:
            return False  # the mapped address alone decides (checked above)
    return _plain_forbidden(address)


def _plain_forbidden(address: IPAddress) -> bool:
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
        or not address.is_global
    )


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def _resolve(host: str, port: int, *, allow_private: bool) -> list[IPAddress]:
    """Every address ``host`` has, each checked (raises Blocked); resolved once, here."""
    literal = _literal_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"cannot resolve host {host} ({_describe(exc)})") from exc
        found = (_literal_address(str(info[4][0])) for info in infos)
        addresses = list(dict.fromkeys(a for a in found if a is not None))
        if not addresses:
            raise httpcore.ConnectError(f"cannot resolve host {host} (no address)")
    if not allow_private:
        for address in addresses:
            if _address_forbidden(address):
                raise Blocked(
                    f"refusing to connect to {host}: it resolves to {address}, "
                    "which is not a public address"
                )
    return addresses


class _PinnedBackend(httpcore.SyncBackend):
    """Opens connections to exactly the addresses that were checked.

    httpcore asks its network backend to connect to a host name; this one
    resolves the name itself, refuses it when any address is not public, and
    connects to those very addresses. The name stays the request's: httpcore
    sends it in the TLS handshake (SNI, certificate check) and httpx in the
    ``Host`` header.
    """

    def __init__(self, allow_private: bool) -> None:
        self._allow_private = allow_private

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        error: httpcore.ConnectError | None = None
        for address in _resolve(host, port, allow_private=self._allow_private):
            try:
                return super().connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:  # the next address, as a browser would
                error = exc
        assert error is not None
        raise error


def _pinned_transport(allow_private: bool) -> httpx.HTTPTransport:
    """httpx's own transport, its connection pool given the :class:`_PinnedBackend`."""
    transport = httpx.HTTPTransport()
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5)
    # httpx does not take a network backend itself; its pool (httpcore) does.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_PinnedBackend(allow_private),
    )
    return transport


def refuse_non_public(url: str) -> None:
    """Raise Blocked when ``url``'s host is, or resolves to, an address that is not public:
    what a request through :func:`safe_transport` would refuse, said when the URL is given
    rather than at every request. A host that does not resolve now is let be (it may later)."""
    host = httpx.URL(url).host
    try:
        _resolve(host, 443, allow_private=False)
    except httpcore.ConnectError:
        return


def safe_transport(allow_private: bool) -> httpx.HTTPTransport:
    """A transport that connects only to the public addresses a host resolves to (for POSTs
    to user-given URLs: webhooks, ntfy topics)."""
    return _pinned_transport(allow_private)


def _parse_retry_after(value: str | None, date_header: str | None) -> float | None:
    """Seconds asked for by a Retry-After header (delta-seconds or HTTP-date)."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = datetime.now(UTC)
    if date_header:
        # Measure against the server's own clock when it tells us, to ignore clock skew.
        try:
            server_now = parsedate_to_datetime(date_header)
        except (TypeError, ValueError, IndexError):
            pass
        else:
            now = server_now if server_now.tzinfo else server_now.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


class _BodyDecoder:
    """Undo Content-Encoding with bounded output per step.

    httpx's own decoder inflates a whole network chunk at once, which for a
    gzip bomb means tens of megabytes before we can count them; this one
    hands out at most ``_DECODE_CHUNK`` bytes at a time so the size cap bites
    as soon as it is crossed.
    """

    def __init__(self, content_encoding: str, url: str) -> None:
        codings = [
            part.strip().lower()
            for part in content_encoding.split(",")
            if part.strip() and part.strip().lower() != "identity"
        ]
        self._url = url
        self._gzip = False
        self._deflate_fallback = False
        self._finished = False
        self._members = 0
        self._inflater: zlib._Decompress | None = None
        if not codings:
            return
        if len(codings) > 1 or codings[0] not in {"gzip", "x-gzip", "deflate"}:
            raise FetchError(
                f"unsupported content encoding {content_encoding!r} in the response from {url}"
            )
        if codings[0] == "deflate":
            # "deflate" should be zlib-wrapped, but some servers send raw deflate.
            self._inflater = zlib.decompressobj()
            self._deflate_fallback = True
        else:
            self._gzip = True
            self._inflater = zlib.decompressobj(_GZIP_WBITS)
        self._members = 1

    def feed(self, data: bytes) -> Iterator[bytes]:
        inflater = self._inflater
        if inflater is None:
            if data:
                yield data
            return
        while not self._finished:
            if inflater.eof:
                if not data or not self._gzip:
                    return  # nothing left, or bytes after a deflate stream: ignored
                inflater = self._inflater = zlib.decompressobj(_GZIP_WBITS)  # next member
                self._members += 1
            try:
                out = inflater.decompress(data, _DECODE_CHUNK)
            except zlib.error as exc:
                if self._deflate_fallback:
                    self._deflate_fallback = False
                    inflater = self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                if self._members > 1:
                    self._finished = True  # garbage after a complete gzip stream: ignored
                    return
                raise FetchError(
                    f"could not decompress the response from {self._url}: {exc}"
                ) from exc
            self._deflate_fallback = False
            if out:
                yield out
            if inflater.eof:
                data = inflater.unused_data
                continue
            data = inflater.unconsumed_tail
            if not data and len(out) < _DECODE_CHUNK:
                return

    def finish(self) -> bytes:
        if self._inflater is None or self._finished:
            return b""
        try:
            return self._inflater.flush()
        except zlib.error as exc:
            raise FetchError(f"could not decompress the response from {self._url}: {exc}") from exc


class HttpClient:
    """A polite, size-capped, retrying HTTP GET client (see the module docstring).

    Safe to share between threads. Use as a context manager, or call
    :meth:`close` when done.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        transport: httpx.BaseTransport | None = None,
        pacer: Pacer | None = None,
    ) -> None:
        timeout = float(settings.http_timeout)
        self._timeout = timeout
        self._max_bytes = int(settings.http_max_bytes)
        self._retries = max(0, int(settings.http_retries))
        self._backoff = float(settings.http_backoff)
        self._max_wait = float(settings.http_max_wait)
        self._allow_private = bool(settings.allow_private_addresses)
        self._sleep = sleep
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()
        self._lock = threading.Lock()
        arxiv_interval = float(settings.arxiv_interval)
        self._intervals: dict[str, float] = {host: arxiv_interval for host in _ARXIV_HOSTS}
        #: Whose turn it is at a host: this process's (default) or a whole cluster's.
        self._pacer: Pacer = pacer or LocalPacer(sleep=sleep, clock=clock)
        self._closed = False
        self.user_agent = user_agent(str(settings.contact or ""))
        self._client = httpx.Client(
            # 0 means "no timeout" rather than "fail at once".
            timeout=httpx.Timeout(timeout if timeout > 0 else None),
            follow_redirects=False,  # followed by hand: every hop is checked and rate-limited
            headers={
                "User-Agent": self.user_agent,
                "Accept-Encoding": "gzip, deflate",
            },
            transport=transport or _pinned_transport(self._allow_private),
        )

    # -- public API --------------------------------------------------------------------------

    def get(
        self,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """GET ``url`` and return the answer, following up to 5 redirects.

        A 304 (when ``etag``/``last_modified`` were given) is a success:
        ``response.not_modified`` is true and the body is empty. Raises
        :class:`FetchError` (with ``status`` and ``retry_after`` when known),
        :class:`TooLarge` or :class:`Blocked`.
        """
        if self._closed:
            raise FetchError(f"cannot fetch {url}: the HTTP client is closed")
        start = self._prepare_url(url, params)
        request_headers: dict[str, str] = dict(headers or {})
        if etag:
            request_headers["If-None-Match"] = etag
        if last_modified:
            request_headers["If-Modified-Since"] = last_modified
        attempt = 0
        while True:
            try:
                return self._follow(start, request_headers)
            except _Retry as retry:
                error = retry.error
                cause = retry.__cause__
            attempts = attempt + 1
            if attempt >= self._retries:
                raise type(error)(
                    f"{error} (gave up after {attempts} attempt{'s' if attempts > 1 else ''})",
                    status=error.status,
                    retry_after=error.retry_after,
                ) from cause
            if error.retry_after is not None:
                delay = error.retry_after
            else:
                base = self._backoff * 2**attempt
                delay = base + self._rng.uniform(0.0, base)
            if delay > 0:
                self._sleep(delay)
            attempt += 1

    def set_host_interval(self, host: str, seconds: float) -> None:
        """Keep at least ``seconds`` between the starts of two requests to ``host``."""
        if seconds < 0 or seconds != seconds:
            raise ValueError(f"host interval must be a non-negative number, got {seconds!r}")
        with self._lock:
            self._intervals[host.strip().lower().rstrip(".")] = float(seconds)

    def close(self) -> None:
        self._closed = True
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- one request, its redirects and its checks ----------------------------------------

    @staticmethod
    def _parse_url(url: str | httpx.URL, base: httpx.URL | None = None) -> httpx.URL:
        try:
            parsed = base.join(url) if base is not None else httpx.URL(url)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise FetchError(f"invalid URL {str(url)!r}: {_describe(exc)}") from exc
        if parsed.scheme not in _ALLOWED_SCHEMES:
            shown = parsed.scheme or "(none)"
            raise FetchError(f"unsupported URL scheme {shown!r} in {parsed} (only http and https)")
        if not parsed.host:
            raise FetchError(f"invalid URL {str(parsed)!r}: no host")
        return parsed

    def _prepare_url(self, url: str, params: Mapping[str, str | int] | None) -> httpx.URL:
        parsed = self._parse_url(url)
        if params:
            parsed = parsed.copy_merge_params(params)
        return parsed

    def _follow(self, start: httpx.URL, headers: dict[str, str]) -> Response:
        url = start
        visited = {str(url)}
        for hop in range(MAX_REDIRECTS + 1):
            self._check_address(url)
            with self._turn(url.host):
                result = self._fetch_once(url, headers)
            if isinstance(result, Response):
                return result
            target = self._parse_url(result, base=url)
            if str(target) in visited:
                raise FetchError(f"redirect loop: {url} redirects back to {target}")
            if hop == MAX_REDIRECTS:
                raise FetchError(f"too many redirects (more than {MAX_REDIRECTS}) from {start}")
            visited.add(str(target))
            if (target.scheme, target.host, target.port) != (url.scheme, url.host, url.port):
                headers = {k: v for k, v in headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
            url = target
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_address(self, url: httpx.URL) -> None:
        """Raise Blocked at once when ``url``'s host is a non-public address literal.

        A host name is checked when the connection opens, against the very
        addresses connected to (:class:`_PinnedBackend`), not here: checking
        one lookup and connecting after another is what DNS rebinding uses.
        """
        if self._allow_private:
            return
        literal = _literal_address(url.host)
        if literal is not None and _address_forbidden(literal):
            raise Blocked(f"refusing to fetch {url}: {url.host} is not a public address")

    def _turn(self, host: str) -> AbstractContextManager[None]:
        """This host's turn (its minimum interval between requests), for one request."""
        with self._lock:
            interval = self._intervals.get(host, 0.0)
        return self._pacer.turn(host, interval) if interval > 0 else nullcontext()

    def _fetch_once(self, url: httpx.URL, headers: Mapping[str, str]) -> Response | str:
        """One GET without following redirects: a Response, or a redirect's Location."""
        reading_body = False
        try:
            with self._client.stream("GET", url, headers=headers) as response:
                status = response.status_code
                if status in _REDIRECT_STATUSES:
                    location = response.headers.get("location")
                    if not location:
                        raise FetchError(
                            f"HTTP {status} {response.reason_phrase} from {url} "
                            "without a Location header",
                            status=status,
                        )
                    return str(location)
                if status == 304:
                    return Response(str(url), status, response.headers, b"")
                if 200 <= status < 300:
                    reading_body = True
                    return Response(str(url), status, response.headers, self._read_body(response))
                self._raise_for_status(response, url)
                raise AssertionError("unreachable")  # pragma: no cover
        except httpx.TimeoutException as exc:
            shown = f"{self._timeout:g}s"
            raise _Retry(FetchError(f"timed out after {shown} fetching {url}")) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            if reading_body:
                raise _Retry(FetchError(f"response cut short: {_describe(exc)} ({url})")) from exc
            raise _Retry(FetchError(f"connection failed: {_describe(exc)} ({url})")) from exc
        except (httpx.NetworkError, httpx.ProxyError) as exc:
            raise _Retry(FetchError(f"connection failed: {_describe(exc)} ({url})")) from exc
        except httpx.UnsupportedProtocol as exc:
            raise FetchError(f"unsupported URL scheme in {url}: {_describe(exc)}") from exc
        except httpx.HTTPError as exc:
            raise FetchError(f"request to {url} failed: {_describe(exc)}") from exc
        except RuntimeError as exc:  # e.g. the client was closed by another thread
            raise FetchError(f"request to {url} failed: {_describe(exc)}") from exc

    def _read_body(self, response: httpx.Response) -> bytes:
        url = str(response.url)
        cap = self._max_bytes
        too_large = f"response from {url} is larger than {cap} bytes"
        declared = response.headers.get("content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > cap:
            raise TooLarge(too_large, status=response.status_code)
        decoder = _BodyDecoder(response.headers.get("content-encoding", ""), url)
        parts: list[bytes] = []
        total = 0
        for raw in response.iter_raw():
            for piece in decoder.feed(raw):
                total += len(piece)
                if total > cap:
                    raise TooLarge(too_large, status=response.status_code)
                parts.append(piece)
        tail = decoder.finish()
        total += len(tail)
        if total > cap:
            raise TooLarge(too_large, status=response.status_code)
        parts.append(tail)
        return b"".join(parts)

    def _raise_for_status(self, response: httpx.Response, url: httpx.URL) -> None:
        status = response.status_code
        message = f"HTTP {status} {response.reason_phrase} from {url}"
        if status not in _RETRY_STATUSES:
            try:  # services explain client errors in the body (arXiv's error feed)
                body = self._read_body(response)
            except (FetchError, httpx.HTTPError):
                body = b""
            raise FetchError(message, status=status, body=body)
        retry_after = _parse_retry_after(
            response.headers.get("retry-after"), response.headers.get("date")
        )
        if retry_after is not None and retry_after > self._max_wait:
            raise FetchError(
                f"{message}: the server asks to wait {retry_after:g}s, longer than "
                f"http_max_wait ({self._max_wait:g}s); try again later",
                status=status,
                retry_after=retry_after,
            )
        raise _Retry(FetchError(message, status=status, retry_after=retry_after))
