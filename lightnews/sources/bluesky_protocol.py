"""Bluesky's protocol as the Bluesky sources read it: XRPC, AT URIs, rich text, traits.

The facts every part of the Bluesky family relies on (see
:mod:`lightnews.sources.bluesky` for how a refresh uses them):

* the public AppView answers XRPC GETs (``https://public.api.bsky.app/xrpc/<method>``)
  with JSON objects, or ``{"error": "InvalidRequest", "message": "..."}`` with an
  HTTP 4xx status; every field is optional here (a value of the wrong type counts
  as absent: :func:`as_object`, :func:`as_str`, ...);
* posts are named by ``at://DID/app.bsky.feed.post/RKEY`` URIs: the DID never
  changes, a handle may (:func:`split_at_uri`, :func:`post_url`); a self-reply
  replies to its own author in a thread its own author started
  (:func:`is_self_reply`);
* links in a post's text are often cut short; the whole URL is in the
  ``app.bsky.richtext.facet#link`` facet, whose ``index`` counts **UTF-8
  bytes**, not characters (:func:`facet_spans`, :func:`full_text`).

:data:`TRAITS` is what the rest of Lightnews knows of the kind: social posts,
reposts keyed ``repost:<reposter DID>:<URI>``, and the network
(:data:`NETWORK`) whose accounts and posts the store keeps.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import orjson

from lightnews.errors import ParseError, UsageError
from lightnews.model import Item
from lightnews.normalize.text import clean_text, sanitize_html
from lightnews.normalize.urls import safe_url
from lightnews.sources import Network, SourceTraits, jsonsafe

__all__ = [
    "API_URL",
    "AUTHOR_FEED",
    "FOLLOWERS",
    "FOLLOWS",
    "GET_RECORD",
    "LIST",
    "LIST_RECORDS",
    "NETWORK",
    "POSTS",
    "POST_COLLECTION",
    "POST_THREAD",
    "PROFILE",
    "PROFILES",
    "PUBLIC_HOSTS",
    "PUBLIC_INTERVAL",
    "REPOST_PREFIX",
    "RESOLVE_HANDLE",
    "SERVICE",
    "STARTER_PACK",
    "STARTER_PACK_COLLECTION",
    "TRAITS",
    "FacetSpan",
    "as_count",
    "as_list",
    "as_object",
    "as_str",
    "author_did",
    "author_of",
    "authority",
    "dump_json",
    "facet_features",
    "facet_html",
    "facet_spans",
    "full_text",
    "is_self_reply",
    "item_uri",
    "load_response",
    "normalize_actor",
    "parse_resolve_handle",
    "post_url",
    "query_params",
    "split_at_uri",
    "starter_pack_uri",
    "type_of",
    "xrpc_error",
    "xrpc_method",
]


API_URL = "https://public.api.bsky.app/xrpc"

#: Reposts are stored under their own key, ``repost:<reposter DID>:<URI>``.
REPOST_PREFIX = "repost:"
"""The public AppView: reads without an account."""

PUBLIC_HOSTS = ("public.api.bsky.app", "api.bsky.app")

#: 3,000 requests per 5 minutes is 10 a second; one every 0.1 s stays under it.
PUBLIC_INTERVAL = 0.1

PROFILE = "app.bsky.actor.getProfile"

PROFILES = "app.bsky.actor.getProfiles"

AUTHOR_FEED = "app.bsky.feed.getAuthorFeed"

POST_THREAD = "app.bsky.feed.getPostThread"

POSTS = "app.bsky.feed.getPosts"

STARTER_PACK = "app.bsky.graph.getStarterPack"

LIST = "app.bsky.graph.getList"

FOLLOWS = "app.bsky.graph.getFollows"

FOLLOWERS = "app.bsky.graph.getFollowers"

RESOLVE_HANDLE = "com.atproto.identity.resolveHandle"

GET_RECORD = "com.atproto.repo.getRecord"

LIST_RECORDS = "com.atproto.repo.listRecords"

POST_COLLECTION = "app.bsky.feed.post"

STARTER_PACK_COLLECTION = "app.bsky.graph.starterpack"


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_count(value: Any) -> int | None:
    """A count or an index: a non-negative integer the store can hold, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53:
        return value
    return None


def dump_json(value: Any) -> str:
    return orjson.dumps(value).decode()


def type_of(value: dict[str, Any]) -> str:
    """A union member's ``$type`` without the ``#view`` of view objects."""
    return as_str(value.get("$type")).removesuffix("#view")


