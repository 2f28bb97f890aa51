"""Store queries about readers: accounts, their tokens, and what each reader owns.

One instance serves many readers (a lab, a reading group). Papers, items,
sources and scholars are shared: one fetch serves everyone. What a reader
decides is theirs alone, keyed by a :data:`ReaderId` that every per-reader
method takes as its first argument (no default: a page or command says whose
state it reads, so one reader's state cannot slip into another's page):

- follows (``follows``; ``scholars.followed`` stays as "some reader follows
  this scholar", which tells attribution and lookups whom the instance keeps
  track of, never shown as anyone's follow),
- mutes, read and saved stories (``mutes``, ``story_state``),
- reader settings (``user_settings``: the digest address, the feed's half-life),
- a secret feed key (``feed_keys``) and API tokens (``api_tokens``).

Reader 0, :data:`LOCAL_READER`, is the built-in reader of a one-person install:
it has no account and needs no sign-in. **The first account created takes its
state over** (follows, mutes, saved and read stories, settings, feed key) and is
always an admin, so a one-person library that grows into a group's loses
nothing and has someone to manage it. Once accounts exist reader 0 has nothing.

Also here: the audit log of admin actions and failed sign-ins (kept in the
database so that a limit holds across every web process). Secrets never reach
this module: it keeps and compares hashes made by :mod:`lightnews.store.secrets`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NewType

from lightnews.errors import NotFound, UsageError
from lightnews.store.connection import Queries
from lightnews.store.views import Mutes, ScholarRef

__all__ = [
    "LOCAL_READER",
    "READER_SETTINGS",
    "AuditEntry",
    "GroupSave",
    "ReaderId",
    "ReaderQueries",
    "SignInLimits",
    "TokenView",
    "UserView",
    "reader_key",
]

#: Whose state a read or write is about: an account's id, or 0 (the local reader).
ReaderId = NewType("ReaderId", int)
#: The reader of an install without accounts.
LOCAL_READER = ReaderId(0)


def reader_key(reader: ReaderId) -> str:
    """How watches and push targets name a reader: '' for the local reader, else ``user:N``."""
    return "" if reader == LOCAL_READER else f"user:{int(reader)}"


#: Settings each reader sets for themself (the rest are the instance's).
READER_SETTINGS = ("digest_to", "half_life_hours", "horizon_half_lives")
#: Tables of per-reader state, each with a ``user_id`` column.
_READER_TABLES = (
    "follows",
    "mutes",
    "story_state",
    "user_settings",
    "feed_keys",
    "paper_feedback",
    "saved_lists",  # the learned ranker's (store/feedback.py)
)
#: Tables that name their reader by key ('' the local reader, ``user:N``): see deliver/watch.py.
_KEYED_READER_TABLES = ("watches", "push_targets", "digest_watch_events", "digest_posts")


@dataclass(frozen=True, slots=True)
class UserView:
    """An account (never its password hash)."""

    id: int
    name: str
    admin: bool
    created_at: str
    session_epoch: int
    shares: bool

    @property
    def reader(self) -> ReaderId:
        return ReaderId(self.id)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "admin": self.admin,
            "created_at": self.created_at,
            "shares": self.shares,
        }


@dataclass(frozen=True, slots=True)
class TokenView:
    """An API token as listed (its secret is never kept, only its digest)."""

    id: int
    user_id: int
    name: str
    created_at: str
    last_used: str | None
    revoked_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "created_at": self.created_at,
            "last_used": self.last_used,
            "revoked_at": self.revoked_at,
        }


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One admin action: who did what to what, and when."""

    id: int
    at: str
    actor: str
    action: str
    target: str


@dataclass(frozen=True, slots=True)
class SignInLimits:
    """How many failed sign-ins a window allows: for one account from one address, from
    one address, and for one account from every address together."""

    per_account_address: int
    per_address: int
    per_account: int


@dataclass(frozen=True, slots=True)
class GroupSave:
    """A story saved by two or more members who share, with who and when first."""

    story_key: str
    members: tuple[str, ...]
    first_saved: str


_USER_COLUMNS = "id, name, admin, created_at, session_epoch, shares"


