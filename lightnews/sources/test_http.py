"""Tests of the polite HTTP client against a real HTTP server on 127.0.0.1.

The server runs in a background thread; the client is the real one (real
sockets, real httpx transport). Only ``sleep`` and ``clock`` are faked, so
retries and rate limits are checked without waiting.
"""

from __future__ import annotations

import contextlib
import gzip
import ipaddress
import socket
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from lightnews.errors import Blocked, FetchError, TooLarge
from lightnews.settings import Settings
from lightnews.sources import http as http_module
from lightnews.sources.http import HttpClient, Response, user_agent

ETAG = '"v1"'
LAST_MODIFIED = "Wed, 01 Jan 2025 00:00:00 GMT"
BOMB = gzip.compress(b"\0" * (5 * 1024 * 1024))  # ~5 KB that inflates to 5 MB


@dataclass
class ServerState:
    hits: Counter[str] = field(default_factory=Counter)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)


class Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence the test output
        pass

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        *,
        length: bool = True,
    ) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        state = self.server.state
        state.hits[path] += 1
        state.headers[path] = {k.lower(): v for k, v in self.headers.items()}
        hits = state.hits[path]
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._route(path, hits)

    def _route(self, path: str, hits: int) -> None:
        if path == "/ok":
            self._send(200, b"hello world", {"Content-Type": "text/plain"})
        elif path == "/echo":
            self._send(200, self.path.encode())
        elif path == "/cond":
            if (
                self.headers.get("If-None-Match") == ETAG
                or self.headers.get("If-Modified-Since") == LAST_MODIFIED
            ):
                self._send(304, headers={"ETag": ETAG}, length=False)
            else:
                self._send(200, b"feed", {"ETag": ETAG, "Last-Modified": LAST_MODIFIED})
        elif path == "/429-then-ok":
            if hits == 1:
                self._send(429, b"slow down", {"Retry-After": "2"})
            else:
                self._send(200, b"finally")
        elif path == "/429-date-then-ok":
            if hits == 1:
                later = formatdate(time.time() + 2, usegmt=True)
                self._send(429, b"slow down", {"Retry-After": later})
            else:
                self._send(200, b"finally")
        elif path == "/429-long":
            self._send(429, b"come back tomorrow", {"Retry-After": "86400"})
        elif path == "/503-thrice":
            if hits <= 3:
                self._send(503, b"busy")
            else:
                self._send(200, b"recovered")
        elif path == "/503":
            self._send(503, b"busy")
        elif path == "/404":
            self._send(404, b"nope")
        elif path == "/slow":
            time.sleep(1.0)
            self._send(200, b"too late")
        elif path == "/big":
            self._send(200, b"x" * 5000)
        elif path == "/big-nolength":
            self._send(200, b"x" * 5000, length=False)
            self.close_connection = True
        elif path == "/gzip":
            self._send(200, gzip.compress(b"compressed text " * 50), {"Content-Encoding": "gzip"})
        elif path == "/deflate":
            packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)  # raw deflate, as some servers send
            body = packer.compress(b"deflated text " * 50) + packer.flush()
            self._send(200, body, {"Content-Encoding": "deflate"})
        elif path == "/429-always":
            self._send(429, b"slow down", {"Retry-After": "1"})
        elif path == "/bomb":
            self._send(200, BOMB, {"Content-Encoding": "gzip"})
        elif path == "/cut":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
        elif path == "/redirect":
            self._send(301, headers={"Location": "/ok"})
        elif path == "/loop-a":
            self._send(302, headers={"Location": "/loop-b"})
        elif path == "/loop-b":
            self._send(302, headers={"Location": "/loop-a"})
        elif path.startswith("/chain/"):
            n = int(path.rsplit("/", 1)[1])
            self._send(302, headers={"Location": f"/chain/{n + 1}"})
        elif path == "/to-private":
            self._send(302, headers={"Location": "http://10.0.0.1/secret"})
        else:
            self._send(404, b"unknown")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: ServerState

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up early (timeouts, size caps) are expected


@dataclass
class LocalServer:
    base: str
    port: int
    state: ServerState

    def url(self, path: str) -> str:
        return self.base + path


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    httpd = _Server(("127.0.0.1", 0), Handler)
    httpd.state = ServerState()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    port = httpd.server_address[1]
    try:
        yield LocalServer(f"http://127.0.0.1:{port}", int(port), httpd.state)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture(autouse=True)
def _reset_counts(server: LocalServer) -> None:
    server.state.hits.clear()
    server.state.headers.clear()


