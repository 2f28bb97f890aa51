"""Bluesky: what scholars post, the threads they write, and the starter packs that list them.

Scholars announce papers on Bluesky in threads: a first post with the arXiv
link, then numbered replies to themselves ("🧵1/9", "[3/10]"). This module
reads those posts from the public AppView over XRPC (plain HTTPS GETs of
``https://public.api.bsky.app/xrpc/<method>``, no login) and turns them into
the common model. Like every source it is sans-IO: it names the requests it
wants and parses the bodies the shared HTTP client fetched.

Protocol facts this module relies on (the ``app.bsky`` lexicons):

* A refresh asks ``app.bsky.actor.getProfile`` (the counts a profile shows, the
  DID behind the handle), then pages ``app.bsky.feed.getAuthorFeed`` by the DID
  with ``cursor`` (``filter=posts_and_author_threads`` keeps the author's own
  threads whole, ``includePins`` puts the pinned post first). Posts are keyed by
  their ``at://DID/app.bsky.feed.post/RKEY`` URI; a handle can change, a DID not.
* The feed holds ``feedViewPost`` objects: a ``post`` view, a ``reply`` with the
  parent and root views, and a ``reason`` (``#reasonRepost`` for a repost,
  ``#reasonPin`` for the pinned post). A repost is stored under its own key
  (``repost:<reposter DID>:<URI>``) so it never overwrites the original.
* Links in a post's text are often cut short (``github.com/apple/ml-sel...``);
  the whole URL is in the ``app.bsky.richtext.facet#link`` facet, whose
  ``index`` counts **UTF-8 bytes**, not characters (:func:`facet_spans`).
* Papers are named in the text, the facets, the link card
  (``app.bsky.embed.external``), a quoted post (``app.bsky.embed.record``,
  ``recordWithMedia``) and image alt text: all of it is searched for mentions.
* Threads are joined by ``record.reply.root`` / ``parent``. A self-reply whose
  parent the feed did not give us is a gap, filled with
  ``app.bsky.feed.getPostThread`` (``Batch.follow``); ``lightnews.link.threads``
  orders a scholar's self-threads root first for the scholar page.
* Starter packs (``app.bsky.graph.getStarterPack``) point at a list whose
  members ``app.bsky.graph.getList`` pages by cursor; ``getFollows`` lists whom
  an account follows. Both become :class:`~lightnews.model.Account` objects.
* Errors are JSON ``{"error": "InvalidRequest", "message": "..."}`` with an
  HTTP 4xx status; the public AppView allows about 3,000 requests per 5 minutes.

Every field of every view is optional here: a post without a URI or record is
skipped with a warning, a value of the wrong type counts as absent, unknown
fields are ignored, and only a body that is not JSON, or not any response
this module knows, is a :class:`ParseError` (so is a response of a kind the
source does not read: a starter pack given as a scholar's posts). Links kept
from facets, link cards and avatars are http(s) only
(:func:`~lightnews.normalize.urls.safe_url`); a post whose links were dropped
says so in a ``Problem``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import parse_qsl, quote, urlsplit

import orjson

from lightnews.errors import ParseError, UsageError
from lightnews.link import find_arxiv_mentions
from lightnews.link.threads import is_self_reply, item_uri
from lightnews.model import (
    Account,
    Actor,
    Batch,
    Item,
    LinkCard,
    PostDetails,
    Problem,
    QuotedPost,
    Request,
    SourceState,
)
from lightnews.normalize.text import clean_text, iso_utc, sanitize_html
from lightnews.normalize.urls import safe_url, safe_urls
from lightnews.settings import Settings
from lightnews.sources import Source, SourceTraits, jsonsafe

__all__ = [
    "API_URL",
    "REPOST_PREFIX",
    "BlueskyFollowsSource",
    "BlueskyProfileSource",
    "BlueskySource",
    "BlueskyStarterPackSource",
    "Page",
    "account_from_profile",
    "detect_method",
    "facet_html",
    "facet_spans",
    "find_gaps",
    "full_text",
    "match_texts",
    "normalize_actor",
    "parse_profile",
    "parse_resolve_handle",
    "parse_response",
    "post_item",
    "post_url",
    "split_at_uri",
    "starter_pack_uri",
    "xrpc_method",
]

API_URL = "https://public.api.bsky.app/xrpc"
#: Reposts are stored under their own key, ``repost:<reposter DID>:<URI>``.
REPOST_PREFIX = "repost:"
"""The public AppView: reads without an account."""
PUBLIC_HOSTS = ("public.api.bsky.app", "api.bsky.app")
#: 3,000 requests per 5 minutes is 10 a second; one every 0.1 s stays under it.
PUBLIC_INTERVAL = 0.1
FEED_FILTER = "posts_and_author_threads"
PAGE_LIMIT = 100
THREAD_PARENT_HEIGHT = 80
TITLE_LENGTH = 120
#: Thread URIs remembered as already asked for, so a deleted parent is not asked every run.
ASKED_MEMORY = 500
#: Gaps carried from page to page of one refresh (a parent is often on the next page).
OPEN_GAPS_MEMORY = 500
_MAX_THREAD_DEPTH = 1000

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
#: Methods answering ``{feed: [feedViewPost], cursor}``: all read the same way.
_FEED_METHODS = frozenset(
    {
        AUTHOR_FEED,
        "app.bsky.feed.getFeed",
        "app.bsky.feed.getTimeline",
        "app.bsky.feed.getActorLikes",
        "app.bsky.feed.getListFeed",
    }
)
_POST_COLLECTION = "app.bsky.feed.post"
_STARTER_PACK_COLLECTION = "app.bsky.graph.starterpack"

# -- small JSON helpers ------------------------------------------------------------------------


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    """A count or an index: a non-negative integer the store can hold, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53:
        return value
    return None


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode()


