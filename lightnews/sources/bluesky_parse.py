"""Bluesky responses into the common model: posts, threads, profiles, starter packs.

Protocol facts this module relies on (the ``app.bsky`` lexicons):

* The feed holds ``feedViewPost`` objects: a ``post`` view, a ``reply`` with the
  parent and root views, and a ``reason`` (``#reasonRepost`` for a repost,
  ``#reasonPin`` for the pinned post). A repost is stored under its own key
  (``repost:<reposter DID>:<URI>``) so it never overwrites the original.
* Papers are named in the text, the facets, the link card
  (``app.bsky.embed.external``), a quoted post (``app.bsky.embed.record``,
  ``recordWithMedia``) and image alt text: all of it is searched for mentions
  (:func:`match_texts`).
* Threads are joined by ``record.reply.root`` / ``parent``. A self-reply whose
  parent the feed did not give us is a gap (:func:`find_gaps`).
* Starter packs point at a list whose members ``app.bsky.graph.getList`` pages
  by cursor; ``getFollows`` lists whom an account follows. Both become
  :class:`~lightnews.model.Account` objects.

A post without a URI or record is skipped with a warning, unknown fields are
ignored, and only a body that is not JSON, or not any response this module
knows, is a :class:`~lightnews.errors.ParseError`. Links kept from facets,
link cards and avatars are http(s) only
(:func:`~lightnews.normalize.urls.safe_url`); a post whose links were dropped
says so in a ``Problem``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from lightnews.errors import ParseError
from lightnews.model import (
    Account,
    Actor,
    Item,
    LinkCard,
    PostDetails,
    Problem,
    QuotedPost,
)
from lightnews.normalize.identifiers import find_arxiv_mentions
from lightnews.normalize.text import clean_text, iso_utc
from lightnews.normalize.urls import safe_url, safe_urls
from lightnews.sources.bluesky_protocol import (
    AUTHOR_FEED,
    FOLLOWERS,
    FOLLOWS,
    GET_RECORD,
    LIST,
    LIST_RECORDS,
    POST_COLLECTION,
    POST_THREAD,
    POSTS,
    PROFILE,
    PROFILES,
    RESOLVE_HANDLE,
    STARTER_PACK,
    TRAITS,
    as_count,
    as_list,
    as_object,
    as_str,
    dump_json,
    facet_features,
    facet_html,
    full_text,
    is_self_reply,
    item_uri,
    load_response,
    parse_resolve_handle,
    post_url,
    split_at_uri,
    type_of,
    xrpc_method,
)

__all__ = [
    "FEED_METHODS",
    "KNOWN_METHODS",
    "TITLE_LENGTH",
    "Page",
    "account_from_profile",
    "detect_method",
    "find_gaps",
    "match_texts",
    "parse_profile",
    "parse_response",
    "post_item",
]


TITLE_LENGTH = 120

_MAX_THREAD_DEPTH = 1000

#: Methods answering ``{feed: [feedViewPost], cursor}``: all read the same way.
FEED_METHODS = frozenset(
    {
        AUTHOR_FEED,
        "app.bsky.feed.getFeed",
        "app.bsky.feed.getTimeline",
        "app.bsky.feed.getActorLikes",
        "app.bsky.feed.getListFeed",
    }
)


def _who(profile: dict[str, Any]) -> dict[str, str]:
    return {
        "did": as_str(profile.get("did")),
        "handle": as_str(profile.get("handle")),
        "name": clean_text(as_str(profile.get("displayName"))),
    }


def _external(external: dict[str, Any]) -> LinkCard | None:
    """A link card, or None when it has no http(s) link (a ``javascript:`` card is dropped)."""
    uri = safe_url(external.get("uri"))
    if not uri:
        return None
    title, about = as_str(external.get("title")), as_str(external.get("description"))
    return LinkCard(uri, clean_text(title), clean_text(about))


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
    uri = as_str(inner.get("uri"))
    parts = split_at_uri(uri)
    if found.quote or parts is None or parts[1] != POST_COLLECTION:
        return  # a quoted feed, list or starter pack: not a post
    value = as_object(inner.get("value"))
    author = _who(as_object(inner.get("author")))
    text = as_str(value.get("text"))
    links = [f.get("uri") for kind, f in facet_features(value.get("facets")) if kind == "link"]
    for embed in as_list(inner.get("embeds")):
        card = _external(as_object(as_object(embed).get("external")))
        if card:
            links.append(card.uri)
    record_card = _external(as_object(as_object(value.get("embed")).get("external")))
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
    kind = type_of(embed)
    if kind == "app.bsky.embed.external" or (not kind and "external" in embed):
        found.card = found.card or _external(as_object(embed.get("external")))
    elif kind == "app.bsky.embed.images" or (not kind and "images" in embed):
        images = as_list(embed.get("images"))
        found.alts.extend(clean_text(as_str(as_object(image).get("alt"))) for image in images)
    elif kind == "app.bsky.embed.video":
        found.video_alt = clean_text(as_str(embed.get("alt")))
    elif kind == "app.bsky.embed.recordWithMedia" or (not kind and "media" in embed):
        _read_embed(as_object(embed.get("media")), found)
        _read_embed(as_object(embed.get("record")), found)
    elif kind == "app.bsky.embed.record" or (not kind and "record" in embed):
        _read_quote(as_object(embed.get("record")), found)


def match_texts(record: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Where a raw post record can name a paper, read as :func:`post_item` reads a post.

    ``(links, texts)``: the facet and link-card links (http(s) only), then the
    text with its links whole, the link card's title and description and the
    alt texts. For the firehose (:mod:`lightnews.sources.jetstream`), which
    reads a great many records and keeps few: no item is built.
    """
    text = as_str(record.get("text"))
    facets = record.get("facets")
    found = _Embed()
    _read_embed(as_object(record.get("embed")), found)
    raw_links = [f.get("uri") for kind, f in facet_features(facets) if kind == "link"]
    links = safe_urls([*raw_links, found.card.uri if found.card else None, *found.quote_links])
    texts = [full_text(text, facets), *found.alts, found.video_alt]
    if found.card:
        texts += [found.card.title, found.card.description]
    return links, [t for t in texts if t]