class FakeTime:
    """A clock that only moves when someone sleeps; records every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


def make_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "allow_private_addresses": True,
        "http_backoff": 0.01,
        "http_retries": 3,
        "http_timeout": 5.0,
        "http_max_wait": 120.0,
        "contact": "ops@example.org",
    }
    values.update(overrides)
    return Settings(environ={}).with_overrides(**values)


@pytest.fixture
def make_client(fake_time: FakeTime) -> Iterator[Callable[..., HttpClient]]:
    clients: list[HttpClient] = []

    def build(**overrides: Any) -> HttpClient:
        client = HttpClient(
            make_settings(**overrides), sleep=fake_time.sleep, clock=fake_time.clock
        )
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()


# -- plain success ---------------------------------------------------------------------------


def test_200_body(server: LocalServer, make_client: Callable[..., HttpClient]) -> None:
    response = make_client().get(server.url("/ok"))
    assert isinstance(response, Response)
    assert response.status == 200
    assert response.body == b"hello world"
    assert response.headers["content-type"] == "text/plain"
    assert response.url == server.url("/ok")
    assert not response.not_modified


def test_params_are_encoded(server: LocalServer, make_client: Callable[..., HttpClient]) -> None:
    response = make_client().get(server.url("/echo"), params={"q": "a b", "start": 10})
    assert response.body in {b"/echo?q=a+b&start=10", b"/echo?q=a%20b&start=10"}


def test_user_agent_names_lightnews_and_contact(
    server: LocalServer, make_client: Callable[..., HttpClient]
) -> None:
    make_client().get(server.url("/ok"))
    sent = server.state.headers["/ok"]
    assert "Lightnews/" in sent["user-agent"]
    assert "mailto:ops@example.org" in sent["user-agent"]
    assert "gzip" in sent["accept-encoding"]
    assert "mailto" not in user_agent("")


# -- conditional requests --------------------------------------------------------------------


def test_etag_last_modified_round_trip(
    server: LocalServer, make_client: Callable[..., HttpClient]
) -> None:
    client = make_client()
    first = client.get(server.url("/cond"))
    assert first.status == 200 and first.body == b"feed"
    assert first.etag == ETAG
    assert first.last_modified == LAST_MODIFIED

    again = client.get(server.url("/cond"), etag=first.etag, last_modified=first.last_modified)
    assert again.status == 304
    assert again.not_modified
    assert again.body == b""
    sent = server.state.headers["/cond"]
    assert sent["if-none-match"] == ETAG
    assert sent["if-modified-since"] == LAST_MODIFIED

    only_date = client.get(server.url("/cond"), last_modified=LAST_MODIFIED)
    assert only_date.not_modified


# -- retries, Retry-After and backoff --------------------------------------------------------


def test_429_retry_after_seconds_is_honoured(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    response = make_client().get(server.url("/429-then-ok"))
    assert response.body == b"finally"
    assert fake_time.sleeps == [2.0]
    assert server.state.hits["/429-then-ok"] == 2


def test_429_retry_after_http_date_is_honoured(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    response = make_client().get(server.url("/429-date-then-ok"))
    assert response.body == b"finally"
    assert len(fake_time.sleeps) == 1
    assert 1.0 <= fake_time.sleeps[0] <= 3.0


def test_429_retry_after_beyond_max_wait_is_handed_back(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    with pytest.raises(FetchError) as caught:
        make_client(http_max_wait=60.0).get(server.url("/429-long"))
    assert caught.value.status == 429
    assert caught.value.retry_after == 86400.0
    assert fake_time.sleeps == []
    assert server.state.hits["/429-long"] == 1


def test_429_retries_exhausted_keep_retry_after(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    with pytest.raises(FetchError) as caught:
        make_client().get(server.url("/429-always"))
    assert caught.value.status == 429
    assert caught.value.retry_after == 1.0
    assert fake_time.sleeps == [1.0, 1.0, 1.0]
    assert "gave up after 4 attempts" in str(caught.value)


def test_503_backoff_grows_then_succeeds(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    response = make_client().get(server.url("/503-thrice"))
    assert response.body == b"recovered"
    assert server.state.hits["/503-thrice"] == 4
    assert len(fake_time.sleeps) == 3
    for attempt, delay in enumerate(fake_time.sleeps):
        base = 0.01 * 2**attempt
        assert base <= delay <= 2 * base  # backoff plus jitter of at most the same amount
    assert fake_time.sleeps[0] < fake_time.sleeps[2]


def test_503_forever_gives_up(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    with pytest.raises(FetchError) as caught:
        make_client().get(server.url("/503"))
    assert caught.value.status == 503
    assert caught.value.retry_after is None
    assert "503" in str(caught.value)
    assert server.state.hits["/503"] == 4  # one try and three retries
    assert len(fake_time.sleeps) == 3


def test_404_is_not_retried(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    with pytest.raises(FetchError) as caught:
        make_client().get(server.url("/404"))
    assert caught.value.status == 404
    assert str(caught.value) == f"HTTP 404 Not Found from {server.url('/404')}"
    assert server.state.hits["/404"] == 1
    assert fake_time.sleeps == []


# -- network failures ------------------------------------------------------------------------


def test_timeout(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    client = make_client(http_timeout=0.3, http_retries=1)
    with pytest.raises(FetchError) as caught:
        client.get(server.url("/slow"))
    assert "timed out" in str(caught.value)
    assert not isinstance(caught.value, TooLarge)
    assert server.state.hits["/slow"] == 2
    assert len(fake_time.sleeps) == 1


def test_body_cut_short(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    with pytest.raises(FetchError) as caught:
        make_client().get(server.url("/cut"))
    assert "cut short" in str(caught.value)
    assert server.state.hits["/cut"] == 4  # a network error is retried
    assert type(caught.value) is FetchError


def test_connection_refused(make_client: Callable[..., HttpClient]) -> None:
    # Bind a port and close it again: nothing listens there.
    probe = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = probe.server_address[1]
    probe.server_close()
    with pytest.raises(FetchError) as caught:
        make_client(http_retries=1).get(f"http://127.0.0.1:{port}/")
    assert "connection failed" in str(caught.value)


# -- size cap and decoding -------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/big", "/big-nolength"])
def test_oversized_body(
    server: LocalServer, make_client: Callable[..., HttpClient], path: str
) -> None:
    with pytest.raises(TooLarge) as caught:
        make_client(http_max_bytes=1000).get(server.url(path))
    assert "larger than 1000 bytes" in str(caught.value)
    assert server.state.hits[path] == 1  # never retried


def test_gzip_body_is_decoded(server: LocalServer, make_client: Callable[..., HttpClient]) -> None:
    response = make_client().get(server.url("/gzip"))
    assert response.body == b"compressed text " * 50


def test_deflate_body_is_decoded(
    server: LocalServer, make_client: Callable[..., HttpClient]
) -> None:
    response = make_client().get(server.url("/deflate"))
    assert response.body == b"deflated text " * 50


def test_gzip_bomb_is_stopped(server: LocalServer, make_client: Callable[..., HttpClient]) -> None:
    assert len(BOMB) < 50_000
    with pytest.raises(TooLarge):
        make_client(http_max_bytes=50_000).get(server.url("/bomb"))
    assert server.state.hits["/bomb"] == 1


def test_gzip_within_cap_is_fine(
    server: LocalServer, make_client: Callable[..., HttpClient]
) -> None:
    response = make_client(http_max_bytes=6 * 1024 * 1024).get(server.url("/bomb"))
    assert len(response.body) == 5 * 1024 * 1024


# -- redirects -------------------------------------------------------------------------------


def test_redirect_is_followed(server: LocalServer, make_client: Callable[..., HttpClient]) -> None:
    response = make_client().get(server.url("/redirect"))
    assert response.status == 200
    assert response.body == b"hello world"
    assert response.url == server.url("/ok")


def test_redirect_loop(server: LocalServer, make_client: Callable[..., HttpClient]) -> None:
    with pytest.raises(FetchError, match="redirect loop"):
        make_client().get(server.url("/loop-a"))
    assert server.state.hits["/loop-a"] == 1  # not retried


def test_too_many_redirects(server: LocalServer, make_client: Callable[..., HttpClient]) -> None:
    with pytest.raises(FetchError, match="too many redirects"):
        make_client().get(server.url("/chain/0"))
    assert sum(server.state.hits.values()) == 6  # the request and five redirects


# -- refused addresses and schemes -----------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "10.0.0.1", "localhost", "[::1]", "169.254.1.1"])
def test_private_addresses_are_blocked(
    server: LocalServer, make_client: Callable[..., HttpClient], host: str
) -> None:
    with pytest.raises(Blocked):
        make_client(allow_private_addresses=False).get(f"http://{host}:{server.port}/ok")
    assert server.state.hits["/ok"] == 0


def test_redirect_to_private_address_is_blocked(
    server: LocalServer,
    make_client: Callable[..., HttpClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pretend the test server's own address is public, so only the redirect hop is refused.
    loopback = ipaddress.ip_address("127.0.0.1")
    real = http_module._address_forbidden
    monkeypatch.setattr(
        http_module, "_address_forbidden", lambda address: address != loopback and real(address)
    )
    with pytest.raises(Blocked, match=r"10\.0\.0\.1"):
        make_client(allow_private_addresses=False).get(server.url("/to-private"))
    assert server.state.hits["/to-private"] == 1


@pytest.mark.parametrize("url", ["ftp://example.org/file", "file:///etc/passwd"])
def test_other_schemes_are_refused(make_client: Callable[..., HttpClient], url: str) -> None:
    with pytest.raises(FetchError, match="unsupported URL scheme"):
        make_client().get(url)


# -- per-host rate limit ---------------------------------------------------------------------


def test_host_interval(
    server: LocalServer, make_client: Callable[..., HttpClient], fake_time: FakeTime
) -> None:
    client = make_client()
    client.set_host_interval("127.0.0.1", 3.0)
    client.get(server.url("/ok"))
    assert fake_time.sleeps == []
    client.get(server.url("/ok"))
    assert fake_time.sleeps == [pytest.approx(3.0)]
    fake_time.now += 10  # long enough since: no wait
    client.get(server.url("/ok"))
    assert fake_time.sleeps == [pytest.approx(3.0)]


def test_arxiv_hosts_default_interval(make_client: Callable[..., HttpClient]) -> None:
    client = make_client(arxiv_interval=3.0)
    assert client._intervals["export.arxiv.org"] == 3.0
    assert client._intervals["oaipmh.arxiv.org"] == 3.0
    assert client._intervals.get("example.org", 0.0) == 0.0


def test_closed_client_raises_fetch_error(
    server: LocalServer, make_client: Callable[..., HttpClient]
) -> None:
    client = make_client()
    with client:
        client.get(server.url("/ok"))
    with pytest.raises(FetchError, match="closed"):
        client.get(server.url("/ok"))


# -- DNS rebinding and addresses hidden in IPv6 ---------------------------------------------


@pytest.fixture
def rebinding_dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``rebind.test`` resolves to 127.0.0.1 once, then to 10.0.0.1; asks are recorded.

    127.0.0.1 is made to count as public, so only a second lookup could reach
    the private address: what a DNS rebinding attack does between a check and
    a connection.
    """
    real_lookup = socket.getaddrinfo
    asked: list[str] = []

    def lookup(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "rebind.test":
            return real_lookup(host, port, *args, **kwargs)
        asked.append(host)
        address = "127.0.0.1" if len(asked) == 1 else "10.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    loopback = ipaddress.ip_address("127.0.0.1")
    real = http_module._address_forbidden
    monkeypatch.setattr(
        http_module, "_address_forbidden", lambda address: address != loopback and real(address)
    )
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return asked


def test_connects_to_exactly_the_address_it_checked(
    server: LocalServer, make_client: Callable[..., HttpClient], rebinding_dns: list[str]
) -> None:
    client = make_client(allow_private_addresses=False, http_retries=0, http_timeout=2.0)
    response = client.get(f"http://rebind.test:{server.port}/ok")
    assert response.body == b"hello world"
    assert rebinding_dns == ["rebind.test"]  # one lookup: checked, then connected to
    assert server.state.headers["/ok"]["host"] == f"rebind.test:{server.port}"


def test_a_name_that_resolves_to_a_private_address_is_never_connected(
    server: LocalServer, make_client: Callable[..., HttpClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    def lookup(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2002:7f00:1::", port, 0, 0))]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    with pytest.raises(Blocked, match="2002:7f00:1::"):
        make_client(allow_private_addresses=False).get(f"http://sixtofour.test:{server.port}/ok")
    assert server.state.hits["/ok"] == 0


@pytest.mark.parametrize(
    ("address", "forbidden"),
    [
        ("2002:7f00:1::", True),  # 6to4 of 127.0.0.1
        ("2002:a00:1::", True),  # 6to4 of 10.0.0.1
        ("2002:c0a8:101::1", True),  # 6to4 of 192.168.1.1
        ("64:ff9b::7f00:1", True),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", True),  # NAT64 of 169.254.169.254 (cloud metadata)
        ("64:ff9b:1::a00:1", True),  # local-use NAT64 of 10.0.0.1
        ("::ffff:127.0.0.1", True),  # IPv4-mapped
        ("::ffff:10.0.0.1", True),
        ("::127.0.0.1", True),  # IPv4-compatible (deprecated)
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", True),  # Teredo
        ("::ffff:8.8.8.8", False),  # IPv4-mapped public address
        ("2002:808:808::", False),  # 6to4 of 8.8.8.8
        ("2606:4700:4700::1111", False),
        ("8.8.8.8", False),
    ],
)
def test_ipv6_forms_of_private_addresses_are_refused(address: str, forbidden: bool) -> None:
    assert http_module._address_forbidden(ipaddress.ip_address(address)) is forbidden


@pytest.mark.parametrize("host", ["[2002:7f00:1::]", "[64:ff9b::7f00:1]", "[::ffff:7f00:1]"])
def test_ipv6_literals_of_private_addresses_are_blocked(
    server: LocalServer, make_client: Callable[..., HttpClient], host: str
) -> None:
    with pytest.raises(Blocked):
        make_client(allow_private_addresses=False).get(f"http://{host}:{server.port}/ok")
    assert server.state.hits["/ok"] == 0
