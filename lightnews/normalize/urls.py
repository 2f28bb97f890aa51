"""URLs safe by construction: one check, at parse time, for every URL a source stores.

A feed item whose link is ``javascript:alert(1)`` must never become a live
link on a page, and a template should not have to remember to check. So every
source passes the URLs it stores (item links, link cards, facets, paper and
project pages) through :func:`safe_url`, which keeps only ``http`` and
``https`` URLs, written one way:

* the scheme in lower case (``HTTP://`` is accepted and becomes ``http://``);
* tabs and line breaks removed wherever they are and blanks trimmed at the
  ends, as browsers do (so ``java\\tscript:`` cannot slip past a check that a
  browser would later undo), other control characters refused;
* internationalised host names in their ASCII (IDNA) form, so that look-alike
  letters show as what they are; only letters, digits, dots and hyphens in a
  host name; a port in range;
* no user name or password (``https://trusted.example@evil.example/`` reads as
  one site and leads to another), and a host always present;
* blanks, quotes and angle brackets inside percent-encoded.

Anything else is None: the caller drops the URL and keeps the item.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

import idna

__all__ = ["SAFE_SCHEMES", "safe_url", "safe_urls"]

SAFE_SCHEMES = frozenset({"http", "https"})

_REMOVED = re.compile(r"[\t\n\r]")
_EDGES = "".join(chr(c) for c in range(0x21)) + "\x7f"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ESCAPES = {" ": "%20", '"': "%22", "<": "%3C", ">": "%3E", "`": "%60"}
_ESCAPE_RE = re.compile(r'[ "<>`]')
_HOST_RE = re.compile(r"^[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?\.?$")
#: Longest host name DNS allows.
_MAX_HOST = 253


def _host(raw: str) -> str | None:
    """The host as written (IDNA for a non-ASCII name, IPv6 bracketed), or None."""
    if raw.startswith("["):
        if not raw.endswith("]"):
            return None
        try:
            return f"[{ipaddress.IPv6Address(raw[1:-1]).compressed}]"
        except ValueError:
            return None
    host = raw
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError):
            return None
    if not host or len(host) > _MAX_HOST or not _HOST_RE.match(host.lower()):
        return None
    return host


def safe_url(value: object) -> str | None:
    """``value`` as a safe http(s) URL (see the module docstring), or None.

    >>> safe_url("HTTP://example.org/a b")
    'http://example.org/a%20b'
    >>> safe_url("javascript:alert(1)") is None
    True
    """
    if not isinstance(value, str):
        return None
    text = _REMOVED.sub("", value).strip(_EDGES)
    if not text or _CONTROL.search(text):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # a bad port or IPv6 literal
        return None
    scheme = parts.scheme.lower()
    if scheme not in SAFE_SCHEMES or "\\" in parts.netloc:
        return None
    netloc = parts.netloc
    if "@" in netloc:
        return None
    raw_host = netloc.rsplit(":", 1)[0] if port is not None or netloc.endswith(":") else netloc
    host = _host(raw_host)
    if host is None:
        return None
    netloc = f"{host}:{port}" if port is not None else host
    path = parts.path.replace("\\", "/") or ("/" if parts.query or parts.fragment else "")
    url = urlunsplit((scheme, netloc, path, parts.query, parts.fragment))
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m[0]], url)


def safe_urls(values: Iterable[object]) -> list[str]:
    """The safe forms of ``values`` that have one, in order, each once."""
    kept = (safe_url(v) for v in values)
    return list(dict.fromkeys(u for u in kept if u))