def _labels(post: dict[str, Any], record: dict[str, Any]) -> list[str]:
    values = [as_str(as_object(label).get("val")) for label in as_list(post.get("labels"))]
    own = as_list(as_object(record.get("labels")).get("values"))
    values += [as_str(as_object(v).get("val")) for v in own]
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
    uri = as_str(post.get("uri"))
    parts = split_at_uri(uri)
    record = post.get("record")
    if parts is None or not isinstance(record, dict):
        what = "no record" if parts else f"no post URI ({uri or 'missing'})"
        raise ParseError(f"Bluesky post with {what} skipped")
    author = _who(as_object(post.get("author")))
    did = author["did"] or parts[0]
    handle = author["handle"]
    text = as_str(record.get("text"))
    facets = record.get("facets")

    found = _Embed()
    # The view form carries the quoted post's text; a raw record has only the record form.
    embed = as_object(post.get("embed") or record.get("embed"))
    _read_embed(embed, found)

    raw_links = [f.get("uri") for kind, f in facet_features(facets) if kind == "link"]
    raw_card = as_object(as_object(embed.get("external")))
    unsafe = [u for u in [*raw_links, raw_card.get("uri")] if u and safe_url(u) is None]
    links = safe_urls([*raw_links, found.card.uri if found.card else None, *found.quote_links])
    mentions = [as_str(f.get("did")) for kind, f in facet_features(facets) if kind == "mention"]
    tags = [as_str(f.get("tag")) for kind, f in facet_features(facets) if kind == "tag"]
    tags += [as_str(t) for t in as_list(record.get("tags"))]
    tags = list(dict.fromkeys(t for t in tags if t))

    reply_ref = as_object(record.get("reply"))
    root_uri = as_str(as_object(reply_ref.get("root")).get("uri")) or None
    parent_uri = as_str(as_object(reply_ref.get("parent")).get("uri")) or None

    key, kind = uri, "post"
    reason = reason or {}
    reason_type = as_str(reason.get("$type"))
    pinned = reason_type.endswith("#reasonPin")
    reposted_by, reposted_at = None, None
    if not pinned and (reason_type.endswith("#reasonRepost") or "by" in reason):
        by = _who(as_object(reason.get("by")))
        reposted_by = Actor(by["did"], by["handle"], by["name"])
        reposted_at = iso_utc(reason.get("indexedAt"))
        key, kind = TRAITS.repost_key(by["did"], uri), "repost"
    reply = reply or {}
    ends = {end: as_object(reply.get(end)) for end in ("parent", "root")}
    authors = {
        end: as_str(as_object(v.get("author")).get("handle")) or None for end, v in ends.items()
    }
    gone = {end: bool(v.get("notFound") or v.get("blocked")) for end, v in ends.items()}
    details = PostDetails(
        uri=uri,
        cid=as_str(post.get("cid")),
        did=did,
        handle=handle,
        langs=tuple(as_str(lang) for lang in as_list(record.get("langs")) if as_str(lang)),
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
        count = as_count(post.get(source_name))
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
        payload=dump_json(payload if payload is not None else {"post": post}),
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
            reason=as_object(entry.get("reason")),
            reply=as_object(entry.get("reply")),
            payload=entry,
            problems=page.problems,
        )
    except ParseError as error:
        page.warnings.append(str(error))
    except Exception as error:  # a programmer's error on one post must not lose the page
        uri = as_str(entry["post"].get("uri")) or None
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