def _user(row: Any) -> UserView:
    return UserView(int(row[0]), row[1], bool(row[2]), row[3], int(row[4]), bool(row[5]))


class ReaderQueries(Queries):
    """Accounts, tokens, feed keys, audit, and every reader's own state."""

    # -- accounts ---------------------------------------------------------------------

    def user_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM users").fetchone()[0])

    def add_user(self, name: str, password_hash: str, *, admin: bool, now: str) -> UserView:
        """Add an account; the first one is an admin and takes over the local reader's state."""
        with self.transaction():
            self.serialize("accounts")  # the name checked, and who is first
            if self.db.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
                raise UsageError(f"there is already an account named {name!r}")
            first = self.user_count() == 0
            row = self.db.execute(
                "INSERT INTO users (name, password_hash, admin, created_at) VALUES (?, ?, ?, ?) "
                f"RETURNING {_USER_COLUMNS}",
                (name, password_hash, int(admin or first), now),
            ).fetchone()
            user = _user(row)
            if first:
                for table in _READER_TABLES:
                    self.db.execute(
                        f"UPDATE {table} SET user_id = ? WHERE user_id = ?", (user.id, LOCAL_READER)
                    )
                for table in _KEYED_READER_TABLES:  # watches name readers by key (watch.py)
                    self.db.execute(
                        f"UPDATE {table} SET reader = ? WHERE reader = ''", (f"user:{user.id}",)
                    )
        return user

    def get_user(self, name: str) -> UserView:
        row = self.db.execute(
            f"SELECT {_USER_COLUMNS} FROM users WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no account named {name!r} (see `lightnews users list`)")
        return _user(row)

    def user_by_id(self, user_id: int) -> UserView | None:
        row = self.db.execute(
            f"SELECT {_USER_COLUMNS} FROM users WHERE id = ?", (user_id,)
        ).fetchone()
        return _user(row) if row else None

    def list_users(self) -> list[UserView]:
        rows = self.db.execute(
            f"SELECT {_USER_COLUMNS} FROM users ORDER BY {self.sql.caseless('name')}"
        )
        return [_user(r) for r in rows]

    def password_hash(self, name: str) -> tuple[UserView, str] | None:
        """An account and its password hash, for signing in (None: no such account)."""
        row = self.db.execute(
            f"SELECT {_USER_COLUMNS}, password_hash FROM users WHERE name = ?", (name,)
        ).fetchone()
        return (_user(row), str(row[6])) if row else None

    def set_password(self, user_id: int, password_hash: str) -> None:
        """A new password; every session of the account ends."""
        with self.transaction():
            self.db.execute(
                "UPDATE users SET password_hash = ?, session_epoch = session_epoch + 1 "
                "WHERE id = ?",
                (password_hash, user_id),
            )
            self.db.execute("DELETE FROM sessions WHERE user_id = ?", (user_id,))

    def set_admin(self, user_id: int, admin: bool) -> None:
        with self.transaction():
            self.serialize("accounts")  # two admins stepping down at once: one stays
            if not admin and self._other_admins(user_id) == 0:
                raise UsageError("the last admin cannot stop being one: make another admin first")
            self.db.execute("UPDATE users SET admin = ? WHERE id = ?", (int(admin), user_id))

    def end_sessions(self, user_id: int) -> None:
        """Sign out everywhere: every session of the account stops working."""
        with self.transaction():
            self.db.execute("DELETE FROM sessions WHERE user_id = ?", (user_id,))
            self.db.execute(
                "UPDATE users SET session_epoch = session_epoch + 1 WHERE id = ?", (user_id,)
            )

    # -- sessions (kept on the server; the cookie holds the secret, here only its digest) --

    def create_session(self, user_id: int, id_hash: str, now: str, expires: str) -> None:
        """A new session of an account (and the account's expired ones forgotten)."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM sessions WHERE user_id = ? AND expires_at <= ?", (user_id, now)
            )
            self.db.execute(
                "INSERT INTO sessions (id_hash, user_id, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (id_hash, user_id, now, expires),
            )

    def session_user(self, user_id: int, epoch: int, id_hash: str, now: str) -> UserView | None:
        """The account a live session opens: its row, for this very account and epoch."""
        row = self.db.execute(
            f"SELECT {', '.join('u.' + c for c in _USER_COLUMNS.split(', '))} "
            "FROM sessions s JOIN users u ON u.id = s.user_id "
            "WHERE s.id_hash = ? AND s.user_id = ? AND u.session_epoch = ? AND s.expires_at > ?",
            (id_hash, user_id, epoch, now),
        ).fetchone()
        return _user(row) if row else None

    def end_session(self, id_hash: str) -> None:
        """Sign out: this one session stops working, wherever its cookie was copied."""
        with self.transaction():
            self.db.execute("DELETE FROM sessions WHERE id_hash = ?", (id_hash,))

    def remove_user(self, user_id: int) -> None:
        """Remove an account with everything that was its own (its tokens, state, feed key)."""
        with self.transaction():
            self.serialize("accounts")  # the last admin is checked
            user = self.user_by_id(user_id)
            if user is None:
                raise NotFound(f"no account with id {user_id}")
            if user.admin and self._other_admins(user_id) == 0 and self.user_count() > 1:
                raise UsageError("the last admin cannot be removed: make another admin first")
            for table in (*_READER_TABLES, "sessions", "api_tokens"):
                self.db.execute(f"DELETE FROM {table} WHERE user_id = ?", (user_id,))
            for table in (*_KEYED_READER_TABLES, "deliveries"):  # watches, push (watch.py)
                self.db.execute(f"DELETE FROM {table} WHERE reader = ?", (f"user:{user_id}",))
            self.db.execute("DELETE FROM users WHERE id = ?", (user_id,))
            self._refresh_followed()

    def _other_admins(self, user_id: int) -> int:
        return int(
            self.db.execute(
                "SELECT count(*) FROM users WHERE admin = 1 AND id != ?", (user_id,)
            ).fetchone()[0]
        )

    def set_sharing(self, reader: ReaderId, shares: bool) -> None:
        """Whether the reader's saved stories count (with their name) in the group feed."""
        with self.transaction():
            self.db.execute("UPDATE users SET shares = ? WHERE id = ?", (int(shares), reader))

    # -- API tokens and feed keys ---------------------------------------------------------

    def create_token(self, user_id: int, name: str, token_hash: str, now: str) -> TokenView:
        with self.transaction():
            row = self.db.execute(
                "INSERT INTO api_tokens (user_id, name, token_hash, created_at) "
                "VALUES (?, ?, ?, ?) RETURNING id",
                (user_id, name, token_hash, now),
            ).fetchone()
        return TokenView(int(row[0]), user_id, name, now, None, None)

    def list_tokens(self, user_id: int) -> list[TokenView]:
        rows = self.db.execute(
            "SELECT id, user_id, name, created_at, last_used, revoked_at FROM api_tokens "
            "WHERE user_id = ? ORDER BY id",
            (user_id,),
        )
        return [TokenView(int(r[0]), int(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def revoke_token(self, user_id: int, token_id: int, now: str) -> None:
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) "
                "WHERE id = ? AND user_id = ?",
                (now, token_id, user_id),
            )
            if cursor.rowcount == 0:
                raise NotFound(
                    f"no token #{token_id} of this account (see `lightnews tokens list`)"
                )

    def token_user(self, token_hash: str, now: str) -> UserView | None:
        """The account a token (by its digest) acts for; None if unknown or revoked."""
        row = self.db.execute(
            "SELECT t.id, u.id, u.name, u.admin, u.created_at, u.session_epoch, u.shares, "
            "t.last_used FROM api_tokens t JOIN users u ON u.id = t.user_id "
            "WHERE t.token_hash = ? AND t.revoked_at IS NULL",
            (token_hash,),
        ).fetchone()
        if row is None:
            return None
        # Last use is a hint, kept to the minute: a request (a GET too) writes it at most
        # once a minute per token, since a write may wait for a refresh's transaction,
        # and a busy library does not refuse the token for it.
        if (row[7] or "")[:16] != now[:16]:
            try:
                with self.transaction():
                    self.db.execute(
                        "UPDATE api_tokens SET last_used = ? WHERE id = ?", (now, row[0])
                    )
            except Exception:
                pass
        return _user(row[1:7])

    def set_feed_key(self, reader: ReaderId, key_hash: str, now: str) -> None:
        """The reader's secret feed key (a new one replaces the old: its URLs stop working)."""
        with self.transaction():
            self.serialize(f"feed-key:{reader}")  # deleted, then inserted
            self.db.execute("DELETE FROM feed_keys WHERE user_id = ?", (reader,))
            self.db.execute(
                "INSERT INTO feed_keys (user_id, key_hash, created_at) VALUES (?, ?, ?)",
                (reader, key_hash, now),
            )

    def feed_key_reader(self, key_hash: str) -> ReaderId | None:
        """Whose feed a secret key (by its digest) opens; None when it opens none."""
        row = self.db.execute(
            "SELECT user_id FROM feed_keys WHERE key_hash = ?", (key_hash,)
        ).fetchone()
        return ReaderId(int(row[0])) if row else None

    # -- audit and sign-in failures ---------------------------------------------------------

    def audit(self, actor: str, action: str, target: str, now: str) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT INTO audit_log (at, actor, action, target) VALUES (?, ?, ?, ?)",
                (now, actor, action, target),
            )

    def audit_log(self, limit: int = 200) -> list[AuditEntry]:
        rows = self.db.execute(
            "SELECT id, at, actor, action, target FROM audit_log ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [AuditEntry(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]

    def record_sign_in_failure(self, account: str, address: str, now: str) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT INTO sign_in_failures (at, account, address) VALUES (?, ?, ?)",
                (now, account[:200], address[:200]),
            )

    def sign_in_failures(self, account: str, address: str, since: str) -> tuple[int, int]:
        """Failed sign-ins since ``since``: ``(for this account, from this address)``."""
        row = self.db.execute(
            "SELECT (SELECT count(*) FROM sign_in_failures WHERE account = ? AND at >= ?), "
            "(SELECT count(*) FROM sign_in_failures WHERE address = ? AND at >= ?)",
            (account[:200], since, address[:200], since),
        ).fetchone()
        return int(row[0]), int(row[1])

    def claim_sign_in(
        self, account: str, address: str, now: str, since: str, limits: SignInLimits
    ) -> int | None:
        """Take one try at a password, counted before it is checked; None past a limit.

        The counts are read and the try written as a failure in one write
        transaction that tries of the same account or address take in turn
        (SQLite's one writer; PostgreSQL's locks of :meth:`serialize`), so
        concurrent tries cannot all read "under the limit": at most the limit's
        worth get checked.
        The limits are per account *and address* (a member is not locked out by
        someone else's guesses), per address, and a higher one per account from
        every address (guesses spread over many addresses). A password that turns
        out right gives its try back (:meth:`forgive_sign_in`).
        """
        account, address = account[:200], address[:200]
        with self.transaction():
            self.serialize(f"sign-in-account:{account}", f"sign-in-address:{address}")
            row = self.db.execute(
                "SELECT (SELECT count(*) FROM sign_in_failures "
                "        WHERE account = ? AND address = ? AND at >= ?), "
                "(SELECT count(*) FROM sign_in_failures WHERE address = ? AND at >= ?), "
                "(SELECT count(*) FROM sign_in_failures WHERE account = ? AND at >= ?)",
                (account, address, since, address, since, account, since),
            ).fetchone()
            if (
                int(row[0]) >= limits.per_account_address
                or int(row[1]) >= limits.per_address
                or int(row[2]) >= limits.per_account
            ):
                return None
            claimed = self.db.execute(
                "INSERT INTO sign_in_failures (at, account, address) VALUES (?, ?, ?) RETURNING id",
                (now, account, address),
            ).fetchone()
        return int(claimed[0])

    def forgive_sign_in(self, claim: int, account: str, address: str) -> None:
        """The password was right: its try, and this address's earlier ones, are forgotten."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM sign_in_failures WHERE id = ? OR (account = ? AND address = ?)",
                (claim, account[:200], address[:200]),
            )

    def clear_sign_in_failures(self, account: str, before: str) -> None:
        """Forget an account's failures (it signed in), and everyone's older than ``before``."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM sign_in_failures WHERE account = ? OR at < ?", (account[:200], before)
            )

    # -- what a reader follows ------------------------------------------------------------

    def set_followed(self, reader: ReaderId, scholar_id: int, followed: bool, now: str) -> None:
        with self.transaction():
            self.serialize(f"scholar:{scholar_id}")  # its `followed` counts every reader
            if followed:
                self.db.execute(
                    "INSERT INTO follows (user_id, scholar_id, created_at) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    (reader, scholar_id, now),
                )
            else:
                self.db.execute(
                    "DELETE FROM follows WHERE user_id = ? AND scholar_id = ?", (reader, scholar_id)
                )
            self._refresh_followed(scholar_id)

    def _refresh_followed(self, scholar_id: int | None = None) -> None:
        """``scholars.followed``: whether any reader follows (whom the instance keeps up with)."""
        where = "" if scholar_id is None else " WHERE id = ?"
        self.db.execute(
            "UPDATE scholars SET followed = CASE WHEN EXISTS (SELECT 1 FROM follows f "
            f"WHERE f.scholar_id = scholars.id) THEN 1 ELSE 0 END{where}",
            () if scholar_id is None else (scholar_id,),
        )

    def follows(self, reader: ReaderId) -> frozenset[int]:
        """Ids of the scholars this reader follows."""
        rows = self.db.execute("SELECT scholar_id FROM follows WHERE user_id = ?", (reader,))
        return frozenset(int(r[0]) for r in rows)

    def followed_accounts(self, reader: ReaderId) -> dict[str, int]:
        """Scholars the reader follows, by the id of each social account (``<service>-did``)."""
        rows = self.db.execute(
            "SELECT d.value, d.scholar_id FROM identities d JOIN follows f "
            "ON f.scholar_id = d.scholar_id WHERE f.user_id = ? AND d.kind LIKE '%-did'",
            (reader,),
        )
        return {r[0]: int(r[1]) for r in rows}

    def any_followed_accounts(self) -> dict[str, int]:
        """Scholars some reader follows, by social account id (whom the instance listens for)."""
        rows = self.db.execute(
            "SELECT d.value, d.scholar_id FROM identities d JOIN scholars s "
            "ON s.id = d.scholar_id WHERE s.followed = 1 AND d.kind LIKE '%-did'"
        )
        return {r[0]: int(r[1]) for r in rows}

    def followed_scholars(self, reader: ReaderId) -> list[ScholarRef]:
        """Every scholar the reader follows, by name (the feed's header)."""
        rows = self.db.execute(
            "SELECT s.id, s.name FROM scholars s JOIN follows f ON f.scholar_id = s.id "
            f"WHERE f.user_id = ? ORDER BY {self.sql.caseless('s.name')}",
            (reader,),
        )
        return [ScholarRef(int(r[0]), r[1]) for r in rows]

    def followed_authorships(
        self, reader: ReaderId, arxiv_ids: Sequence[str], bar: float
    ) -> dict[str, list[str]]:
        """Names of scholars the reader follows each paper is attributed to (at ``bar`` or more)."""
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            "SELECT p.arxiv_id, s.name FROM authorships a JOIN papers p ON p.id = a.paper_id "
            "JOIN scholars s ON s.id = a.scholar_id JOIN follows f ON f.scholar_id = s.id "
            "WHERE f.user_id = ? AND a.confidence >= ? "
            f"AND {self.sql.in_list('p.arxiv_id')} ORDER BY a.position",
            (reader, bar, self.sql.list_param(arxiv_ids)),
        )
        found: dict[str, list[str]] = {}
        for arxiv_id, name in rows:
            found.setdefault(arxiv_id, []).append(name)
        return found

    def followed_papers(self, reader: ReaderId, since: str, bar: float, limit: int) -> list[str]:
        """Papers since ``since`` attributed (at ``bar`` or more) to scholars the reader
        follows, newest first: the feed's first candidates, however many papers are newer."""
        rows = self.db.execute(
            "SELECT p.arxiv_id, max(p.published) AS published FROM follows f "
            "JOIN authorships a ON a.scholar_id = f.scholar_id "
            "JOIN papers p ON p.id = a.paper_id "
            "WHERE f.user_id = ? AND a.confidence >= ? AND p.published >= ? "
            "AND p.content_hash IS NOT NULL "
            "GROUP BY p.arxiv_id ORDER BY published DESC LIMIT ?",
            (reader, bar, since, limit),
        )
        return [r[0] for r in rows]

    # -- what a reader sees ------------------------------------------------------------------

    def set_mute(
        self, reader: ReaderId, kind: str, value: str, now: str, muted: bool = True
    ) -> None:
        if kind not in ("scholar", "source", "keyword"):
            raise UsageError(f"cannot mute a {kind!r}; mute a scholar, a source or a keyword")
        with self.transaction():
            if muted:
                self.db.execute(
                    "INSERT INTO mutes (user_id, kind, value, created_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    (reader, kind, value, now),
                )
            else:
                self.db.execute(
                    "DELETE FROM mutes WHERE user_id = ? AND kind = ? AND value = ?",
                    (reader, kind, value),
                )

    def mutes(self, reader: ReaderId) -> Mutes:
        found: dict[str, set[str]] = {"scholar": set(), "source": set(), "keyword": set()}
        for kind, value in self.db.execute(
            "SELECT kind, value FROM mutes WHERE user_id = ?", (reader,)
        ):
            found[kind].add(value)
        return Mutes(*(frozenset(found[k]) for k in ("scholar", "source", "keyword")))

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
        with self.transaction():
            self.db.execute(
                "INSERT INTO story_state (user_id, story_key) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (reader, key),
            )
            if read is not None:
                self.db.execute(
                    "UPDATE story_state SET read_at = ? WHERE user_id = ? AND story_key = ?",
                    (now if read else None, reader, key),
                )
            if saved is not None:
                self.db.execute(
                    "UPDATE story_state SET saved_at = ? WHERE user_id = ? AND story_key = ?",
                    (now if saved else None, reader, key),
                )

    def story_states(self, reader: ReaderId) -> dict[str, tuple[str | None, str | None]]:
        """``story key -> (read at, saved at)`` of this reader's stories."""
        rows = self.db.execute(
            "SELECT story_key, read_at, saved_at FROM story_state WHERE user_id = ?", (reader,)
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def reader_settings(self, reader: ReaderId) -> dict[str, str]:
        rows = self.db.execute("SELECT name, value FROM user_settings WHERE user_id = ?", (reader,))
        return {r[0]: r[1] for r in rows}

    def save_reader_setting(self, reader: ReaderId, name: str, value: str | None) -> None:
        if name not in READER_SETTINGS:
            raise UsageError(
                f"{name!r} is not a reader's setting; readers set {', '.join(READER_SETTINGS)}"
            )
        with self.transaction():
            if value is None:
                self.db.execute(
                    "DELETE FROM user_settings WHERE user_id = ? AND name = ?", (reader, name)
                )
            else:
                self.db.execute(
                    "INSERT INTO user_settings (user_id, name, value) VALUES (?, ?, ?) "
                    "ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value",
                    (reader, name, value),
                )

    # -- the group ------------------------------------------------------------------------

    def group_saves(self, at_least: int = 2, limit: int = 100) -> list[GroupSave]:
        """Stories saved by ``at_least`` members who share, most members first."""
        rows = self.db.execute(
            "SELECT st.story_key, u.name, st.saved_at FROM story_state st "
            "JOIN users u ON u.id = st.user_id WHERE u.shares = 1 AND st.saved_at IS NOT NULL "
            "ORDER BY st.story_key, st.saved_at"
        )
        by_key: dict[str, list[tuple[str, str]]] = {}
        for key, name, saved_at in rows:
            by_key.setdefault(key, []).append((name, saved_at))
        found = [
            GroupSave(key, tuple(n for n, _ in saves), min(s for _, s in saves))
            for key, saves in by_key.items()
            if len(saves) >= at_least
        ]
        found.sort(key=lambda g: (-len(g.members), g.first_saved, g.story_key))
        return found[:limit]
