"""The pipeline: fetch -> parse -> normalize/link -> store, for one source at a time.

A refresh walks every due source. For each it asks the source for its first
request, fetches it through the shared polite client, parses the bytes into a
batch, and stores the batch's items *and* the source's new state (ETag,
cursor, resumption token) in one transaction, page after page. So a crash
loses at most the page in flight, and the next run resumes from the saved
state.

Write transactions stay short, because every other writer of the library (a
second refresh, the web app marking a story, an import) waits for them:
parsing, linking titles (which reads the whole library's titles) and
embedding happen outside them, and only the rows are written inside (see
:func:`_store_page`). A database that stays busy past the store's wait stops
the run with :class:`~lightnews.errors.Busy` rather than being recorded as the
source's failure: the source is not broken, and the next run reads it again.

A source that fails (network, HTTP status, unreadable payload) gets the error
recorded on its row with a clear message and a next attempt time that backs
off exponentially; the other sources carry on and nothing stored is lost.
Replaying a saved response (``ingest --from-file``) runs the same parse and
store steps on bytes read from disk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from lightnews.embed import EmbedReport, SemanticUnavailable, embed_papers, semantic_unavailable
from lightnews.errors import FetchError, LightnewsError, ParseError, Unavailable, UsageError
from lightnews.link import link_titles
from lightnews.link.attribution import attribute_new, attribute_scholar, parse_name
from lightnews.link.bots import bot_reason
from lightnews.model import (
    Account,
    Batch,
    Item,
    Mention,
    QueryTerm,
    Reference,
    Request,
    SourceState,
)
from lightnews.normalize.times import iso, utc_now
from lightnews.settings import Settings
from lightnews.sources import Source, get_source_class
from lightnews.sources.arxiv_api import ArxivApiSource
from lightnews.sources.http import HttpClient
from lightnews.store import BACKEND_ERRORS, SaveResult, SourceRow, Store, unavailable
from lightnews.store.readers import LOCAL_READER, ReaderId
from lightnews.store.relink import RELINKED_METHODS

__all__ = [
    "RelinkReport",
    "Resolved",
    "RunReport",
    "due_for_refresh",
    "fetch_cited_papers",
    "ingest_bytes",
    "ingest_file",
    "refresh",
    "refresh_one",
    "refresh_source",
    "relink_retitled",
    "resolve_bytes",
    "resolve_input",
    "sniff_kind",
    "unfollow_scholar",
    "utc_now",
]

MAX_PAGES = 10_000
MAX_FOLLOW = 50
MAX_TITLE_LOOKUPS = 20
#: References asked of arXiv in one query (joined with OR).
TITLE_LOOKUP_BATCH = 5
#: The source row that resolves stubs, and how many ids it asks arXiv for at once.
STUBS = ("arxiv-api", "stubs")
STUB_BATCH = 50
STUB_LIMIT = 500
#: Times a stub is asked of arXiv before it is left (an id arXiv does not know).
STUB_TRIES = 5
#: Retitled papers one relinking round takes, and items a new title's words may find.
RELINK_PAPERS = 50
RELINK_CANDIDATES = 200
#: Addresses of sources made by replaying files; ``refresh`` leaves them alone.
REPLAY_PREFIXES = ("file://", "demo:")


@dataclass(slots=True)
class RunReport:
    """What happened to one source in one run."""

    source_id: int
    kind: str
    address: str
    ok: bool = True
    pages: int = 0
    not_modified: bool = False
    saved: SaveResult = field(default_factory=SaveResult)
    error: str | None = None
    next_attempt: str | None = None
    #: Items naming papers by "Surname: short title" that no stored paper matched.
    unresolved: list[Item] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "source_id": self.source_id,
            "kind": self.kind,
            "url": self.address,
            "ok": self.ok,
            "pages": self.pages,
            "not_modified": self.not_modified,
            "papers_new": self.saved.papers_new,
            "papers_updated": self.saved.papers_updated,
            "items_new": self.saved.items_new,
            "items_updated": self.saved.items_updated,
            "mentions": self.saved.mentions,
            "warnings": self.saved.warnings,
            "error": self.error,
            "next_attempt": self.next_attempt,
        }


def _backoff(settings: Settings, failures: int, retry_after: float | None) -> timedelta:
    """Wait before the next attempt: doubles per failure from one refresh period, capped."""
    base = timedelta(minutes=int(settings.refresh_minutes)) / 4
    wait = min(base * (1 << min(failures, 16)), timedelta(hours=int(settings.retry_max_hours)))
    if retry_after is not None:
        wait = max(wait, timedelta(seconds=retry_after))
    return wait


def _source_for(row: SourceRow, settings: Settings) -> Source:
    return get_source_class(row.kind)(row.address, row.params, settings)


def _store_page(
    store: Store,
    row: SourceRow,
    batch: Batch,
    report: RunReport,
    now: str,
    settings: Settings,
) -> None:
    """Store one parsed page in two short write transactions, linking between them.

    Papers first (their own transaction), so that titles named on this very
    page can be linked to them; then the items are linked to stored papers,
    which only reads (on a large library it takes long: held inside the write
    transaction it kept every other writer waiting); then the items, accounts
    and the source's new state are written together. A crash between the two
    loses nothing: the state was not saved, so the page is read again, and
    its papers are then unchanged. Accounts are classified (bots) afterwards,
    each decision written on its own.
    """
    report.saved.add(store.save_papers(batch.papers, now))
    relink_retitled(store, bar=settings.link_bar)
    link_titles(batch.items, store, bar=settings.link_bar)
    with store.transaction():
        report.saved.add(store.save_items(row.id, batch.items, now, well_formed=batch.well_formed))
        if batch.title and not row.title:
            store.set_source_title(row.id, batch.title)
        if batch.accounts:
            store.save_accounts(batch.accounts, now)
            _link_accounts(store, row, batch, now)
        if batch.state is not None:
            store.save_state(row.id, batch.state)
    report.unresolved += [
        i
        for i in batch.items
        if i.references and len(i.mentions) < len(i.references)
    ][:MAX_TITLE_LOOKUPS]
    _classify_accounts(store, {i.account for i in batch.items if i.account})
    report.saved.warnings.extend(batch.warnings)
    report.saved.warnings.extend(str(problem) for problem in batch.problems)


@dataclass(slots=True)
class RelinkReport:
    """What one relinking pass did: papers checked, items read, links dropped and made."""

    papers: int = 0
    items: int = 0
    unlinked: int = 0
    linked: int = 0


def relink_retitled(store: Store, *, bar: float, limit: int = RELINK_PAPERS) -> RelinkReport:
    """Links by title made again for papers whose title changed (``relink_queue``).

    A new version that changes a paper's title queues the paper (a trigger, as
    for re-embedding; :mod:`lightnews.store.relink`). Each item linked to it by
    title, and each item whose text holds the new title's telling words, is read
    by the one linker again (:func:`~lightnews.link.link_titles`) against the
    library as it is now: a mention whose text no longer names the paper, and
    names no other, is dropped; one that names another paper now is linked to
    it; one that still names it records the new version; an item naming the new
    title is linked. Reading happens outside the write transaction (it reads the
    library's titles); the rewrite of each item's links by title and the
    queue's removal are one short transaction per round. Costs a one-row
    lookup when no title changed.
    """
    report = RelinkReport()
    while queued := store.retitled_papers(limit):
        items = dict(store.title_linked_items([p.paper_id for p in queued]))
        found: set[int] = set()
        for paper in queued:
            terms = _telling_terms(paper.title)
            if not terms:
                continue
            try:
                found.update(m.item_id for m in store.search_items(terms, RELINK_CANDIDATES))
            except UsageError:
                continue  # a search too expensive here: the links by title are still checked
        items.update(store.items_to_relink(sorted(found - set(items))))
        for item in items.values():
            item.mentions = [m for m in item.mentions if m.method not in RELINKED_METHODS]
        link_titles(list(items.values()), store, bar=bar)
        with store.transaction():
            for item_id, item in sorted(items.items()):
                removed, added = store.replace_title_links(item_id, item.mentions)
                report.unlinked += removed
                report.linked += added
            store.relinked([p.paper_id for p in queued])
        report.papers += len(queued)
        report.items += len(items)
    return report


def _telling_terms(title: str) -> list[QueryTerm]:
    """The longest words of a title (up to three), each a term a text naming it must hold."""
    words = sorted(
        {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]{3,}", title)},
        key=lambda w: (-len(w), w),
    )
    return [QueryTerm(w) for w in words[:3]]


def _link_accounts(store: Store, row: SourceRow, batch: Batch, now: str) -> None:
    """Tie the accounts a source reported to scholars.

    A source followed for a scholar (``follow @handle``) names that scholar's
    account: its DID and handle become identities and its display name the
    scholar's name. A source that follows a group (a starter pack) makes each
    member a followed scholar with a source of their own.
    """
    address = row.address.removeprefix("@").lower()
    for account in batch.accounts:
        did_kind, handle_kind = f"{account.service}-did", f"{account.service}-handle"
        owner = store.scholar_by_identity(did_kind, account.id) or (
            store.scholar_by_identity(handle_kind, account.handle) if account.handle else None
        )
        if (
            owner is None
            and row.scholar_id is not None
            and address in (account.id.lower(), account.handle.lower())
        ):
            owner = row.scholar_id
        if owner is not None:
            # The DID stays when a handle changes: both are kept as identities.
            store.add_identity(owner, did_kind, account.id)
            if account.handle:
                store.add_identity(owner, handle_kind, account.handle)
            scholar = store.get_scholar(owner)
            placeholder = scholar.name.removeprefix("@").lower()
            if account.name and placeholder in (account.handle.lower(), account.id.lower()):
                store.rename_scholar(owner, account.name)
        elif row.params.get("follow_members"):
            follow_account(store, _pack_reader(store, row), account, now)


def _pack_reader(store: Store, row: SourceRow) -> ReaderId:
    """Who follows the members a starter pack brings: whoever followed the pack (its
    ``follow_for``); for a pack followed before accounts (or by an account since removed),
    the local reader, or the first admin once there are accounts (who took its state over)."""
    given = row.params.get("follow_for")
    if isinstance(given, int) and given and store.user_by_id(given) is not None:
        return ReaderId(given)
    admins = [u for u in store.list_users() if u.admin]
    return min(admins, key=lambda u: u.id).reader if admins else LOCAL_READER


def _classify_accounts(store: Store, account_ids: set[str]) -> None:
    """Mark accounts that only post or repost arXiv listings (see :mod:`lightnews.link.bots`)."""
    for account_id in sorted(account_ids):
        account = store.get_account("bluesky", account_id)
        if account is None:
            continue
        reason = bot_reason(account, store.account_items([account_id], limit=50))
        if bool(reason) != account.bot or reason != account.bot_reason:
            store.mark_bot("bluesky", account_id, reason)


def arxiv_author_query(name: str) -> str:
    """arXiv's author search: ``au:Hochreiter_S`` finds "S. Hochreiter" and "Sepp Hochreiter"."""
    parts = parse_name(name)
    surname_words = name.split()[-len(parts.surname.split()) :] if parts.surname else []
    if len(surname_words) == 1 and parts.given and surname_words[0].isalpha():
        return f"au:{surname_words[0]}_{parts.given[0][0].upper()}"
    return f'au:"{name}"'


def follow_scholar(
    store: Store,
    reader: ReaderId,
    now: str,
    *,
    handle: str | None = None,
    arxiv_author: str | None = None,
    orcid: str | None = None,
    scholar_id: int | None = None,
) -> int:
    """``reader`` follows a scholar by Bluesky handle or DID, arXiv name and/or ORCID (idempotent).

    Each identity is tied to ``scholar_id``, to the scholar who already has it,
    or to a new scholar; handles and arXiv names get a source reading them.
    Attributions are recomputed. Returns the scholar's id.
    """
    if handle:
        handle = handle.removeprefix("@").strip()
        kind = "bluesky-did" if handle.startswith("did:") else "bluesky-handle"
        scholar_id = (
            scholar_id
            or store.scholar_by_identity(kind, handle)
            or store.create_scholar(f"@{handle}", now)
        )
        store.add_identity(scholar_id, kind, handle)
        store.add_source("bluesky", handle, now=now, scholar_id=scholar_id)
    if arxiv_author:
        name = " ".join(arxiv_author.split())
        scholar_id = (
            scholar_id
            or store.scholar_by_identity("arxiv-name", name)
            or store.create_scholar(name, now)
        )
        store.add_identity(scholar_id, "arxiv-name", name)
        store.add_source("arxiv-api", arxiv_author_query(name), now=now, title=name,
                         scholar_id=scholar_id)  # fmt: skip
    if orcid:
        scholar_id = (
            scholar_id
            or store.scholar_by_identity("orcid", orcid)
            or store.create_scholar(f"ORCID {orcid}", now)
        )
        store.add_identity(scholar_id, "orcid", orcid)
    if scholar_id is None:
        raise UsageError("give a Bluesky handle, an arXiv author name or an ORCID")
    store.set_followed(reader, scholar_id, True, now)
    attribute_scholar(store, scholar_id)
    return scholar_id


def follow_fetched(
    store: Store,
    reader: ReaderId,
    now: str,
    *,
    handle: str | None = None,
    arxiv_author: str | None = None,
    orcid: str | None = None,
) -> tuple[list[int], list[str]]:
    """``reader`` follows a scholar without changing what the instance fetches or who is who.

    A reader of a shared instance who may not add sources (the
    ``readers_add_sources`` setting) follows the scholars who already hold the
    identities given; when none does, one new scholar with them (no source:
    what the library already holds is attributed). No identity is tied to an
    existing scholar and no source is added. Returns the scholars followed and
    the accounts and authors given that are new to the instance, so not fetched
    (``"@handle"``, ``"arXiv author Name"``), for the reader to be told.
    """
    wanted: list[tuple[str, str]] = []
    if handle:
        handle = handle.removeprefix("@").strip()
        wanted.append(("bluesky-did" if handle.startswith("did:") else "bluesky-handle", handle))
    if arxiv_author:
        wanted.append(("arxiv-name", " ".join(arxiv_author.split())))
    if orcid:
        wanted.append(("orcid", orcid))
    if not wanted:
        raise UsageError("give a Bluesky handle, an arXiv author name or an ORCID")
    found = [store.scholar_by_identity(kind, value) for kind, value in wanted]
    followed = list(dict.fromkeys(s for s in found if s is not None))
    if not followed:
        kind, value = wanted[0]
        name = f"@{value}" if kind.startswith("bluesky") else value
        if kind == "orcid":
            name = f"ORCID {value}"
        created = store.create_scholar(name, now)
        for kind, value in wanted:
            store.add_identity(created, kind, value)
        followed = [created]
    for scholar_id in followed:
        store.set_followed(reader, scholar_id, True, now)
        attribute_scholar(store, scholar_id)
    unfetched = [f"@{value}" if kind.startswith("bluesky") else f"arXiv author {value}"
                 for (kind, value), owner in zip(wanted, found, strict=True)
                 if owner is None and kind != "orcid"]  # fmt: skip
    return followed, unfetched


def follow_account(store: Store, reader: ReaderId, account: Account, now: str) -> int:
    """``reader`` follows ``account`` as a scholar with a source reading its posts (idempotent)."""
    did_kind = f"{account.service}-did"
    scholar_id = store.scholar_by_identity(did_kind, account.id)
    if scholar_id is None:
        scholar_id = store.create_scholar(account.name or account.handle or account.id, now)
        store.add_identity(scholar_id, did_kind, account.id)
    if account.handle:
        store.add_identity(scholar_id, f"{account.service}-handle", account.handle)
    store.add_source(
        account.service,
        account.handle or account.id,
        now=now,
        title=account.name or None,
        scholar_id=scholar_id,
    )
    store.set_followed(reader, scholar_id, True, now)
    return scholar_id


def unfollow_scholar(store: Store, reader: ReaderId, scholar_id: int, now: str) -> None:
    """``reader`` stops following a scholar (kept); when no reader follows them any more,
    their sources pause (their records stay)."""
    store.set_followed(reader, scholar_id, False, now)
    if not store.get_scholar(scholar_id).followed:  # nobody follows them now
        for source in store.scholar_sources(scholar_id):
            store.set_source_enabled(source.id, False)


def refresh_source(
    store: Store,
    row: SourceRow,
    client: HttpClient,
    settings: Settings,
    *,
    source: Source | None = None,
    clock: Callable[[], datetime] = utc_now,
    on_page: Callable[[RunReport], None] | None = None,
) -> RunReport:
    """Fetch every page a source has for us now; record the outcome on its row."""
    report = RunReport(row.id, row.kind, row.address)
    started = clock()
    store.record_attempt(row.id, iso(started))
    try:
        source = source or _source_for(row, settings)
        if not source.fetchable:
            raise LightnewsError(f"source kind {row.kind} can only be read from a file")
        for host, seconds in source.host_interval(settings).items():
            client.set_host_interval(host, seconds)
        state = row.state
        request = source.first_request(state)
        follow: list[Request] = []
        while request is not None and report.pages < MAX_PAGES:
            response = client.get(
                request.url,
                params=request.params or None,
                etag=state.etag if request.conditional else None,
                last_modified=state.last_modified if request.conditional else None,
            )
            report.pages += 1
            if response.not_modified:
                report.not_modified = True
                break
            batch = source.read(response.body, state, url=response.url)
            new_state = batch.state or state
            if request.conditional:
                new_state.etag = response.etag or new_state.etag
                new_state.last_modified = response.last_modified or new_state.last_modified
            batch.state = new_state
            _store_page(store, row, batch, report, iso(clock()), settings)
            follow.extend(r for r in batch.follow if r not in follow)
            state = new_state
            request = batch.next
            if on_page:
                on_page(report)
        # Requests a page called for (a thread's missing posts): best effort, no paging.
        for extra in follow[:MAX_FOLLOW]:
            try:
                response = client.get(extra.url, params=extra.params or None)
                batch = source.read(response.body, state, url=response.url)
            except (FetchError, ParseError) as error:
                report.saved.warnings.append(f"could not complete from {extra.url}: {error}")
                continue
            batch.state, batch.next, batch.follow = None, None, []
            report.pages += 1
            _store_page(store, row, batch, report, iso(clock()), settings)
    except Unavailable:
        raise  # the database, not the source: nothing to record on it (see the docstring)
    except BACKEND_ERRORS as error:
        raise unavailable(error) from error
    except FetchError as error:
        message = str(error)
        detail = source.describe_error(error.body) if source and error.body else None
        if detail:
            message = f"{message}: {detail}"
        return _fail(store, row, report, message, settings, clock(), error.retry_after)
    except (ParseError, LightnewsError) as error:
        return _fail(store, row, report, str(error), settings, clock(), None)
    except Exception as error:  # a parser bug must not stop the other sources
        message = f"internal error while reading this source: {type(error).__name__}: {error}"
        return _fail(store, row, report, message, settings, clock(), None)
    return _succeed(store, row, report, settings, clock())


def _succeed(
    store: Store, row: SourceRow, report: RunReport, settings: Settings, now: datetime
) -> RunReport:
    """Record a run that stored what it read; problems in the input still show as errors."""
    next_attempt = iso(now + timedelta(minutes=int(settings.refresh_minutes)))
    report.next_attempt = next_attempt
    store.record_success(row.id, iso(now), next_attempt, clean=not report.saved.warnings)
    if report.saved.warnings:
        problems = list(dict.fromkeys(report.saved.warnings))
        message = "; ".join(problems[:3]) + (
            f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        store.record_failure(row.id, message, iso(now), next_attempt)
        report.ok = False
        report.error = message
    return report


def _fail(
    store: Store,
    row: SourceRow,
    report: RunReport,
    message: str,
    settings: Settings,
    now: datetime,
    retry_after: float | None,
) -> RunReport:
    next_attempt = iso(now + _backoff(settings, row.error_count, retry_after))
    store.record_failure(row.id, message, iso(now), next_attempt)
    report.ok = False
    report.error = message
    report.next_attempt = next_attempt
    return report


def due_for_refresh(
    store: Store, now: str, *, force: bool = False, kinds: list[str] | None = None
) -> list[SourceRow]:
    """The sources a refresh reads now: due ones (all with ``force``) that can be fetched.

    Disabled sources, replays of files and the stubs row (read by
    :func:`resolve_stubs`) are left out.
    """
    rows = store.list_sources() if force else store.due_sources(now, kinds)
    return [
        r
        for r in rows
        if r.enabled
        and (kinds is None or r.kind in kinds)
        and not r.address.startswith(REPLAY_PREFIXES)
        and (r.kind, r.address) != STUBS
    ]


def refresh_one(
    store: Store,
    row: SourceRow,
    client: HttpClient,
    settings: Settings,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> RunReport:
    """One source as a refresh reads it: its pages, then its unresolved references online."""
    report = refresh_source(store, row, client, settings, clock=clock)
    if settings.resolve_online and report.unresolved:
        lookup_titles_online(store, settings, client, row, report, clock=clock)
    return report


def refresh(
    store: Store,
    settings: Settings,
    *,
    client: HttpClient | None = None,
    force: bool = False,
    kinds: list[str] | None = None,
    clock: Callable[[], datetime] = utc_now,
    on_start: Callable[[SourceRow], None] | None = None,
    on_done: Callable[[RunReport], None] | None = None,
) -> list[RunReport]:
    """Refresh every due source (all of them with ``force``), one after another."""
    rows = due_for_refresh(store, iso(clock()), force=force, kinds=kinds)
    reports = []
    own_client = client is None
    http = client or HttpClient(settings)
    try:
        for row in rows:
            if on_start:
                on_start(row)
            report = refresh_one(store, row, http, settings, clock=clock)
            reports.append(report)
            if on_done:
                on_done(report)
        if settings.resolve_online and (kinds is None or "arxiv-api" in kinds):
            reports += resolve_stubs(store, settings, http, force=force, clock=clock)
    finally:
        if own_client:
            http.close()
    reattribute(store, reports)
    return reports


def embed_new(store: Store, settings: Settings) -> EmbedReport | str:
    """Embed the papers new or changed since the last run; or why it cannot here.

    Without the semantic extra (or with ``semantic = off``) nothing happens and
    the reason is returned: search then stays lexical and says so.
    """
    reason = semantic_unavailable(settings)
    if reason:
        return reason
    try:
        return embed_papers(store, settings)
    except SemanticUnavailable as error:
        return str(error)


def resolve_stubs(
    store: Store,
    settings: Settings,
    client: HttpClient,
    *,
    force: bool = False,
    clock: Callable[[], datetime] = utc_now,
    batch: int = STUB_BATCH,
) -> list[RunReport]:
    """Fetch the metadata of papers known only because something mentioned their id.

    Politely, in batches by id list through the arXiv API (``batch`` ids a
    request, the shared client keeping arXiv's interval between requests);
    offline (or when arXiv fails) the error is recorded on the stubs row and
    they wait for the next run after its backoff. After a run that went well,
    the next run fetches the stubs made since (a post naming a paper the
    library lacks makes one at once) without waiting a refresh period; stubs
    arXiv did not answer for are asked again once the period is over (at most
    ``STUB_TRIES`` times). Papers that network posts named before posts made
    stubs are made stubs first.
    """
    now = iso(clock())
    row, _ = store.add_source(*STUBS, now=now, title="Papers mentioned before their metadata")
    held = not force and bool(row.next_attempt) and (row.next_attempt or "") > now
    if held and row.error_count:
        return []
    store.add_network_stubs(now)
    ids = store.stub_ids(STUB_LIMIT, max_lookups=1 if held else STUB_TRIES)
    reports = []
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        source = ArxivApiSource("id:" + ",".join(chunk), settings=settings)
        report = refresh_source(
            store, store.get_source(row.id), client, settings, source=source, clock=clock
        )
        reports.append(report)
        if not report.ok:
            break
        store.count_lookups(chunk)
    return reports


def lookup_titles_online(
    store: Store,
    settings: Settings,
    client: HttpClient,
    row: SourceRow,
    report: RunReport,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> int:
    """Ask arXiv for papers cited as "Surname: short title" that are not stored yet.

    See :func:`fetch_cited_papers`; the items are then linked again and those
    that gained a link are saved. Failures become warnings: the references
    are tried again on a later refresh.
    """
    linked = {id(item): {m.arxiv_id for m in item.mentions} for item in report.unresolved}
    report.saved.warnings += fetch_cited_papers(store, settings, client, report.unresolved, clock)
    link_titles(report.unresolved, store, bar=settings.link_bar)
    found = 0
    for item in report.unresolved:
        if {m.arxiv_id for m in item.mentions} - linked[id(item)]:
            found += 1
            report.saved.add(store.save_items(row.id, [item], iso(clock())))
    return found


def _reference_query(reference: Reference) -> str | None:
    """An arXiv query for one reference: its surname and its title's longer words."""
    words = re.findall(r"[A-Za-z0-9]{3,}", reference.title)[:6]
    parts = reference.surname.split()
    surname = re.sub(r"[^A-Za-z-]", "", parts[-1]) if parts else ""
    if len(words) < 2 or not surname:
        return None
    return "(" + " AND ".join([f"au:{surname}", *(f"ti:{w}" for w in words)]) + ")"


def fetch_cited_papers(
    store: Store,
    settings: Settings,
    client: HttpClient,
    items: list[Item],
    clock: Callable[[], datetime] = utc_now,
) -> list[str]:
    """Store from arXiv the papers that items' unmatched references may name; warnings back.

    References are asked for in batches of ``TITLE_LOOKUP_BATCH`` (one API
    query joining them with OR), through the shared polite client, at most
    ``MAX_TITLE_LOOKUPS`` references per call.
    """
    queries: list[str] = []
    for item in items:
        for reference in item.references:
            query = _reference_query(reference)
            if query and query not in queries and len(queries) < MAX_TITLE_LOOKUPS:
                queries.append(query)
    warnings: list[str] = []
    for start in range(0, len(queries), TITLE_LOOKUP_BATCH):
        chunk = queries[start : start + TITLE_LOOKUP_BATCH]
        source = ArxivApiSource(" OR ".join(chunk), {}, settings)
        request = source.first_request(SourceState())
        request.params["max_results"] = 10 * len(chunk)
        try:
            response = client.get(request.url, params=request.params)
            batch = source.read(response.body, SourceState())
        except (FetchError, ParseError) as error:
            warnings.append(f"title lookup for {len(chunk)} references: {error}")
            break
        attribute_new(store, store.save_papers(batch.papers, iso(clock())).name_keys)
    return warnings


@dataclass(frozen=True, slots=True)
class Resolved:
    """What ``resolve`` found on a page: how it was read, the papers it names, what went wrong."""

    kind: str
    mentions: tuple[Mention, ...]
    warnings: tuple[str, ...] = ()


def sniff_kind(body: bytes) -> str:
    """The source that reads these bytes: bluesky, feed, arxiv-api, notes, or plain text."""
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"{", b"[")):
        if b"jsonfeed.org" in head:
            return "feed"
        return "bluesky"
    if head.startswith((b"<?xml", b"<rss", b"<feed", b"<rdf")):
        return "arxiv-api" if b"arxiv.org/schemas/atom" in body[:8192].lower() else "feed"
    if re.search(rb"<h[1-4][\s>]|^#{1,4}\s+\S", body[:200_000], re.I | re.M):
        return "notes"
    return "text"


def resolve_bytes(
    store: Store,
    body: bytes,
    settings: Settings,
    *,
    kind: str | None = None,
    address: str = "",
    client: HttpClient | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> Resolved:
    """The papers a page names, found as ingesting it would find them, without storing it.

    The page is parsed by the source that reads its format (``kind``, or
    sniffed) and its items go through the same linker as ingestion; plain
    text is one note. With a ``client``, papers cited as "Surname: short
    title" that the library lacks are fetched from arXiv first (and stored,
    as a refresh would).
    """
    from lightnews.link import link_item, merge_mentions
    from lightnews.normalize.text import html_to_text

    kind = kind or sniff_kind(body)
    warnings: list[str] = []
    if kind == "text":
        text = body.decode("utf-8", errors="replace")
        if re.search(r"<(?:p|div|br|a|span)\b", text[:20000], re.I):
            text = html_to_text(text)
        item = Item(key=address or "text", kind="note", text=text, url=address or None)
        item.mentions = link_item(item)
        items = [item]
    else:
        source = get_source_class(kind)(address or "resolve:", {}, settings)
        batch = source.read(body, SourceState(), url=address or None)
        items = batch.items
        warnings += batch.warnings
    link_titles(items, store, bar=settings.link_bar)
    if client is not None:
        unresolved = [
            i
            for i in items
            if i.references and len(i.mentions) < len(i.references)
        ][:MAX_TITLE_LOOKUPS]
        if unresolved:
            warnings += fetch_cited_papers(store, settings, client, unresolved, clock)
            link_titles(unresolved, store, bar=settings.link_bar)
    mentions = merge_mentions(*(i.mentions for i in items))
    return Resolved(kind, tuple(sorted(mentions, key=lambda m: -m.confidence)), tuple(warnings))


def resolve_input(
    store: Store, body: bytes, settings: Settings, *, kind: str | None = None, fetch: bool = True
) -> Resolved:
    """The papers a text, a page or an address names (``lightnews resolve``).

    An address alone is fetched (unless ``fetch`` is off) and its page read as
    :func:`resolve_bytes` reads one; with ``fetch`` and the resolve_online
    setting, papers it cites that the library lacks are looked up on arXiv.
    """
    online = fetch and bool(settings.resolve_online)
    stripped = body.strip()
    address = ""
    with HttpClient(settings) as client:
        if fetch and stripped.startswith((b"http://", b"https://")) and b" " not in stripped:
            address = stripped.decode("utf-8", errors="replace")
            body, kind = client.get(address).body, None
        return resolve_bytes(store, body, settings, kind=kind, address=address,
                             client=client if online else None)  # fmt: skip


def reattribute(store: Store, reports: list[RunReport]) -> None:
    """New or changed papers may be by followed scholars: attribute those scholars again.

    Only the scholars whose surname is among the new or changed papers' authors
    (:attr:`~lightnews.store.SaveResult.name_keys`) are recomputed.
    """
    name_keys = {key for r in reports for key in r.saved.name_keys}
    if name_keys:
        attribute_new(store, name_keys)


def ingest_bytes(
    store: Store,
    kind: str,
    address: str,
    body: bytes,
    settings: Settings,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> RunReport:
    """Parse and store a saved response as if ``kind`` had fetched it from ``address``.

    The replay gets a source row of its own (``address`` is usually a
    ``file://`` URL). A replay that fails leaves no new row behind: a file that could
    not be read is not a source every reader would see failing; a row that was there
    before (the file read once already) gets the error, like any other source.
    """
    source_class = get_source_class(kind)
    now = iso(clock())
    row, created = store.add_source(kind, address, now=now)
    report = RunReport(row.id, kind, address, pages=1)
    store.record_attempt(row.id, now)
    try:
        source = source_class(address, row.params, settings)
        batch = source.read(body, SourceState(), url=address)
        batch.state = None  # a replay does not move the source's cursor
        _store_page(store, row, batch, report, now, settings)
    except Unavailable:
        raise
    except BACKEND_ERRORS as error:
        raise unavailable(error) from error
    except LightnewsError as error:
        return _replay_failed(store, row, created, report, str(error), settings, clock())
    except Exception as error:
        message = f"internal error while reading this file: {type(error).__name__}: {error}"
        return _replay_failed(store, row, created, report, message, settings, clock())
    reattribute(store, [report])
    return _succeed(store, row, report, settings, clock())


def _replay_failed(store: Store, row: SourceRow, created: bool, report: RunReport,
                   message: str, settings: Settings, now: datetime) -> RunReport:  # fmt: skip
    """A replay that failed: its new row goes again, an old one records the error."""
    if not created:
        return _fail(store, row, report, message, settings, now, None)
    store.remove_source(row.id)
    report.ok = False
    report.error = message
    return report


def ingest_file(
    store: Store,
    kind: str,
    path: Path,
    settings: Settings,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> RunReport:
    """Replay a saved response from ``path`` (see :func:`ingest_bytes`)."""
    body = path.read_bytes()
    return ingest_bytes(store, kind, path.resolve().as_uri(), body, settings, clock=clock)