def load_response(body: bytes | dict[str, Any]) -> dict[str, Any]:
    """A response as a JSON object; an XRPC error body becomes a ParseError with its message."""
    if isinstance(body, dict):
        document = body
    else:
        try:
            document = jsonsafe.loads(body)
        except orjson.JSONDecodeError as error:
            start = body[:60].decode("utf-8", "replace")
            raise ParseError(f"Bluesky response is not JSON ({error}): {start!r}") from None
    if not isinstance(document, dict):
        raise ParseError(f"Bluesky response is a JSON {type(document).__name__}, not an object")
    problem = xrpc_error(document)
    if problem:
        raise ParseError(problem)
    return document


def xrpc_error(document: dict[str, Any]) -> str | None:
    error = document.get("error")
    if not isinstance(error, str) or not set(document) <= {"error", "message"}:
        return None
    message = clean_text(as_str(document.get("message")))
    return f"Bluesky: {error}: {message}" if message else f"Bluesky: {error}"


def split_at_uri(uri: str) -> tuple[str, str, str] | None:
    """``at://AUTHORITY/COLLECTION/RKEY`` as its three parts, or None for anything else."""
    if not uri.startswith("at://"):
        return None
    parts = uri[5:].split("/")
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def authority(uri: str | None) -> str:
    parts = split_at_uri(uri or "")
    return parts[0] if parts else ""


def post_url(uri: str, handle: str = "") -> str | None:
    """The bsky.app page of a post; the DID stands in for a missing or invalid handle."""
    parts = split_at_uri(uri)
    if parts is None:
        return None
    authority, _, rkey = parts
    who = handle if handle and handle != "handle.invalid" else authority
    return safe_url(f"https://bsky.app/profile/{quote(who, safe=':@')}/post/{quote(rkey, safe='')}")


def normalize_actor(address: str) -> str:
    """A handle or DID from what a user typed: ``@name``, a profile URL or ``at://`` URI."""
    actor = address.strip()
    if actor.startswith(("https://", "http://")):
        parts = [p for p in urlsplit(actor).path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "profile":
            actor = parts[1]
    actor = actor.removeprefix("at://").split("/")[0].removeprefix("@")
    return actor if actor.startswith("did:") else actor.lower()


def starter_pack_uri(url: str) -> str:
    """The ``at://`` URI of a starter pack from its bsky.app URL (or the URI itself).

    ``https://bsky.app/starter-pack/<handle-or-did>/<rkey>`` becomes
    ``at://<handle-or-did>/app.bsky.graph.starterpack/<rkey>``. Short
    ``go.bsky.app`` links need a redirect to be followed first, so they are refused.
    """
    address = url.strip()
    if address.startswith("at://"):
        parts = split_at_uri(address)
        if parts and parts[1] == STARTER_PACK_COLLECTION:
            return address
        raise UsageError(f"{url!r} is not the at:// URI of a starter pack")
    split = urlsplit(address if "://" in address else "https://" + address)
    path = [p for p in split.path.split("/") if p]
    if (
        split.hostname in ("bsky.app", "www.bsky.app", "staging.bsky.app")
        and len(path) == 3
        and path[0] in ("starter-pack", "start")
    ):
        return f"at://{normalize_actor(path[1])}/{STARTER_PACK_COLLECTION}/{path[2]}"
    raise UsageError(
        f"{url!r} is not a starter pack address: use https://bsky.app/starter-pack/HANDLE/KEY "
        "or its at:// URI (open a go.bsky.app short link in a browser first)"
    )


def xrpc_method(url: str | None) -> str | None:
    """The XRPC method an http(s) URL calls (``app.bsky.feed.getAuthorFeed``), else None."""
    if not url:
        return None
    split = urlsplit(url)
    if split.scheme not in ("http", "https") or "/xrpc/" not in split.path:
        return None
    return split.path.rsplit("/", 1)[-1] or None


def query_params(url: str | None) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query)) if url else {}


def parse_resolve_handle(body: bytes | dict[str, Any]) -> str:
    """The DID of a ``com.atproto.identity.resolveHandle`` answer."""
    did = as_str(load_response(body).get("did"))
    if not did.startswith("did:"):
        raise ParseError("resolveHandle response has no DID")
    return did


FacetSpan = tuple[int, int, dict[str, Any]]


def _is_boundary(data: bytes, offset: int) -> bool:
    return offset == len(data) or (data[offset] & 0xC0) != 0x80


def facet_spans(text: str, facets: Any) -> list[FacetSpan]:
    """``(char_start, char_end, feature)`` of each facet feature, in text order.

    Facet indices count UTF-8 bytes: an emoji before a link moves the byte
    offset by four but the character offset by one. Indices that are missing,
    out of range, reversed or that cut a character in half are skipped.
    """
    data = text.encode("utf-8", "surrogatepass")
    spans: list[FacetSpan] = []
    for facet in as_list(facets):
        index = as_object(as_object(facet).get("index"))
        start, end = as_count(index.get("byteStart")), as_count(index.get("byteEnd"))
        if start is None or end is None or not 0 <= start < end <= len(data):
            continue
        if not (_is_boundary(data, start) and _is_boundary(data, end)):
            continue
        char_start = len(data[:start].decode("utf-8", "surrogatepass"))
        char_end = char_start + len(data[start:end].decode("utf-8", "surrogatepass"))
        spans.extend(
            (char_start, char_end, feature)
            for feature in as_list(facet.get("features"))
            if isinstance(feature, dict)
        )
    spans.sort(key=lambda span: (span[0], span[1]))
    return spans