def _type(value: dict[str, Any]) -> str:
    """A union member's ``$type`` without the ``#view`` of view objects."""
    return _str(value.get("$type")).removesuffix("#view")


def _load(body: bytes | dict[str, Any]) -> dict[str, Any]:
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
    problem = _xrpc_error(document)
    if problem:
        raise ParseError(problem)
    return document


def _xrpc_error(document: dict[str, Any]) -> str | None:
    error = document.get("error")
    if not isinstance(error, str) or not set(document) <= {"error", "message"}:
        return None
    message = clean_text(_str(document.get("message")))
    return f"Bluesky: {error}: {message}" if message else f"Bluesky: {error}"


# -- identifiers -------------------------------------------------------------------------------


def split_at_uri(uri: str) -> tuple[str, str, str] | None:
    """``at://AUTHORITY/COLLECTION/RKEY`` as its three parts, or None for anything else."""
    if not uri.startswith("at://"):
        return None
    parts = uri[5:].split("/")
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def _authority(uri: str | None) -> str:
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
        if parts and parts[1] == _STARTER_PACK_COLLECTION:
            return address
        raise UsageError(f"{url!r} is not the at:// URI of a starter pack")
    split = urlsplit(address if "://" in address else "https://" + address)
    path = [p for p in split.path.split("/") if p]
    if (
        split.hostname in ("bsky.app", "www.bsky.app", "staging.bsky.app")
        and len(path) == 3
        and path[0] in ("starter-pack", "start")
    ):
        return f"at://{normalize_actor(path[1])}/{_STARTER_PACK_COLLECTION}/{path[2]}"
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


def _query(url: str | None) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query)) if url else {}


def parse_resolve_handle(body: bytes | dict[str, Any]) -> str:
    """The DID of a ``com.atproto.identity.resolveHandle`` answer."""
    did = _str(_load(body).get("did"))
    if not did.startswith("did:"):
        raise ParseError("resolveHandle response has no DID")
    return did


# -- rich text ---------------------------------------------------------------------------------

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
    for facet in _list(facets):
        index = _obj(_obj(facet).get("index"))
        start, end = _int(index.get("byteStart")), _int(index.get("byteEnd"))
        if start is None or end is None or not 0 <= start < end <= len(data):
            continue
        if not (_is_boundary(data, start) and _is_boundary(data, end)):
            continue
        char_start = len(data[:start].decode("utf-8", "surrogatepass"))
        char_end = char_start + len(data[start:end].decode("utf-8", "surrogatepass"))
        spans.extend(
            (char_start, char_end, feature)
            for feature in _list(facet.get("features"))
            if isinstance(feature, dict)
        )
    spans.sort(key=lambda span: (span[0], span[1]))
    return spans


def _feature_kind(feature: dict[str, Any]) -> str:
    """``link``, ``mention``, ``tag`` or ``""``, by ``$type`` or, without it, by shape."""
    kind = _str(feature.get("$type")).rpartition("#")[2]
    if kind in ("link", "mention", "tag"):
        return kind
    for key, name in (("uri", "link"), ("did", "mention"), ("tag", "tag")):
        if isinstance(feature.get(key), str):
            return name
    return ""


