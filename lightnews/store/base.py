"""The store interface: every read and write the rest of Lightnews makes.

:class:`Store` is a :class:`typing.Protocol`: the ranker, the pages, search,
linking, the pipeline and the CLI are typed against it, never against a
backend, and its reads return the frozen dataclasses of
:mod:`lightnews.store.views` (no rows, no ``dict[str, Any]``). Both backends
(:class:`~lightnews.store.sqlite.SQLiteStore` and
:class:`~lightnews.store.postgres.PostgresStore`) implement every method, the
shared ones once in :class:`~lightnews.store.common.CommonStore`; rules that
are not about storage (how two records of a paper merge, how a story is
assembled, what a source kind means) live outside the backends.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from lightnews.model import (
    Account,
    Batch,
    Item,
    Mention,
    NetworkPost,
    Paper,
    QueryTerm,
    SearchFilters,
    SourceState,
)
from lightnews.store.digests import DigestDelivery
from lightnews.store.feedback import LearningSignals, StoredModel
from lightnews.store.merge import PreparedPaper
from lightnews.store.network import (
    ConversationPost,
    Delivery,
    LinkCard,
    ListenCursor,
    PushTarget,
    Spoken,
    WatchEvent,
)
from lightnews.store.readers import (
    AuditEntry,
    GroupSave,
    ReaderId,
    SignInLimits,
    TokenView,
    UserView,
)
from lightnews.store.relink import Retitled
from lightnews.store.suggest import NetworkShare, PaperAuthor, SocialIdentity
from lightnews.store.views import (
    AccountView,
    AuthorshipCandidate,
    CardPaper,
    CodeLink,
    FeedCandidate,
    ItemMatch,
    ItemView,
    Mutes,
    PaperAuthorship,
    PaperChange,
    PaperHit,
    PaperPage,
    PaperSummary,
    SaidItem,
    SaveResult,
    ScholarPaper,
    ScholarRef,
    ScholarSummary,
    ScholarView,
    SourceRef,
    SourceRow,
    TitleCandidate,
)

__all__ = ["Store"]

_T = TypeVar("_T")


class Store(Protocol):
    """Everything Lightnews keeps: sources, papers, items, scholars, vectors, user state."""

    #: Where the library lives (a vector index is kept beside it).
    path: Path
    #: Seconds a write waits for another writer before giving up with ``Busy``.
    write_wait: float
    #: Seconds a thread waits for a connection (PostgreSQL's pool) before ``Unavailable``:
    #: during an outage the web answers 503 this soon instead of after ``write_wait``.
    connection_wait: float
    #: Whether :meth:`nearest_vectors` runs in the database (else a FAISS index beside it).
    vectors_indexed: bool

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction; nested use joins the outer one."""
        ...

    def write(self, body: Callable[[], _T]) -> _T:
        """``body()`` in one write transaction, run again from the start when the server
        gave it up to break a deadlock (PostgreSQL's writers commit side by side); inside
        an open transaction it joins it. ``body`` must be safe to run twice: it writes
        only through the store and returns what it counted."""
        ...

    def writers_waiting(self) -> bool:
        """Whether another writer waits for a lock this thread's write transaction holds.

        A long writer (a bulk import) asks between its chunks and commits early,
        so that a click on the web or a short command waits for one chunk, not
        for a whole transaction.
        """
        ...

    def workers_heard(self, within: float) -> int:
        """How many queue workers (``lightnews worker``) were heard from in the last
        ``within`` seconds: none on SQLite, whose sources only a ``refresh`` fetches."""
        ...

    def bulk_import(
        self, expected: int, connections: int = 1
    ) -> AbstractContextManager[SaveResult]:
        """A bulk import of about ``expected`` papers runs in this block (the backend may
        set its indexes aside and rebuild them once at the end, and insert new papers
        over up to ``connections`` connections at once). What it yields is filled, by
        the block's end, with what the backend saved on its own beside the block's
        :meth:`save_prepared` calls (to be added to their counts)."""
        ...

    def repeated_reads(self) -> AbstractContextManager[None]:
        """The reads in this block are the same statements on every call, with other
        values (a feed's, on every request): the backend may keep them prepared, planned
        once per connection, instead of parsing and planning each anew."""
        ...

    def time_budget(self, seconds: float, what: str = "this query") -> AbstractContextManager[None]:
        """Reads in this block stop after ``seconds`` of work with ``TooExpensive``.

        Work is counted on :meth:`budget_clock`: a busy machine's wait for a
        CPU is not the query's cost where the backend can tell them apart.
        """
        ...

    def budget_clock(self) -> float:
        """Seconds of work this thread has done inside :meth:`time_budget` blocks, on the
        clock they count on, for a caller's own sums (a search's stages share one budget);
        what the caller does between the blocks (encoding a query) is not charged."""
        ...

    # -- library -------------------------------------------------------------------------

    def close(self) -> None: ...

    @property
    def schema_version(self) -> int: ...

    def migrate(self) -> list[str]:
        """Apply every migration newer than the database, each in its own transaction."""
        ...

    def saved_settings(self) -> dict[str, str]: ...

    def save_setting(self, name: str, value: str | None) -> None: ...

    def keep_setting(self, name: str, value: str) -> str:
        """The saved value of a setting, saving ``value`` first when there is none (of
        writers saving at once, the first one's stays)."""
        ...

    def add_source(
        self,
        kind: str,
        address: str,
        *,
        now: str,
        title: str | None = None,
        folder: str | None = None,
        params: dict[str, Any] | None = None,
        scholar_id: int | None = None,
    ) -> tuple[SourceRow, bool]:
        """Add a source; returns it and whether it is new (adding twice is harmless)."""
        ...

    def find_source(self, kind: str, address: str) -> SourceRow | None: ...

    def get_source(self, source_id: int) -> SourceRow: ...

    def list_sources(self) -> list[SourceRow]: ...

    def due_sources(self, now: str, kinds: Iterable[str] | None = None) -> list[SourceRow]:
        """Enabled sources whose next attempt has come (or that never ran)."""
        ...

    def remove_source(self, source_id: int) -> SourceRow:
        """Remove a source and its items; the papers they recorded or mentioned stay."""
        ...

    def set_source_enabled(self, source_id: int, enabled: bool) -> None: ...

    def set_source_title(self, source_id: int, title: str) -> None: ...

    def save_state(self, source_id: int, state: SourceState) -> None: ...

    def record_attempt(self, source_id: int, now: str) -> None: ...

    def record_success(
        self, source_id: int, now: str, next_attempt: str, *, clean: bool = True
    ) -> None:
        """A run that stored what it read; ``clean`` clears the error state."""
        ...

    def record_failure(self, source_id: int, message: str, now: str, next_attempt: str) -> None: ...

    def save_papers(self, papers: Sequence[Paper], now: str) -> SaveResult:
        """Insert or merge papers (and their authorships) in the current transaction."""
        ...

    def save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        """:meth:`save_papers` for papers already through :func:`prepare_paper`."""
        ...

    def save_batch(self, source_id: int, batch: Batch, now: str) -> SaveResult:
        """Store everything one parsed response carried, in one transaction."""
        ...

    def save_items(
        self, source_id: int, items: Sequence[Item], now: str, *, well_formed: bool = True
    ) -> SaveResult:
        """Insert new items, rewrite changed ones, leave identical ones untouched.

        A stored item is kept instead of a worse fresh copy (one cut short, or
        any copy when ``well_formed`` is False): :mod:`lightnews.store.downgrade`.
        """
        ...

    def counts(self) -> dict[str, int]: ...

    def get_paper(self, arxiv_id: str) -> PaperPage:
        """A paper with its authors, versions, links, records and mentions."""
        ...

    def search_papers(
        self,
        terms: Sequence[QueryTerm],
        limit: int,
        offset: int = 0,
        filters: SearchFilters | None = None,
    ) -> list[PaperHit]:
        """Papers matching all terms, best first: title weighted over authors over abstract."""
        ...

    def search_items(
        self, terms: Sequence[QueryTerm], limit: int, filters: SearchFilters | None = None
    ) -> list[ItemMatch]:
        """Posts, articles and notes matching all terms, best first: title over text
        (dates, scholar and source kind narrow them; a subject does not apply)."""
        ...

    def said_items(self, item_ids: Sequence[int]) -> dict[int, SaidItem]:
        """The posts, articles and notes ``item_ids`` as search results show them."""
        ...

    def related_candidates(self, words: Sequence[str], exclude: str, limit: int) -> list[PaperHit]:
        """Papers sharing the most of ``words`` (an OR query), best first, without ``exclude``."""
        ...

    def title_candidates(
        self, words: Sequence[str], limit: int, surname: str | None = None
    ) -> list[TitleCandidate]:
        """Papers whose titles share the most telling of ``words`` (an OR query on titles)."""
        ...

    def title_doc_freq(self, stem: str) -> int:
        """How many papers use this (Porter-stemmed) word anywhere (title, authors, abstract)."""
        ...

    def papers_by_doi(self, dois: Sequence[str]) -> dict[str, str]:
        """arXiv ids of stored papers by DOI (a paper's DOI field may list several)."""
        ...

    def stub_ids(self, limit: int, max_lookups: int = 5) -> list[str]:
        """Papers known only by their id, least asked for first."""
        ...

    def count_lookups(self, arxiv_ids: Sequence[str]) -> None: ...

    def paper_count(self) -> int:
        """About how many papers the library has, instantly (for word weights and display)."""
        ...

    def word_doc_freq(self, word: str, cap: int) -> int:
        """How many papers use ``word`` (as the index stems it); counting stops at ``cap``."""
        ...

    def recent_papers(self, limit: int, before: str | None = None) -> list[PaperSummary]: ...

    def category_papers(
        self, categories: Sequence[str], since: str, limit: int
    ) -> list[tuple[int, str, str]]:
        """Papers of these primary categories published since ``since``, newest first,
        as ``(row id, arXiv id, published)``."""
        ...

    def items_by_accounts(
        self, accounts: Sequence[str], since: str, limit: int
    ) -> list[FeedCandidate]:
        """Items by these social accounts since ``since``, newest first."""
        ...

    def most_discussed(self, since_us: int, limit: int) -> list[str]:
        """arXiv papers the most accounts posted about on the network since ``since_us``."""
        ...

    def discussed_by(self, dids: Sequence[str], since_us: int, limit: int) -> list[str]:
        """arXiv papers these accounts posted about on the network since ``since_us``."""
        ...

    def items_about(self, arxiv_ids: Sequence[str], limit: int) -> list[FeedCandidate]:
        """Items that record or mention these papers, newest first."""
        ...

    def followed_papers(self, reader: ReaderId, since: str, bar: float, limit: int) -> list[str]:
        """Papers since ``since`` attributed (at ``bar`` or more) to scholars the reader
        follows, newest first."""
        ...

    def recent_items(self, limit: int) -> list[FeedCandidate]:
        """Newest items with the papers they record or mention."""
        ...

    def feed_version(self, papers: int, items: int) -> tuple[Any, ...]:
        """Changes when the feed's window of the newest ``papers`` and ``items`` may have
        (cheap to ask): a paper or item stored or changed, a paper's text revised."""
        ...

    def get_item(self, item_id: int) -> ItemView:
        """One item (an article, a note, a post) with the papers it names."""
        ...

    def source_items(self, source_id: int, kind: str) -> list[ItemView]:
        """A source's items of one kind in the order the source gave them."""
        ...

    def daily_days(self) -> list[str]: ...

    def daily_items(self, day: str) -> list[ItemView]:
        """Daily-papers entries featured on ``day``, most upvoted first."""
        ...

    def scholar_names(self, scholar_ids: Iterable[int]) -> dict[int, str]: ...

    def source_addresses(self, kinds: Sequence[str]) -> list[str]:
        """Addresses of the enabled sources of these kinds."""
        ...

    def papers_by_ids(self, arxiv_ids: Sequence[str]) -> dict[str, PaperSummary]: ...

    def card_papers(self, arxiv_ids: Sequence[str]) -> dict[str, CardPaper]:
        """What feed cards show of these stored papers (stubs too), in a fixed few queries."""
        ...

    def item_texts(self, item_ids: Sequence[int]) -> dict[int, str]:
        """The texts of these items (an empty text for an item without one)."""
        ...

    def code_links(self, arxiv_ids: Sequence[str]) -> dict[str, list[CodeLink]]:
        """The code links of these papers with when each first appeared, earliest first."""
        ...

    def recent_changes(self, limit: int) -> list[PaperChange]:
        """Papers whose newest stored version changed their text, newest change first."""
        ...

    # -- people --------------------------------------------------------------------------

    def create_scholar(self, name: str, now: str) -> int: ...

    def rename_scholar(self, scholar_id: int, name: str) -> None: ...

    def add_identity(self, scholar_id: int, kind: str, value: str) -> int:
        """Tie an identity to a scholar; returns the scholar that owns it (maybe another)."""
        ...

    def identities(self, scholar_id: int) -> list[tuple[str, str]]: ...

    def identities_of_kind(self, kind: str) -> list[tuple[int, str]]:
        """``(scholar id, value)`` of every identity of ``kind`` (one query, all scholars)."""
        ...

    def scholar_by_identity(self, kind: str, value: str) -> int | None: ...

    def scholar_for(self, kind: str, value: str, name: str, now: str) -> int:
        """The scholar who holds an identity, or a new one named ``name`` holding it (made
        once, however many writers ask at once)."""
        ...

    def namesakes(self, scholar_id: int) -> list[tuple[int, str]]:
        """Other scholars known by this one's name (one person known twice), oldest first."""
        ...

    def get_scholar(self, scholar_id: int) -> ScholarView: ...

    def find_scholar(self, query: str) -> int:
        """A scholar by id, handle (with or without @), DID, ORCID, arXiv name or name,
        or by part of a name or handle; several matches raise ``Ambiguous`` with them."""
        ...

    def list_scholars(self, bar: float = 0.0) -> list[ScholarSummary]: ...

    def merge_scholars(self, keep: int, drop: int) -> None:
        """One person known twice: everything of ``drop`` moves to ``keep``."""
        ...

    def split_scholar(
        self, scholar_id: int, identities: Sequence[tuple[str, str]], name: str, now: str
    ) -> int:
        """Two people known as one: move ``identities`` (and their sources) to a new scholar."""
        ...

    def save_accounts(self, accounts: Iterable[Account], now: str) -> int:
        """Insert or refresh accounts (profile counts change); returns how many were saved."""
        ...

    def get_account(self, service: str, key: str) -> AccountView | None:
        """An account by its id or its handle."""
        ...

    def mark_bot(self, service: str, account_id: str, reason: str | None) -> None: ...

    def account_items(
        self, account_ids: Sequence[str], limit: int = 200, offset: int = 0
    ) -> list[Item]:
        """Posts and reposts by these accounts (or reposted by them), newest first."""
        ...

    def authorship_candidates(self, name_keys: Sequence[str]) -> list[AuthorshipCandidate]:
        """Authorships whose folded surname is one of ``name_keys``, with paper context."""
        ...

    def paper_authorships(self, arxiv_id: str) -> list[PaperAuthorship]: ...

    def set_attributions(self, scholar_id: int, rows: Sequence[tuple[int, int, float]]) -> None:
        """Replace the scholar's attributions with ``(paper_id, position, confidence)`` rows."""
        ...

    def set_decision(
        self, scholar_id: int, arxiv_id: str, decision: str | None, now: str, by: str | None = None
    ) -> None:
        """A shared decision on whether the paper is the scholar's (``by``: who made it)."""
        ...

    def decisions(self, scholar_id: int) -> dict[str, str]: ...

    def deciders(self, scholar_id: int) -> dict[str, str]:
        """Who made each decision on the scholar's papers that says so (arXiv id → name)."""
        ...

    def scholar_papers(
        self, scholar_id: int, bar: float, limit: int, offset: int = 0
    ) -> tuple[int, list[ScholarPaper]]:
        """Attributed records above ``bar``, newest first, and how many there are in all."""
        ...

    def scholar_sources(self, scholar_id: int) -> list[SourceRef]: ...

    # -- readers (store/readers.py): accounts, tokens, and each reader's own state ----------

    def user_count(self) -> int: ...

    def add_user(self, name: str, password_hash: str, *, admin: bool, now: str) -> UserView:
        """Add an account; the first one is an admin and takes over the local reader's state."""
        ...

    def get_user(self, name: str) -> UserView: ...

    def user_by_id(self, user_id: int) -> UserView | None: ...

    def list_users(self) -> list[UserView]: ...

    def password_hash(self, name: str) -> tuple[UserView, str] | None: ...

    def set_password(self, user_id: int, password_hash: str) -> None:
        """A new password; every session of the account ends."""
        ...

    def set_admin(self, user_id: int, admin: bool) -> None: ...

    def end_sessions(self, user_id: int) -> None:
        """Sign out everywhere: every session of the account stops working."""
        ...

    def create_session(self, user_id: int, id_hash: str, now: str, expires: str) -> None:
        """A new server-side session (by the digest of the cookie's secret)."""
        ...

    def session_user(self, user_id: int, epoch: int, id_hash: str, now: str) -> UserView | None:
        """The account a live session of that very account opens, else None."""
        ...

    def end_session(self, id_hash: str) -> None:
        """Sign out: one session ends on the server."""
        ...

    def remove_user(self, user_id: int) -> None: ...

    def set_sharing(self, reader: ReaderId, shares: bool) -> None: ...

    def create_token(self, user_id: int, name: str, token_hash: str, now: str) -> TokenView: ...

    def list_tokens(self, user_id: int) -> list[TokenView]: ...

    def revoke_token(self, user_id: int, token_id: int, now: str) -> None: ...

    def token_user(self, token_hash: str, now: str) -> UserView | None:
        """The account a token (by its digest) acts for; None if unknown or revoked."""
        ...

    def set_feed_key(self, reader: ReaderId, key_hash: str, now: str) -> None: ...

    def feed_key_reader(self, key_hash: str) -> ReaderId | None: ...

    def audit(self, actor: str, action: str, target: str, now: str) -> None: ...

    def audit_log(self, limit: int = 200) -> list[AuditEntry]: ...

    def record_sign_in_failure(self, account: str, address: str, now: str) -> None: ...

    def sign_in_failures(self, account: str, address: str, since: str) -> tuple[int, int]: ...

    def claim_sign_in(
        self, account: str, address: str, now: str, since: str, limits: SignInLimits
    ) -> int | None:
        """One password try, counted before it is checked; None when a limit is reached."""
        ...

    def forgive_sign_in(self, claim: int, account: str, address: str) -> None: ...

    def clear_sign_in_failures(self, account: str, before: str) -> None: ...

    def set_followed(self, reader: ReaderId, scholar_id: int, followed: bool, now: str) -> None: ...

    def follows(self, reader: ReaderId) -> frozenset[int]: ...

    def followed_accounts(self, reader: ReaderId) -> dict[str, int]:
        """Scholars the reader follows, by the id of each social account (``<service>-did``)."""
        ...

    def any_followed_accounts(self) -> dict[str, int]:
        """Scholars some reader follows, by social account id (whom the instance listens for)."""
        ...

    def followed_scholars(self, reader: ReaderId) -> list[ScholarRef]:
        """Every scholar the reader follows, by name (the feed's header)."""
        ...

    def followed_authorships(
        self, reader: ReaderId, arxiv_ids: Sequence[str], bar: float
    ) -> dict[str, list[str]]:
        """Names of scholars the reader follows each paper is attributed to (at ``bar`` or more)."""
        ...

    def set_mute(
        self, reader: ReaderId, kind: str, value: str, now: str, muted: bool = True
    ) -> None: ...

    def mutes(self, reader: ReaderId) -> Mutes: ...

    def mark_story(
        self,
        reader: ReaderId,
        key: str,
        now: str,
        *,
        read: bool | None = None,
        saved: bool | None = None,
    ) -> None:
        """Mark a story read or unread, saved or not (unchanged when None)."""
        ...

    def story_states(self, reader: ReaderId) -> dict[str, tuple[str | None, str | None]]: ...

    def reader_settings(self, reader: ReaderId) -> dict[str, str]: ...

    def save_reader_setting(self, reader: ReaderId, name: str, value: str | None) -> None: ...

    def group_saves(self, at_least: int = 2, limit: int = 100) -> list[GroupSave]:
        """Stories saved by ``at_least`` members who share, most members first."""
        ...

    def interest_version(self, reader: ReaderId) -> tuple[Any, ...]:
        """Changes whenever the papers the reader cares about may have (cheap to ask):
        ``(library, own)``, the part any writer changes and the reader's own."""
        ...

    def interest_vectors(
        self, reader: ReaderId, model: str, bar: float, limit: int = 2000
    ) -> list[tuple[int, int | None, bytes]]:
        """``(paper id, scholar id, vector)`` of the papers that say what the reader cares about."""
        ...

    # -- links by title re-made after a title change (lightnews.store.relink) ------------

    def retitled_papers(self, limit: int) -> list[Retitled]:
        """Papers waiting for their links by title to be checked, in id order."""
        ...

    def title_linked_items(self, paper_ids: Sequence[int]) -> list[tuple[int, Item]]:
        """``(item id, item)`` of every item linked to one of ``paper_ids`` by title."""
        ...

    def items_to_relink(self, item_ids: Sequence[int]) -> list[tuple[int, Item]]:
        """Stored items as the linker reads them, with the mentions they hold now."""
        ...

    def replace_title_links(self, item_id: int, mentions: Sequence[Mention]) -> tuple[int, int]:
        """Replace an item's links by title (and DOI) with ``mentions``: (removed, added)."""
        ...

    def relinked(self, paper_ids: Sequence[int]) -> None:
        """Take papers off the relink queue."""
        ...

    # -- vectors -------------------------------------------------------------------------

    def unembedded_papers(self, limit: int) -> list[tuple[int, str, str]]:
        """``(paper id, title, abstract)`` of queued papers (new or changed), in id order."""
        ...

    def count_unembedded(self, cap: int | None = None) -> int:
        """Papers waiting for a vector (counting stops past ``cap``: a search asks often)."""
        ...

    def requeue_all_papers(self) -> None:
        """Queue every paper again (the library switched encoders)."""
        ...

    def save_vectors(self, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
        """Store ``(paper id, vector bytes)`` pairs and take them off the queue."""
        ...

    def vectors_after(
        self, model: str, after: int, chunk: int = 50_000
    ) -> Iterator[list[tuple[int, int, bytes]]]:
        """``(row id, paper id, vector)`` written after row ``after``, in chunks, in order."""
        ...

    def ensure_vector_index(self, model: str, dim: int, memory_mb: int | None = None) -> bool:
        """The database's index over ``model``'s vectors, built if missing (with at most
        ``memory_mb`` MB); whether it was built. Only where :attr:`vectors_indexed`."""
        ...

    def vectors_in_bulk(
        self, model: str, dim: int, expected: int, memory_mb: int | None = None
    ) -> AbstractContextManager[None]:
        """About ``expected`` vectors of ``model`` are saved in this block (the backend may
        set its vector index aside and build it once at the end)."""
        ...

    def last_vector_row(self) -> int:
        """The newest vector row id: an index that has seen it is up to date."""
        ...

    def has_vectors(self, model: str) -> bool: ...

    def vector_count(self, model: str) -> int: ...

    def vector_versions(self, arxiv_id: str) -> dict[str, int | None]:
        """The paper version each encoder's vector of the paper was made from."""
        ...

    def paper_vector(self, arxiv_id: str, model: str) -> tuple[int, bytes] | None:
        """The paper's row id and vector from ``model``, if it has one."""
        ...

    def vectors_by_arxiv_id(
        self, arxiv_ids: Sequence[str], model: str
    ) -> dict[str, tuple[int, bytes]]:
        """``arxiv id -> (paper id, vector)`` for those of the papers that have one."""
        ...

    def vectors_of(self, paper_ids: Sequence[int], model: str) -> list[tuple[int, bytes]]: ...

    def other_models(self, model: str) -> bool:
        """True when some vector comes from another encoder than ``model``."""
        ...

    def drop_vectors(self, keep_model: str) -> int:
        """Forget vectors of every other encoder (after the library switched encoders)."""
        ...

    def papers_by_rowids(
        self,
        paper_ids: Sequence[int],
        filters: SearchFilters | None = None,
        excluded: Sequence[QueryTerm] = (),
    ) -> dict[int, PaperHit]:
        """Search hits of these papers that pass ``filters``, by paper id."""
        ...

    def nearest_vectors(
        self,
        model: str,
        vector: bytes,
        k: int,
        *,
        filters: SearchFilters | None = None,
        excluded: Sequence[QueryTerm] = (),
        among: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` papers nearest ``vector`` (cosine), nearest first, by the database's
        own index; those passing ``filters``, without ``excluded`` words, or exactly
        among ``among``. Only where :attr:`vectors_indexed`."""
        ...

    def filtered_paper_ids(self, filters: SearchFilters, cap: int) -> list[int] | None:
        """Ids of the papers ``filters`` allow, or None when more than ``cap`` do."""
        ...

    # -- scheduled digests (each delivered once) ------------------------------------------

    def claim_digest(
        self, recipient: str, period: str, now: str, stale_before: str, by: str
    ) -> bool:
        """Take on a digest; False when delivered, or another worker is sending it."""
        ...

    def digest_delivered(self, recipient: str, period: str, now: str, stories: int) -> None:
        """The SMTP server accepted the digest."""
        ...

    def release_digest(self, recipient: str, period: str) -> None:
        """Give up a claim (not accepted): the next look tries again."""
        ...

    def digest_deliveries(self, recipient: str) -> list[DigestDelivery]: ...

    # -- texts (the word index of related papers) ----------------------------------------

    def paper_texts_after(self, after: int, limit: int) -> list[tuple[int, str, str]]:
        """``(paper id, title, abstract)`` of titled papers with a row id above ``after``."""
        ...

    def paper_texts_of(self, paper_ids: Sequence[int]) -> list[tuple[int, str, str]]:
        """``(paper id, title, abstract)`` of these papers (those still titled)."""
        ...

    def revised_papers(self, after_vector_row: int, up_to_paper: int) -> list[int]:
        """Papers up to row ``up_to_paper`` re-embedded after vector row ``after_vector_row``."""
        ...

    def text_marks(self) -> tuple[int, int]:
        """``(newest paper row id, newest vector row id)``: cheap, asked before every use."""
        ...

    def paper_row_id(self, arxiv_id: str) -> int | None:
        """The row id of a stored paper (its id in the word and vector indexes)."""
        ...

    def paper_row_ids(self, arxiv_ids: Sequence[str]) -> dict[str, int]:
        """Row ids of stored papers by arXiv id (those not stored are left out)."""
        ...

    # -- the whole conversation (lightnews.store.network) ----------------------------------

    def listen_cursor(self, name: str) -> ListenCursor | None:
        """Where the listener called ``name`` stopped (None: it never ran)."""
        ...

    def save_network(
        self,
        posts: Sequence[NetworkPost],
        deleted: Sequence[str],
        cursor: ListenCursor,
        now: str,
    ) -> int:
        """Store network posts (each URI once), forget deleted ones, move the cursor, at once."""
        ...

    def network_paper_posts(self, limit: int) -> dict[str, tuple[str, ...]]: ...

    def article_papers(self, limit: int) -> list[tuple[str, str, tuple[str, ...]]]:
        """``(url, label, papers)`` of articles and notes naming papers (second-order)."""
        ...

    def articles_about(self, arxiv_id: str, limit: int = 200) -> list[tuple[str, int, str]]:
        """``(label, item id, url)`` of articles and notes naming a paper (as labelled there)."""
        ...

    def network_authors(self, limit: int) -> list[str]: ...

    def network_posts_of(
        self, dids: Sequence[str], limit: int = 50
    ) -> dict[str, list[tuple[str, str]]]: ...

    def posted_about(self, account: str, arxiv_ids: Sequence[str]) -> dict[str, list[str]]:
        """When this account posted about each of these papers, oldest first."""
        ...

    def network_post_counts(self, dids: Sequence[str]) -> dict[str, int]: ...

    def note_accounts(self, service: str, handles: dict[str, str], now: str) -> None:
        """Make sure these accounts are known; a non-empty handle replaces the old."""
        ...

    def network_post_count(self) -> int: ...

    def spoken_since(self, service: str, since_us: int, limit: int = 200_000) -> list[Spoken]:
        """Every account speaking about a paper on the network since ``since_us``."""
        ...

    def spoken_about(self, service: str, papers: Sequence[str], since_us: int) -> list[Spoken]: ...

    def network_mentions_of(self, service: str, paper: str, limit: int = 200) -> list[Spoken]: ...

    def paper_conversation(
        self, service: str, paper: str, limit: int = 5_000
    ) -> list[ConversationPost]:
        """Every network post about one paper, newest first, with its author and what it
        answers (the story's conversation)."""
        ...

    def paper_feed_posts(
        self, service: str, kinds: Sequence[str], paper: str, limit: int = 5_000
    ) -> list[ConversationPost]:
        """The posts about one paper read from the network's feeds (sources of these
        ``kinds``), as conversation posts, newest first; a repost gives the post it
        shares and the repost."""
        ...

    def paper_cards(self, papers: Sequence[str], limit: int = 2_000) -> dict[str, LinkCard]:
        """The newest link card naming each paper among network posts about it."""
        ...

    def add_network_stubs(self, now: str, limit: int = 5_000) -> int:
        """Stubs for the arXiv papers network posts name that the library lacks."""
        ...

    def save_follows(self, follower: str, follows: Iterable[str], now: str) -> int: ...

    def forget_follow(self, follower: str, follows: str) -> None: ...

    def follows_of(self, followers: Sequence[str]) -> dict[str, set[str]]:
        """``followed DID -> {follower DIDs}`` for these followers."""
        ...

    # -- follow suggestions -----------------------------------------------------------------

    def social_identities(self) -> list[SocialIdentity]:
        """Every scholar's social accounts (DIDs and handles)."""
        ...

    def network_shares(self, dids: Sequence[str], limit: int = 5_000) -> list[NetworkShare]:
        """The newest reposts and quotes these accounts made on the network."""
        ...

    def scholars_paper_ids(
        self, scholar_ids: Sequence[int], bar: float, limit: int = 2_000
    ) -> dict[int, list[str]]: ...

    def paper_authors(self, arxiv_ids: Sequence[str], bar: float) -> list[PaperAuthor]: ...

    def accounts_matching(
        self,
        service: str,
        *,
        ids: Sequence[str] = (),
        handles: Sequence[str] = (),
        names: Sequence[str] = (),
    ) -> list[AccountView]:
        """Accounts known by one of these ids, handles or display names (caseless)."""
        ...

    # -- watches (per reader; '' is the local reader) --------------------------------------

    def set_watch(self, reader: str, arxiv_id: str, now: str, watched: bool = True) -> bool: ...

    def watched(self, reader: str | None = None) -> dict[str, set[str]]: ...

    def watches_since(self, reader: str) -> list[tuple[str, str]]:
        """A reader's watched papers with when each watch began, oldest first."""
        ...

    def set_push_target(self, target: PushTarget, now: str, present: bool = True) -> None: ...

    def push_targets(self, reader: str | None = None) -> list[PushTarget]: ...

    def record_events(self, events: Sequence[WatchEvent], now: str) -> list[WatchEvent]:
        """Keep events (each key once), queueing a delivery per watcher's target; the new ones."""
        ...

    def pending_deliveries(self, max_attempts: int = 10, limit: int = 500) -> list[Delivery]: ...

    def claim_delivery(self, delivery: Delivery) -> bool: ...

    def finish_delivery(self, delivery: Delivery, now: str, error: str | None = None) -> None: ...

    def undigested_events(self, reader: str, limit: int = 200) -> list[WatchEvent]:
        """Events of papers ``reader`` watches that no digest of theirs has told yet."""
        ...

    def mark_events_digested(self, reader: str, keys: Sequence[str], now: str) -> None:
        """Record that ``reader``'s digest told these events (once it was delivered)."""
        ...

    def undigested_posts(self, reader: str, limit: int = 5_000) -> dict[str, list[str]]:
        """For each paper ``reader`` watches, its network posts (URIs) heard since the watch
        began that no digest of theirs has told yet."""
        ...

    def mark_posts_digested(
        self, reader: str, now: str, uris: Sequence[str] = (), *, paper: str | None = None
    ) -> None:
        """Record that ``reader``'s digest told these network posts (once it was delivered),
        or every post about ``paper``."""
        ...

    def watch_events(self, arxiv_id: str | None = None, limit: int = 100) -> list[WatchEvent]: ...

    # -- the learned ranker (per reader) ------------------------------------------------------

    def set_paper_feedback(
        self, reader: int, paper_id: int, decision: str | None, now: str
    ) -> None:
        """Say "not interested" or "more like this" about a paper (None takes it back)."""
        ...

    def paper_feedback(self, reader: int) -> dict[int, str]: ...

    def set_saved_list(self, reader: int, story_key: str, name: str, filed: bool = True) -> None:
        """File a story in the reader's list ``name`` (or take it out)."""
        ...

    def saved_lists(self, reader: int) -> dict[str, list[str]]: ...

    def learning_signals(
        self, reader: int, bar: float = 0.5, limit: int = 2_000
    ) -> LearningSignals:
        """What the reader saved (with its lists), read, hid, and whom they muted."""
        ...

    def random_paper_ids(self, count: int, model: str, rng: random.Random) -> list[int]:
        """About ``count`` papers drawn at random among those with a ``model`` vector."""
        ...

    def save_reader_model(
        self, reader: int, version: str, trained_at: str, model: str | None
    ) -> None:
        """Keep the reader's newly trained model (JSON), in place of the one before,
        unless the one stored began training later (``trained_at``)."""
        ...

    def reader_model_version(self, reader: int) -> tuple[str, str] | None:
        """The stored model's version and training time (None: none stored)."""
        ...

    def reader_model(self, reader: int) -> StoredModel | None:
        """The reader's stored model (None: none was ever trained)."""
        ...