def _feature_kind(feature: dict[str, Any]) -> str:
    """``link``, ``mention``, ``tag`` or ``""``, by ``$type`` or, without it, by shape."""
    kind = as_str(feature.get("$type")).rpartition("#")[2]
    if kind in ("link", "mention", "tag"):
        return kind
    for key, name in (("uri", "link"), ("did", "mention"), ("tag", "tag")):
        if isinstance(feature.get(key), str):
            return name
    return ""


def facet_features(facets: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every feature of every facet, indices valid or not (a link is whole either way)."""
    for facet in as_list(facets):
        for feature in as_list(as_object(facet).get("features")):
            if isinstance(feature, dict):
                yield _feature_kind(feature), feature


def _looks_like_url(visible: str) -> bool:
    return (
        bool(visible)
        and not any(c.isspace() for c in visible)
        and ("." in visible or "/" in visible)
    )


def _link_spans(text: str, facets: Any) -> list[tuple[int, int, str]]:
    spans, last_end = [], 0
    for start, end, feature in facet_spans(text, facets):
        uri = safe_url(feature.get("uri")) or ""
        if _feature_kind(feature) != "link" or not uri or start < last_end:
            continue
        spans.append((start, end, uri))
        last_end = end
    return spans


def full_text(text: str, facets: Any) -> str:
    """The text with each link's visible (often shortened) form replaced by its full URL.

    Anchor text that is not a URL ("the paper") is kept, with the URL after it
    in parentheses, so no words are lost.
    """
    pieces, position = [], 0
    for start, end, uri in _link_spans(text, facets):
        visible = text[start:end]
        pieces.append(text[position:start])
        pieces.append(uri if _looks_like_url(visible) else f"{visible} ({uri})")
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def facet_html(text: str, facets: Any) -> str:
    """Sanitized HTML of a post: its text with links, mentions and tags as anchors."""
    pieces, position = [], 0
    last_end = 0
    for start, end, feature in facet_spans(text, facets):
        kind = _feature_kind(feature)
        if start < last_end or kind == "":
            continue
        if kind == "link":
            href = safe_url(feature.get("uri")) or ""
            if not href:
                continue  # not an http(s) link: the words stay, unlinked
        elif kind == "mention":
            href = f"https://bsky.app/profile/{quote(as_str(feature.get('did')), safe=':')}"
        else:
            href = f"https://bsky.app/hashtag/{quote(as_str(feature.get('tag')))}"
        pieces.append(html.escape(text[position:start]))
        pieces.append(
            f'<a href="{html.escape(href, quote=True)}">{html.escape(text[start:end])}</a>'
        )
        position = last_end = end
    pieces.append(html.escape(text[position:]))
    body = "".join(pieces).replace("\n", "<br>")
    return sanitize_html(f"<p>{body}</p>") if text else ""


def author_of(uri: str | None) -> str:
    """The authority (author DID) of an ``at://`` URI, or ``""``."""
    if not uri or not uri.startswith("at://"):
        return ""
    return uri[5:].split("/", 1)[0]


def item_uri(item: Item) -> str:
    """The URI of a post (a repost's key differs from the URI of what it reposts)."""
    return item.post.uri if item.post and item.post.uri else item.key


def is_self_reply(item: Item) -> bool:
    """A post replying to its own author in a thread its own author started."""
    did = item.account or author_of(item_uri(item))
    return (
        item.kind == "post"
        and bool(item.reply_parent and item.thread_root)
        and author_of(item.reply_parent) == did
        and author_of(item.thread_root) == did
    )


def author_did(uri: str) -> str:
    """The author's DID written in a post's ``at://`` URI, or ``""``."""
    found = authority(uri)
    return found if found.startswith("did:") else ""


#: How the store names Bluesky: its accounts, identities and the posts the listener hears.
SERVICE = "bluesky"
#: The network whose accounts and posts the store keeps beyond one source's items.
NETWORK = Network(SERVICE, post_url, author_did)
#: What the core knows of the ``bluesky`` kind (the other Bluesky kinds share its reposts).
TRAITS = SourceTraits(
    social=True,
    repost_prefix=REPOST_PREFIX,
    filter_label="Bluesky",
    filter_order=1,
    network=NETWORK,
)