def account_from_profile(profile: dict[str, Any]) -> Account:
    """An account from a ``profileView``/``profileViewDetailed`` (counts only in the latter)."""
    did = as_str(profile.get("did"))
    if not did.startswith("did:"):
        raise ParseError("Bluesky profile without a DID")
    pinned = as_str(as_object(profile.get("pinnedPost")).get("uri")) or None
    return Account(
        service="bluesky",
        id=did,
        handle=as_str(profile.get("handle")),
        name=clean_text(as_str(profile.get("displayName"))),
        description=as_str(profile.get("description")).strip(),
        avatar=safe_url(profile.get("avatar")),
        followers=as_count(profile.get("followersCount")),
        following=as_count(profile.get("followsCount")),
        posts=as_count(profile.get("postsCount")),
        pinned=pinned,
        created=iso_utc(profile.get("createdAt")),
        payload=dump_json(profile),
    )


def parse_profile(body: bytes | dict[str, Any]) -> Account:
    """The account of an ``app.bsky.actor.getProfile`` answer."""
    return account_from_profile(load_response(body))


def _accounts(profiles: Iterable[Any], warnings: list[str]) -> list[Account]:
    accounts = []
    for profile in profiles:
        try:
            accounts.append(account_from_profile(as_object(profile)))
        except ParseError as error:
            warnings.append(str(error))
    return accounts


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
    for entry in as_list(document.get("feed")):
        item = _entry_item(entry, page)
        if item:
            page.items.append(item)
        # Everyone who posted or reposted here becomes a known account (without
        # profile counts), so that bots among them can be recognised.
        entry = as_object(entry)
        for who in (
            as_object(as_object(entry.get("post")).get("author")),
            as_object(as_object(entry.get("reason")).get("by")),
        ):
            did = as_str(who.get("did"))
            if did.startswith("did:") and did not in seen:
                seen.add(did)
                page.authors.append(
                    Account(
                        service="bluesky",
                        id=did,
                        handle=as_str(who.get("handle")),
                        name=clean_text(as_str(who.get("displayName"))),
                        avatar=safe_url(who.get("avatar")),
                    )
                )


def _thread_page(document: dict[str, Any], page: Page) -> None:
    """Every post of a ``threadViewPost``: its parents root first, itself, then replies."""
    top = as_object(document.get("thread"))
    chain: list[dict[str, Any]] = []
    node: dict[str, Any] = top
    while node and len(chain) < _MAX_THREAD_DEPTH:
        chain.append(node)
        node = as_object(node.get("parent"))
    nodes = list(reversed(chain))
    stack = list(reversed(as_list(top.get("replies"))))
    while stack and len(nodes) < 10 * _MAX_THREAD_DEPTH:
        reply = as_object(stack.pop())
        nodes.append(reply)
        stack.extend(reversed(as_list(reply.get("replies"))))
    seen: set[str] = set()
    for view in nodes:
        post = view.get("post")
        if not isinstance(post, dict):
            continue  # #notFoundPost, #blockedPost: nothing to store
        parent = as_object(view.get("parent"))
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
            uri = as_str(post.get("uri")) or None
            page.problems.append(Problem(f"post skipped: {type(error).__name__}: {error}", uri))
            continue
        if item.key not in seen:
            seen.add(item.key)
            page.items.append(item)


