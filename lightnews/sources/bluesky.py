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

Three modules: :mod:`~lightnews.sources.bluesky_protocol` (XRPC, AT URIs, rich
text, the kind's traits), :mod:`~lightnews.sources.bluesky_parse` (responses
into the common model) and this one (the source kinds: what to ask next, and
what a refresh keeps between pages). The names other modules use are
re-exported here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import orjson

from lightnews.errors import ParseError, UsageError
from lightnews.model import (
    Batch,
    Item,
    Request,
    SourceState,
)
from lightnews.settings import Settings
from lightnews.sources import Source, SourceTraits
from lightnews.sources.bluesky_parse import (
    FEED_METHODS,
    KNOWN_METHODS,
    Page,
    account_from_profile,
    detect_method,
    find_gaps,
    match_texts,
    parse_profile,
    parse_response,
    post_item,
)
from lightnews.sources.bluesky_protocol import (
    API_URL,
    AUTHOR_FEED,
    FOLLOWERS,
    FOLLOWS,
    LIST,
    POST_THREAD,
    PROFILE,
    PUBLIC_HOSTS,
    PUBLIC_INTERVAL,
    REPOST_PREFIX,
    RESOLVE_HANDLE,
    STARTER_PACK,
    TRAITS,
    as_list,
    as_str,
    facet_html,
    facet_spans,
    full_text,
    item_uri,
    load_response,
    normalize_actor,
    parse_resolve_handle,
    post_url,
    query_params,
    split_at_uri,
    starter_pack_uri,
    xrpc_error,
    xrpc_method,
)

__all__ = [
    "API_URL",
    "ASKED_MEMORY",
    "FEED_FILTER",
    "OPEN_GAPS_MEMORY",
    "PAGE_LIMIT",
    "REPOST_PREFIX",
    "THREAD_PARENT_HEIGHT",
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


FEED_FILTER = "posts_and_author_threads"

PAGE_LIMIT = 100

THREAD_PARENT_HEIGHT = 80

#: Thread URIs remembered as already asked for, so a deleted parent is not asked every run.
ASKED_MEMORY = 500

#: Gaps carried from page to page of one refresh (a parent is often on the next page).
OPEN_GAPS_MEMORY = 500


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
    traits = TRAITS
    default_max_pages: ClassVar[int] = 5
    #: The responses this kind reads (saved files are recognised by their shape); a
    #: starter pack is refused: its members are followed only through its own kind.
    reads: ClassVar[frozenset[str]] = KNOWN_METHODS - {STARTER_PACK}

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
        actor = as_str(state.extra.get("did")) or self.actor
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
        elif page.method in FEED_METHODS:
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
        if "cursor" not in query_params(url):
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
        first = "cursor" not in query_params(url)
        times = [_entry_time(i) for i in page.items if not (i.post and i.post.pinned)]
        times = [t for t in times if t]
        earlier_pending = "" if first else as_str(state.extra.get("pending_cursor"))
        pending = max([earlier_pending, *times]) or None
        reached_known = bool(state.cursor) and any(t <= (state.cursor or "") for t in times)
        pages = self._pages(state, url)
        open_gaps = [] if first else [as_str(g) for g in as_list(state.extra.get("open_gaps"))]
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
            actor = query_params(url).get("actor") or as_str(state.extra.get("did")) or self.actor
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
        asked = [as_str(u) for u in as_list(state.extra.get("threads_asked"))]
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
            params: dict[str, str | int] = {k: v for k, v in query_params(url).items()}
            params["cursor"] = page.cursor
            batch.next = self._request(page.method, params)
        else:
            batch.state.extra.pop("pages", None)

    def describe_error(self, body: bytes) -> str | None:
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        return xrpc_error(document) if isinstance(document, dict) else None

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
        document = load_response(body)
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
    reads: ClassVar[frozenset[str]] = KNOWN_METHODS

    def first_request(self, state: SourceState) -> Request | None:
        return self._request(STARTER_PACK, {"starterPack": starter_pack_uri(self.address)})


class BlueskyFollowsSource(BlueskySource):
    """The accounts a Bluesky account follows (to follow whom a scholar follows)."""

    kind = "bluesky-follows"
    traits = SourceTraits(repost_prefix=REPOST_PREFIX)
    summary = "Accounts a Bluesky account follows (a handle or DID)"
    default_max_pages: ClassVar[int] = 50

    def first_request(self, state: SourceState) -> Request | None:
        actor = as_str(state.extra.get("did")) or self.actor
        if not actor:
            raise UsageError("a Bluesky source needs a handle or a DID as its address")
        return self._request(FOLLOWS, {"actor": actor, "limit": PAGE_LIMIT})


#: Which kind reads which responses (for the hint when a response comes to the wrong one).
_READERS: dict[str, type[BlueskySource]] = {
    "bluesky": BlueskySource,
    "bluesky-starter-pack": BlueskyStarterPackSource,
    "bluesky-follows": BlueskyFollowsSource,
}
