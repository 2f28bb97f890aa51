"""One parsed page into the store: papers, links, items, accounts and the source's state.

Write transactions stay short, because every other writer of the library (a
second refresh, the web app marking a story, an import) waits for them:
parsing, linking titles (which reads the whole library's titles) and
embedding happen outside them, and only the rows are written inside (see
:func:`store_page`). Accounts a page reports are tied to scholars, and
accounts heard are classified as bots (:mod:`lightnews.link.bots`).
"""

from __future__ import annotations

from lightnews.ingest.cited import MAX_TITLE_LOOKUPS
from lightnews.ingest.follow import follow_account
from lightnews.ingest.relink import relink_retitled
from lightnews.ingest.report import RunReport
from lightnews.link import link_titles
from lightnews.link.attribution import attribute_new
from lightnews.link.bots import bot_reason
from lightnews.model import Batch
from lightnews.settings import Settings
from lightnews.sources import network
from lightnews.store import SaveResult, SourceRow, Store
from lightnews.store.readers import LOCAL_READER, ReaderId

__all__ = [
    "reattribute",
    "store_page",
]


def store_page(
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
    link_titles(batch.items, store, bar=settings.link_bar, semantic=settings.semantic)

    def write_page() -> SaveResult:  # run again whole if PostgreSQL gives it up (a deadlock)
        saved = store.save_items(row.id, batch.items, now, well_formed=batch.well_formed)
        if batch.title and not row.title:
            store.set_source_title(row.id, batch.title)
        if batch.accounts:
            store.save_accounts(batch.accounts, now)
            _link_accounts(store, row, batch, now)
        if batch.state is not None:
            store.save_state(row.id, batch.state)
        return saved

    report.saved.add(store.write(write_page))
    report.unresolved += [
        i for i in batch.items if i.references and len(i.mentions) < len(i.references)
    ][:MAX_TITLE_LOOKUPS]
    _classify_accounts(store, {i.account for i in batch.items if i.account})
    report.saved.warnings.extend(batch.warnings)
    report.saved.warnings.extend(str(problem) for problem in batch.problems)


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
    service = network().service
    for account_id in sorted(account_ids):
        account = store.get_account(service, account_id)
        if account is None:
            continue
        reason = bot_reason(account, store.account_items([account_id], limit=50))
        if bool(reason) != account.bot or reason != account.bot_reason:
            store.mark_bot(service, account_id, reason)


def reattribute(store: Store, reports: list[RunReport]) -> None:
    """New or changed papers may be by followed scholars: attribute those scholars again.

    Only the scholars whose surname is among the new or changed papers' authors
    (:attr:`~lightnews.store.SaveResult.name_keys`) are recomputed.
    """
    name_keys = {key for r in reports for key in r.saved.name_keys}
    if name_keys:
        attribute_new(store, name_keys)