def _starter_pack_page(document: dict[str, Any], page: Page) -> None:
    pack = as_object(document.get("starterPack"))
    record = as_object(pack.get("record"))
    page.title = clean_text(as_str(record.get("name"))) or None
    listed = as_str(as_object(pack.get("list")).get("uri")) or as_str(record.get("list"))
    page.list_uri = listed or None
    page.accounts = _accounts(
        (as_object(i).get("subject") for i in as_list(pack.get("listItemsSample"))), page.warnings
    )


def _records_page(records: Iterable[Any], page: Page) -> None:
    for raw in records:
        record = as_object(raw)
        value = as_object(record.get("value"))
        uri = as_str(record.get("uri"))
        parts = split_at_uri(uri)
        record_type = as_str(value.get("$type")) or (parts[1] if parts else "")
        if parts is None or record_type != POST_COLLECTION:
            kind = record_type or "unknown"
            page.warnings.append(f"Bluesky record of type {kind} is not a post; skipped")
            continue
        post = {"uri": uri, "cid": record.get("cid"), "record": value}
        try:
            page.items.append(post_item(post, payload=record, problems=page.problems))
        except Exception as error:  # a programmer's error on one record must not lose the page
            page.problems.append(Problem(f"record skipped: {type(error).__name__}: {error}", uri))


KNOWN_METHODS = frozenset(
    {
        *FEED_METHODS,
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
    document = load_response(body)
    method = xrpc_method(url)
    if method not in KNOWN_METHODS:
        method = detect_method(document)
    if method is None:
        keys = ", ".join(sorted(document)[:8]) or "none"
        raise ParseError(f"not a Bluesky response this source reads (keys: {keys})")
    page = Page(method, cursor=as_str(document.get("cursor")) or None)
    if method in FEED_METHODS:
        if not isinstance(document.get("feed"), list):
            raise ParseError(f"{method} response has no feed list")
        _feed_page(document, page)
    elif method == POST_THREAD:
        if not isinstance(document.get("thread"), dict):
            raise ParseError("getPostThread response has no thread")
        _thread_page(document, page)
    elif method == POSTS:
        for post in as_list(document.get("posts")):
            item = _entry_item({"post": post}, page)
            if item:
                page.items.append(item)
    elif method == PROFILE:
        account = account_from_profile(document)
        page.accounts.append(account)
        page.title = f"{account.name} (@{account.handle})" if account.name else account.handle
        page.did = account.id
    elif method == PROFILES:
        page.accounts = _accounts(as_list(document.get("profiles")), page.warnings)
    elif method == STARTER_PACK:
        if not isinstance(document.get("starterPack"), dict):
            raise ParseError("getStarterPack response has no starterPack")
        _starter_pack_page(document, page)
    elif method == LIST:
        if not isinstance(document.get("items"), list):
            raise ParseError("getList response has no items list")
        listing = as_object(document.get("list"))
        page.title = clean_text(as_str(listing.get("name"))) or None
        page.list_uri = as_str(listing.get("uri")) or None
        subjects = (as_object(i).get("subject") for i in document["items"])
        page.accounts = _accounts(subjects, page.warnings)
    elif method in (FOLLOWS, FOLLOWERS):
        name = "follows" if method == FOLLOWS else "followers"
        if not isinstance(document.get(name), list):
            raise ParseError(f"{method} response has no {name} list")
        page.accounts = _accounts(document[name], page.warnings)
    elif method == RESOLVE_HANDLE:
        page.did = parse_resolve_handle(document)
    elif method == LIST_RECORDS:
        _records_page(as_list(document.get("records")), page)
    elif method == GET_RECORD:
        _records_page([document], page)
    _fill_reply_authors(page.items)
    return page


def find_gaps(items: Iterable[Item]) -> list[str]:
    """Parents of self-replies that ``items`` lack: the posts a thread is missing."""
    items = list(items)
    present = {item_uri(i) for i in items if i.kind == "post"}
    gaps = [i.reply_parent for i in items if is_self_reply(i) and i.reply_parent not in present]
    return list(dict.fromkeys(g for g in gaps if g))