def _features(facets: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every feature of every facet, indices valid or not (a link is whole either way)."""
    for facet in _list(facets):
        for feature in _list(_obj(facet).get("features")):
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
            href = f"https://bsky.app/profile/{quote(_str(feature.get('did')), safe=':')}"
        else:
            href = f"https://bsky.app/hashtag/{quote(_str(feature.get('tag')))}"
        pieces.append(html.escape(text[position:start]))
        pieces.append(
            f'<a href="{html.escape(href, quote=True)}">{html.escape(text[start:end])}</a>'
        )
        position = last_end = end
    pieces.append(html.escape(text[position:]))
    body = "".join(pieces).replace("\n", "<br>")
    return sanitize_html(f"<p>{body}</p>") if text else ""


# -- posts -------------------------------------------------------------------------------------


def _who(profile: dict[str, Any]) -> dict[str, str]:
    return {
        "did": _str(profile.get("did")),
        "handle": _str(profile.get("handle")),
        "name": clean_text(_str(profile.get("displayName"))),
    }


def _external(external: dict[str, Any]) -> LinkCard | None:
    """A link card, or None when it has no http(s) link (a ``javascript:`` card is dropped)."""
    uri = safe_url(external.get("uri"))
    if not uri:
        return None
    return LinkCard(
        uri, clean_text(_str(external.get("title"))), clean_text(_str(external.get("description")))
    )


@dataclass(slots=True)
class _Embed:
    card: LinkCard | None = None
    quote: QuotedPost | None = None
    alts: list[str] = field(default_factory=list)
    video_alt: str = ""
    #: The quoted post's links, and its text with them whole: searched, not shown.
    quote_links: list[str] = field(default_factory=list)
    quote_full_text: str = ""


def _read_quote(inner: dict[str, Any], found: _Embed) -> None:
    """A quoted post from ``embed.record``'s inner record (a view or a strong ref)."""
    uri = _str(inner.get("uri"))
    parts = split_at_uri(uri)
    if found.quote or parts is None or parts[1] != _POST_COLLECTION:
        return  # a quoted feed, list or starter pack: not a post
    value = _obj(inner.get("value"))
    author = _who(_obj(inner.get("author")))
    text = _str(value.get("text"))
    links = [f.get("uri") for kind, f in _features(value.get("facets")) if kind == "link"]
    for embed in _list(inner.get("embeds")):
        card = _external(_obj(_obj(embed).get("external")))
        if card:
            links.append(card.uri)
    record_card = _external(_obj(_obj(value.get("embed")).get("external")))
    if record_card:
        links.append(record_card.uri)
    found.quote = QuotedPost(
        uri=uri,
        did=author["did"] or parts[0],
        handle=author["handle"],
        name=author["name"],
        text=text,
        url=post_url(uri, author["handle"]),
        unavailable=bool(inner.get("notFound") or inner.get("blocked") or inner.get("detached")),
    )
    found.quote_links = safe_urls(links)
    found.quote_full_text = full_text(text, value.get("facets"))


def _read_embed(embed: dict[str, Any], found: _Embed) -> None:
    """Fill ``found`` from an embed, in its view form (``#view``) or its record form."""
    kind = _type(embed)
    if kind == "app.bsky.embed.external" or (not kind and "external" in embed):
        found.card = found.card or _external(_obj(embed.get("external")))
    elif kind == "app.bsky.embed.images" or (not kind and "images" in embed):
        found.alts.extend(
            clean_text(_str(_obj(image).get("alt"))) for image in _list(embed.get("images"))
        )
    elif kind == "app.bsky.embed.video":
        found.video_alt = clean_text(_str(embed.get("alt")))
    elif kind == "app.bsky.embed.recordWithMedia" or (not kind and "media" in embed):
        _read_embed(_obj(embed.get("media")), found)
        _read_embed(_obj(embed.get("record")), found)
    elif kind == "app.bsky.embed.record" or (not kind and "record" in embed):
        _read_quote(_obj(embed.get("record")), found)


def match_texts(record: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Where a raw post record can name a paper, read as :func:`post_item` reads a post.

    ``(links, texts)``: the facet and link-card links (http(s) only), then the
    text with its links whole, the link card's title and description and the
    alt texts. For the firehose (:mod:`lightnews.sources.jetstream`), which
    reads a great many records and keeps few: no item is built.
    """
    text = _str(record.get("text"))
    facets = record.get("facets")
    found = _Embed()
    _read_embed(_obj(record.get("embed")), found)
    raw_links = [f.get("uri") for kind, f in _features(facets) if kind == "link"]
    links = safe_urls([*raw_links, found.card.uri if found.card else None, *found.quote_links])
    texts = [full_text(text, facets), *found.alts, found.video_alt]
    if found.card:
        texts += [found.card.title, found.card.description]
    return links, [t for t in texts if t]


def _labels(post: dict[str, Any], record: dict[str, Any]) -> list[str]:
    values = [_str(_obj(label).get("val")) for label in _list(post.get("labels"))]
    values += [_str(_obj(v).get("val")) for v in _list(_obj(record.get("labels")).get("values"))]
    return list(dict.fromkeys(v for v in values if v))


def _title(text: str, fallback: str = "") -> str:
    line = next((clean_text(line) for line in text.splitlines() if line.strip()), "")
    line = line or clean_text(fallback)
    if len(line) <= TITLE_LENGTH:
        return line
    cut = line[: TITLE_LENGTH - 1]
    if " " in cut[TITLE_LENGTH // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-") + "…"


_COUNTS = (
    ("replyCount", "replies"),
    ("repostCount", "reposts"),
    ("likeCount", "likes"),
    ("quoteCount", "quotes"),
    ("bookmarkCount", "bookmarks"),
)


def post_item(
    post: dict[str, Any],
    *,
    reason: dict[str, Any] | None = None,
    reply: dict[str, Any] | None = None,
    payload: Any = None,
    problems: list[Problem] | None = None,
) -> Item:
    """One ``postView`` (with a feed entry's ``reason`` and ``reply``) as an item.

    Raises ParseError when the view has no post URI or no record: nothing
    sensible can be stored for it. Links that are not http(s) are dropped,
    and said so in ``problems``.
    """
    uri = _str(post.get("uri"))
    parts = split_at_uri(uri)
    record = post.get("record")
    if parts is None or not isinstance(record, dict):
        what = "no record" if parts else f"no post URI ({uri or 'missing'})"
        raise ParseError(f"Bluesky post with {what} skipped")
    author = _who(_obj(post.get("author")))
    did = author["did"] or parts[0]
    handle = author["handle"]
    text = _str(record.get("text"))
    facets = record.get("facets")

    found = _Embed()
    # The view form carries the quoted post's text; a raw record has only the record form.
    _read_embed(_obj(post.get("embed") or record.get("embed")), found)

    raw_links = [f.get("uri") for kind, f in _features(facets) if kind == "link"]
    raw_card = _obj(_obj(_obj(post.get("embed") or record.get("embed")).get("external")))
    unsafe = [u for u in [*raw_links, raw_card.get("uri")] if u and safe_url(u) is None]
    links = safe_urls([*raw_links, found.card.uri if found.card else None, *found.quote_links])
    mentions = [_str(f.get("did")) for kind, f in _features(facets) if kind == "mention"]
    tags = [_str(f.get("tag")) for kind, f in _features(facets) if kind == "tag"]
    tags += [_str(t) for t in _list(record.get("tags"))]
    tags = list(dict.fromkeys(t for t in tags if t))

    reply_ref = _obj(record.get("reply"))
    root_uri = _str(_obj(reply_ref.get("root")).get("uri")) or None
    parent_uri = _str(_obj(reply_ref.get("parent")).get("uri")) or None

    key, kind = uri, "post"
    reason = reason or {}
    reason_type = _str(reason.get("$type"))
    pinned = reason_type.endswith("#reasonPin")
    reposted_by, reposted_at = None, None
    if not pinned and (reason_type.endswith("#reasonRepost") or "by" in reason):
        by = _who(_obj(reason.get("by")))
        reposted_by = Actor(by["did"], by["handle"], by["name"])
        reposted_at = iso_utc(reason.get("indexedAt"))
        key, kind = BlueskySource.traits.repost_key(by["did"], uri), "repost"
    reply = reply or {}
    ends = {end: _obj(reply.get(end)) for end in ("parent", "root")}
    authors = {end: _str(_obj(v.get("author")).get("handle")) or None for end, v in ends.items()}
    gone = {end: bool(v.get("notFound") or v.get("blocked")) for end, v in ends.items()}
    details = PostDetails(
        uri=uri,
        cid=_str(post.get("cid")),
        did=did,
        handle=handle,
        langs=tuple(_str(lang) for lang in _list(record.get("langs")) if _str(lang)),
        mentions=tuple(dict.fromkeys(m for m in mentions if m)),
        tags=tuple(tags),
        card=found.card,
        quote=found.quote,
        images=tuple(found.alts),
        pinned=pinned,
        labels=tuple(_labels(post, record)),
        text_full=full_text(text, facets),
        video_alt=found.video_alt,
        reposted_by=reposted_by,
        reposted_at=reposted_at,
        reply_parent_author=authors["parent"],
        reply_parent_unavailable=gone["parent"],
        reply_root_author=authors["root"],
        reply_root_unavailable=gone["root"],
    )

    engagement = {}
    for source_name, name in _COUNTS:
        count = _int(post.get(source_name))
        if count is not None:
            engagement[name] = count

    item = Item(
        key=key,
        kind=kind,
        title=_title(text, found.card.title if found.card else ""),
        url=post_url(uri, handle),
        author=author["name"] or handle or did,
        text=text,
        html=facet_html(text, facets),
        published=iso_utc(record.get("createdAt")),
        updated=iso_utc(post.get("indexedAt")) or iso_utc(record.get("createdAt")),
        links=links,
        tags=tags,
        engagement=engagement,
        payload=_dump(payload if payload is not None else {"post": post}),
        post=details,
        account=did,
        thread_root=root_uri,
        reply_parent=parent_uri,
    )
    # What a paper can be named in (as Paper Skygest reads posts): the text with its
    # links whole (a cut "arxiv.org/abs/2510.0..." must not match as a shorter id), the
    # link card, the quoted post and the alt texts.
    match_text = [*links, details.text_full, found.quote_full_text, *found.alts, found.video_alt]
    if found.card:
        match_text += [found.card.title, found.card.description]
    item.mentions = [m for m in find_arxiv_mentions(match_text) if m.arxiv_id != item.paper_id]
    if unsafe and problems is not None:
        problems.append(
            Problem(
                f"{len(unsafe)} link(s) dropped, not http(s): {str(unsafe[0])[:80]!r}", key, "links"
            )
        )
    return item


def _entry_item(entry: Any, page: Page) -> Item | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("post"), dict):
        page.warnings.append("Bluesky feed entry without a post skipped")
        return None
    try:
        return post_item(
            entry["post"],
            reason=_obj(entry.get("reason")),
            reply=_obj(entry.get("reply")),
            payload=entry,
            problems=page.problems,
        )
    except ParseError as error:
        page.warnings.append(str(error))
    except Exception as error:  # a programmer's error on one post must not lose the page
        uri = _str(entry["post"].get("uri")) or None
        page.problems.append(Problem(f"post skipped: {type(error).__name__}: {error}", uri))
    return None


def _fill_reply_authors(items: list[Item]) -> None:
    """Name the authors of parents and roots that are themselves in ``items``."""
    handles = {i.post.uri: i.post.handle for i in items if i.kind == "post" and i.post}
    for item in items:
        post = item.post
        if post is None:
            continue
        if item.reply_parent and not post.reply_parent_author and handles.get(item.reply_parent):
            post = replace(post, reply_parent_author=handles[item.reply_parent])
        if item.thread_root and not post.reply_root_author and handles.get(item.thread_root):
            post = replace(post, reply_root_author=handles[item.thread_root])
        item.post = post


# -- accounts ----------------------------------------------------------------------------------


def account_from_profile(profile: dict[str, Any]) -> Account:
    """An account from a ``profileView``/``profileViewDetailed`` (counts only in the latter)."""
    did = _str(profile.get("did"))
    if not did.startswith("did:"):
        raise ParseError("Bluesky profile without a DID")
    pinned = _str(_obj(profile.get("pinnedPost")).get("uri")) or None
    return Account(
        service="bluesky",
        id=did,
        handle=_str(profile.get("handle")),
        name=clean_text(_str(profile.get("displayName"))),
        description=_str(profile.get("description")).strip(),
        avatar=safe_url(profile.get("avatar")),
        followers=_int(profile.get("followersCount")),
        following=_int(profile.get("followsCount")),
        posts=_int(profile.get("postsCount")),
        pinned=pinned,
        created=iso_utc(profile.get("createdAt")),
        payload=_dump(profile),
    )


def parse_profile(body: bytes | dict[str, Any]) -> Account:
    """The account of an ``app.bsky.actor.getProfile`` answer."""
    return account_from_profile(_load(body))


def _accounts(profiles: Iterable[Any], warnings: list[str]) -> list[Account]:
    accounts = []
    for profile in profiles:
        try:
            accounts.append(account_from_profile(_obj(profile)))
        except ParseError as error:
            warnings.append(str(error))
    return accounts


# -- whole responses ---------------------------------------------------------------------------


@dataclass(slots=True)
class Page:
    """What one XRPC response holds, before a source decides what to ask next."""

    method: str
    items: list[Item] = field(default_factory=list)
    accounts: list[Account] = field(default_factory=list)
    cursor: str | None = None
    warnings: list[str] = field(default_factory=list)
    title: str | None = None
    #: The list a starter pack or list page is about (``at://`` URI).
    list_uri: str | None = None
    #: The DID a resolveHandle answer gave.
    did: str | None = None
    #: Who posted what a feed holds: known accounts, not members of anything.
    authors: list[Account] = field(default_factory=list)
    #: Fields and posts dropped, each naming its post.
    problems: list[Problem] = field(default_factory=list)


def detect_method(document: dict[str, Any]) -> str | None:
    """Which XRPC method a saved response (no URL to tell) most likely answers."""
    if isinstance(document.get("feed"), list):
        return AUTHOR_FEED
    if "thread" in document:
        return POST_THREAD
    if "starterPack" in document:
        return STARTER_PACK
    if "list" in document and isinstance(document.get("items"), list):
        return LIST
    if isinstance(document.get("follows"), list):
        return FOLLOWS
    if isinstance(document.get("followers"), list):
        return FOLLOWERS
    if isinstance(document.get("profiles"), list):
        return PROFILES
    if isinstance(document.get("posts"), list):
        return POSTS
    if isinstance(document.get("records"), list):
        return LIST_RECORDS
    if "uri" in document and "value" in document:
        return GET_RECORD
    if "did" in document and "handle" in document:
        return PROFILE
    if set(document) == {"did"}:
        return RESOLVE_HANDLE
    return None


def _feed_page(document: dict[str, Any], page: Page) -> None:
    seen: set[str] = set()
    for entry in _list(document.get("feed")):
        item = _entry_item(entry, page)
        if item:
            page.items.append(item)
        # Everyone who posted or reposted here becomes a known account (without
        # profile counts), so that bots among them can be recognised.
        entry = _obj(entry)
        for who in (
            _obj(_obj(entry.get("post")).get("author")),
            _obj(_obj(entry.get("reason")).get("by")),
        ):
            did = _str(who.get("did"))
            if did.startswith("did:") and did not in seen:
                seen.add(did)
                page.authors.append(
                    Account(
                        service="bluesky",
                        id=did,
                        handle=_str(who.get("handle")),
                        name=clean_text(_str(who.get("displayName"))),
                        avatar=safe_url(who.get("avatar")),
                    )
                )


def _thread_page(document: dict[str, Any], page: Page) -> None:
    """Every post of a ``threadViewPost``: its parents root first, itself, then replies."""
    top = _obj(document.get("thread"))
    chain: list[dict[str, Any]] = []
    node: dict[str, Any] = top
    while node and len(chain) < _MAX_THREAD_DEPTH:
        chain.append(node)
        node = _obj(node.get("parent"))
    nodes = list(reversed(chain))
    stack = list(reversed(_list(top.get("replies"))))
    while stack and len(nodes) < 10 * _MAX_THREAD_DEPTH:
        reply = _obj(stack.pop())
        nodes.append(reply)
        stack.extend(reversed(_list(reply.get("replies"))))
    seen: set[str] = set()
    for view in nodes:
        post = view.get("post")
        if not isinstance(post, dict):
            continue  # #notFoundPost, #blockedPost: nothing to store
        parent = _obj(view.get("parent"))
        try:
            item = post_item(
                post,
                reply={"parent": parent.get("post") or parent},
                payload=view,
                problems=page.problems,
            )
        except ParseError as error:
            page.warnings.append(str(error))
            continue
        except Exception as error:  # a programmer's error on one post must not lose the thread
            uri = _str(post.get("uri")) or None
            page.problems.append(Problem(f"post skipped: {type(error).__name__}: {error}", uri))
            continue
        if item.key not in seen:
            seen.add(item.key)
            page.items.append(item)


def _starter_pack_page(document: dict[str, Any], page: Page) -> None:
    pack = _obj(document.get("starterPack"))
    record = _obj(pack.get("record"))
    page.title = clean_text(_str(record.get("name"))) or None
    page.list_uri = _str(_obj(pack.get("list")).get("uri")) or _str(record.get("list")) or None
    page.accounts = _accounts(
        (_obj(i).get("subject") for i in _list(pack.get("listItemsSample"))), page.warnings
    )


def _records_page(records: Iterable[Any], page: Page) -> None:
    for raw in records:
        record = _obj(raw)
        value = _obj(record.get("value"))
        uri = _str(record.get("uri"))
        parts = split_at_uri(uri)
        record_type = _str(value.get("$type")) or (parts[1] if parts else "")
        if parts is None or record_type != _POST_COLLECTION:
            kind = record_type or "unknown"
            page.warnings.append(f"Bluesky record of type {kind} is not a post; skipped")
            continue
        post = {"uri": uri, "cid": record.get("cid"), "record": value}
        try:
            page.items.append(post_item(post, payload=record, problems=page.problems))
        except Exception as error:  # a programmer's error on one record must not lose the page
            page.problems.append(Problem(f"record skipped: {type(error).__name__}: {error}", uri))


_KNOWN = frozenset(
    {
        *_FEED_METHODS,
        POST_THREAD,
        POSTS,
        PROFILE,
        PROFILES,
        STARTER_PACK,
        LIST,
        FOLLOWS,
        FOLLOWERS,
        RESOLVE_HANDLE,
        LIST_RECORDS,
        GET_RECORD,
    }
)


def parse_response(body: bytes | dict[str, Any], url: str | None = None) -> Page:
    """Read any Bluesky response this module knows.

    The method comes from the XRPC URL when there is one, else from the
    document's shape (a saved file). Raises ParseError for a body that is not
    JSON, an XRPC error, or a shape that fits no known method.
    """
    document = _load(body)
    method = xrpc_method(url)
    if method not in _KNOWN:
        method = detect_method(document)
    if method is None:
        keys = ", ".join(sorted(document)[:8]) or "none"
        raise ParseError(f"not a Bluesky response this source reads (keys: {keys})")
    page = Page(method, cursor=_str(document.get("cursor")) or None)
    if method in _FEED_METHODS:
        if not isinstance(document.get("feed"), list):
            raise ParseError(f"{method} response has no feed list")
        _feed_page(document, page)
    elif method == POST_THREAD:
        if not isinstance(document.get("thread"), dict):
            raise ParseError("getPostThread response has no thread")
        _thread_page(document, page)
    elif method == POSTS:
        for post in _list(document.get("posts")):
            item = _entry_item({"post": post}, page)
            if item:
                page.items.append(item)
    elif method == PROFILE:
        account = account_from_profile(document)
        page.accounts.append(account)
        page.title = f"{account.name} (@{account.handle})" if account.name else account.handle
        page.did = account.id
    elif method == PROFILES:
        page.accounts = _accounts(_list(document.get("profiles")), page.warnings)
    elif method == STARTER_PACK:
        if not isinstance(document.get("starterPack"), dict):
            raise ParseError("getStarterPack response has no starterPack")
        _starter_pack_page(document, page)
    elif method == LIST:
        if not isinstance(document.get("items"), list):
            raise ParseError("getList response has no items list")
        listing = _obj(document.get("list"))
        page.title = clean_text(_str(listing.get("name"))) or None
        page.list_uri = _str(listing.get("uri")) or None
        subjects = (_obj(i).get("subject") for i in document["items"])
        page.accounts = _accounts(subjects, page.warnings)
    elif method in (FOLLOWS, FOLLOWERS):
        name = "follows" if method == FOLLOWS else "followers"
        if not isinstance(document.get(name), list):
            raise ParseError(f"{method} response has no {name} list")
        page.accounts = _accounts(document[name], page.warnings)
    elif method == RESOLVE_HANDLE:
        page.did = parse_resolve_handle(document)
    elif method == LIST_RECORDS:
        _records_page(_list(document.get("records")), page)
    elif method == GET_RECORD:
        _records_page([document], page)
    _fill_reply_authors(page.items)
    return page


# -- threads -----------------------------------------------------------------------------------


def find_gaps(items: Iterable[Item]) -> list[str]:
    """Parents of self-replies that ``items`` lack: the posts a thread is missing."""
    items = list(items)
    present = {item_uri(i) for i in items if i.kind == "post"}
    gaps = [i.reply_parent for i in items if is_self_reply(i) and i.reply_parent not in present]
    return list(dict.fromkeys(g for g in gaps if g))


# -- sources -----------------------------------------------------------------------------------


def _copy_state(state: SourceState) -> SourceState:
    return SourceState(
        state.etag, state.last_modified, state.cursor, state.resumption_token, dict(state.extra)
    )


def _entry_time(item: Item) -> str:
    """When an entry entered the author's feed: the repost's time, or the post's sort time."""
    if item.kind == "repost":
        return (item.post.reposted_at if item.post else None) or item.updated or ""
    times = [t for t in (item.published, item.updated) if t]
    return min(times) if times else ""  # the AppView sorts by the earlier of the two


class BlueskySource(Source):
    """A scholar's Bluesky posts, threads and profile, read from the public AppView.

    Address: a handle (``mkirchhof.bsky.social``, ``@`` optional), a DID or a
    bsky.app profile URL. Params: ``api_url`` (default the public AppView),
    ``max_pages`` (author-feed pages per refresh, default 5) and
    ``max_thread_fetches`` (getPostThread requests per refresh, default 10).
    """

    kind = "bluesky"
    summary = "Bluesky account: posts, threads and profile (a handle like x.bsky.social or a DID)"
    traits = SourceTraits(social=True, repost_prefix=REPOST_PREFIX, filter_label="Bluesky",
                          filter_order=1)  # fmt: skip
    default_max_pages: ClassVar[int] = 5
    #: The responses this kind reads (saved files are recognised by their shape); a
    #: starter pack is refused: its members are followed only through its own kind.
    reads: ClassVar[frozenset[str]] = _KNOWN - {STARTER_PACK}

    @property
    def api_url(self) -> str:
        return str(self.params.get("api_url") or API_URL).rstrip("/")

    @property
    def actor(self) -> str:
        return normalize_actor(self.address)

    def _int_param(self, name: str, default: int) -> int:
        try:
            return max(1, int(self.params.get(name, default)))
        except (TypeError, ValueError):
            return default

    def _request(self, method: str, params: dict[str, str | int]) -> Request:
        return Request(f"{self.api_url}/{method}", params)

    def first_request(self, state: SourceState) -> Request | None:
        actor = _str(state.extra.get("did")) or self.actor
        if not actor:
            raise UsageError("a Bluesky source needs a handle or a DID as its address")
        return self._request(PROFILE, {"actor": actor})

    def feed_request(self, actor: str, cursor: str | None = None) -> Request:
        params: dict[str, str | int] = {
            "actor": actor,
            "limit": PAGE_LIMIT,
            "filter": FEED_FILTER,
            "includePins": "true",
        }
        if cursor:
            params["cursor"] = cursor
        return self._request(AUTHOR_FEED, params)

    def thread_request(self, uri: str) -> Request:
        return self._request(
            POST_THREAD, {"uri": uri, "depth": 0, "parentHeight": THREAD_PARENT_HEIGHT}
        )

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        page = parse_response(body, url)
        if page.method not in self.reads:
            readers = [k for k, c in _READERS.items() if page.method in c.reads]
            hint = f"; read it as {' or '.join(readers)}" if readers else ""
            raise ParseError(
                f"a {page.method} response is not what a {self.kind} source reads{hint}"
            )
        batch = Batch(
            items=page.items,
            accounts=page.accounts + page.authors,
            warnings=page.warnings,
            title=page.title,
            state=_copy_state(state),
            problems=page.problems,
        )
        live = xrpc_method(url) is not None
        if page.method == PROFILE:
            self._after_profile(page, batch, live)
        elif page.method in _FEED_METHODS:
            self._after_feed(page, batch, state, url, live)
        elif page.method == RESOLVE_HANDLE and batch.state is not None:
            batch.state.extra["did"] = page.did
        elif page.method in (LIST, FOLLOWS, FOLLOWERS):
            self._after_listing(page, batch, url, live)
        elif page.method == STARTER_PACK and live and page.list_uri:
            batch.next = self._request(LIST, {"list": page.list_uri, "limit": PAGE_LIMIT})
            assert batch.state is not None
            batch.state.extra.update(list=page.list_uri, pages=1)
        return batch

    def _after_profile(self, page: Page, batch: Batch, live: bool) -> None:
        assert batch.state is not None
        (account,) = page.accounts
        batch.state.extra.update(did=account.id, handle=account.handle, pinned=account.pinned)
        if live:
            batch.next = self.feed_request(account.id)

    def _pages(self, state: SourceState, url: str | None) -> int:
        """Which page of this refresh ``url`` was: a request without a cursor starts one."""
        if "cursor" not in _query(url):
            return 1
        return int(state.extra.get("pages") or 0) + 1

    def _after_feed(
        self, page: Page, batch: Batch, state: SourceState, url: str | None, live: bool
    ) -> None:
        new = batch.state
        assert new is not None
        pinned_uri = state.extra.get("pinned")
        for item in page.items:
            if item.kind == "post" and pinned_uri and item.post and item.post.uri == pinned_uri:
                item.post = replace(item.post, pinned=True)
        first = "cursor" not in _query(url)
        times = [_entry_time(i) for i in page.items if not (i.post and i.post.pinned)]
        times = [t for t in times if t]
        earlier_pending = "" if first else _str(state.extra.get("pending_cursor"))
        pending = max([earlier_pending, *times]) or None
        reached_known = bool(state.cursor) and any(t <= (state.cursor or "") for t in times)
        pages = self._pages(state, url)
        open_gaps = [] if first else [_str(g) for g in _list(state.extra.get("open_gaps"))]
        present = {item_uri(i) for i in page.items}
        open_gaps = [g for g in open_gaps if g not in present] + find_gaps(page.items)
        open_gaps = list(dict.fromkeys(open_gaps))
        more = (
            live
            and page.cursor is not None
            and bool(page.items)
            and pages < self._int_param("max_pages", self.default_max_pages)
            and not reached_known
        )
        if more:
            actor = _query(url).get("actor") or _str(state.extra.get("did")) or self.actor
            batch.next = self.feed_request(actor, page.cursor)
            new.extra.update(
                pending_cursor=pending, pages=pages, open_gaps=open_gaps[-OPEN_GAPS_MEMORY:]
            )
            return
        for name in ("pending_cursor", "pages", "open_gaps"):
            new.extra.pop(name, None)
        if live and pending and pending > (state.cursor or ""):
            new.cursor = pending
        # The thread gaps are asked for once the pages are read: a parent missing
        # from one page is often at the top of the next.
        asked = [_str(u) for u in _list(state.extra.get("threads_asked"))]
        wanted = [g for g in open_gaps if g not in asked]
        wanted = wanted[: self._int_param("max_thread_fetches", 10)]
        batch.follow = [self.thread_request(uri) for uri in wanted]
        if wanted:
            new.extra["threads_asked"] = (asked + wanted)[-ASKED_MEMORY:]

    def _after_listing(self, page: Page, batch: Batch, url: str | None, live: bool) -> None:
        """Members of a list, follows or followers: the next page by cursor, within max_pages."""
        assert batch.state is not None
        pages = self._pages(batch.state, url)
        batch.state.extra["pages"] = pages
        limit = self._int_param("max_pages", self.default_max_pages)
        if live and page.cursor and page.accounts and pages < limit:
            params: dict[str, str | int] = {k: v for k, v in _query(url).items()}
            params["cursor"] = page.cursor
            batch.next = self._request(page.method, params)
        else:
            batch.state.extra.pop("pages", None)

    def describe_error(self, body: bytes) -> str | None:
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        return _xrpc_error(document) if isinstance(document, dict) else None

    @classmethod
    def host_interval(cls, settings: Settings) -> dict[str, float]:
        return dict.fromkeys(PUBLIC_HOSTS, PUBLIC_INTERVAL)


class BlueskyProfileSource(BlueskySource):
    """Only the profile of a Bluesky account: counts, description, pinned post.

    Made for replaying a saved getProfile answer (``lightnews ingest --kind
    bluesky-profile --from-file``); fetched, it reads the profile and stops.
    """

    kind = "bluesky-profile"
    traits = SourceTraits(repost_prefix=REPOST_PREFIX)
    summary = "Bluesky profile only (a handle or DID): counts, description, pinned post"

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        document = _load(body)
        if detect_method(document) != PROFILE:
            raise ParseError("not a Bluesky getProfile response (no did and handle)")
        account = account_from_profile(document)
        new = _copy_state(state)
        new.extra.update(did=account.id, handle=account.handle, pinned=account.pinned)
        title = f"{account.name} (@{account.handle})" if account.name else account.handle
        return Batch(accounts=[account], state=new, title=title)


class BlueskyStarterPackSource(BlueskySource):
    """The members of a Bluesky starter pack, as accounts to follow.

    Address: ``https://bsky.app/starter-pack/<handle-or-did>/<rkey>`` or the
    pack's ``at://`` URI. Reads getStarterPack, then every page of its list.
    """

    kind = "bluesky-starter-pack"
    traits = SourceTraits(repost_prefix=REPOST_PREFIX)
    summary = "Bluesky starter pack (its bsky.app/starter-pack/... URL): accounts to follow"
    default_max_pages: ClassVar[int] = 20
    reads: ClassVar[frozenset[str]] = _KNOWN

    def first_request(self, state: SourceState) -> Request | None:
        return self._request(STARTER_PACK, {"starterPack": starter_pack_uri(self.address)})


class BlueskyFollowsSource(BlueskySource):
    """The accounts a Bluesky account follows (to follow whom a scholar follows)."""

    kind = "bluesky-follows"
    traits = SourceTraits(repost_prefix=REPOST_PREFIX)
    summary = "Accounts a Bluesky account follows (a handle or DID)"
    default_max_pages: ClassVar[int] = 50

    def first_request(self, state: SourceState) -> Request | None:
        actor = _str(state.extra.get("did")) or self.actor
        if not actor:
            raise UsageError("a Bluesky source needs a handle or a DID as its address")
        return self._request(FOLLOWS, {"actor": actor, "limit": PAGE_LIMIT})


#: Which kind reads which responses (for the hint when a response comes to the wrong one).
_READERS: dict[str, type[BlueskySource]] = {
    "bluesky": BlueskySource,
    "bluesky-starter-pack": BlueskyStarterPackSource,
    "bluesky-follows": BlueskyFollowsSource,
}
