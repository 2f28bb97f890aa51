"""Store queries about people: scholars, their identities, accounts and attributions.

Part of the store (mixed into :class:`~lightnews.store.common.CommonStore`, for both backends),
kept in its own module because it has its own job: the identity graph
(scholar -> Bluesky DID and handle, arXiv name variants, ORCID, OpenAlex,
homepage or feed), social accounts with their profile counts, authorships
attributed to scholars with a confidence, and the user's confirm/reject
decisions, which outlive every re-ingest and re-attribution.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from lightnews.errors import Ambiguous, NotFound, UsageError
from lightnews.model import IDENTITY_KINDS, Account, Item, Mention, read_extra
from lightnews.normalize import validate
from lightnews.normalize.names import fold
from lightnews.sources import all_traits
from lightnews.store.connection import Queries, retried
from lightnews.store.views import (
    AccountView,
    AuthorshipCandidate,
    Identity,
    PaperAuthorship,
    ScholarPaper,
    ScholarSummary,
    ScholarView,
    SourceRef,
)

__all__ = ["IDENTITY_KINDS", "ScholarQueries"]


def _details(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    """The typed fields of a stored item's ``extra`` (as keyword arguments of Item)."""
    post, daily, note, record = read_extra(kind, extra)
    return {
        "post": post,
        "daily": daily,
        "note": note,
        "record": record,
        "code_links": list(extra.get("code_links") or []),
    }


class ScholarQueries(Queries):
    """Scholar, identity, account and attribution reads and writes."""

    # -- scholars and identities -------------------------------------------------

    def create_scholar(self, name: str, now: str) -> int:
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO scholars (name, created_at) VALUES (?, ?) RETURNING id", (name, now)
            )
            return int(cursor.fetchone()[0])

    def rename_scholar(self, scholar_id: int, name: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE scholars SET name = ? WHERE id = ?", (name, scholar_id))

    def add_identity(self, scholar_id: int, kind: str, value: str) -> int:
        """Tie an identity to a scholar; returns the scholar that owns it (maybe another)."""
        if kind not in IDENTITY_KINDS:
            raise UsageError(f"unknown identity kind {kind!r}; known: {', '.join(IDENTITY_KINDS)}")
        with self.transaction():
            self.db.execute(
                "INSERT INTO identities (scholar_id, kind, value) VALUES (?, ?, ?) "
                "ON CONFLICT(kind, value) DO NOTHING",
                (scholar_id, kind, value),
            )
            owner = self.db.execute(
                "SELECT scholar_id FROM identities WHERE kind = ? AND value = ?", (kind, value)
            ).fetchone()
        return int(owner[0])

    def identities(self, scholar_id: int) -> list[tuple[str, str]]:
        rows = self.db.execute(
            "SELECT kind, value FROM identities WHERE scholar_id = ? ORDER BY kind, value",
            (scholar_id,),
        )
        return [(r[0], r[1]) for r in rows]

    def identities_of_kind(self, kind: str) -> list[tuple[int, str]]:
        """``(scholar id, value)`` of every identity of ``kind`` (one query, all scholars)."""
        rows = self.db.execute(
            "SELECT scholar_id, value FROM identities WHERE kind = ? ORDER BY scholar_id, value",
            (kind,),
        )
        return [(int(r[0]), r[1]) for r in rows]

    def scholar_by_identity(self, kind: str, value: str) -> int | None:
        row = self.db.execute(
            "SELECT scholar_id FROM identities WHERE kind = ? AND value = ?", (kind, value)
        ).fetchone()
        return int(row[0]) if row else None

    @retried
    def scholar_for(self, kind: str, value: str, name: str, now: str) -> int:
        """The scholar who holds an identity, or a new one named ``name`` holding it: one
        scholar however many writers ask at once (they take turns on the identity)."""
        with self.transaction():
            self.serialize(f"identity:{kind}:{value}")
            owner = self.scholar_by_identity(kind, value)
            if owner is not None:
                return owner
            scholar_id = self.create_scholar(name, now)
            return self.add_identity(scholar_id, kind, value)

    def namesakes(self, scholar_id: int) -> list[tuple[int, str]]:
        """Other scholars known by this one's name: their name or arXiv name is this one's
        name or one of its arXiv names (case aside). One person followed twice, by a
        handle and as an arXiv author, shows up here once the handle's profile gave its
        name; ``(id, name)``, oldest first."""
        rows = self.db.execute(
            "WITH names AS ("
            " SELECT lower(name) AS n FROM scholars WHERE id = ?"
            " UNION SELECT lower(value) FROM identities WHERE scholar_id = ? AND kind = ?)"
            " SELECT DISTINCT s.id, s.name FROM scholars s"
            " LEFT JOIN identities i ON i.scholar_id = s.id AND i.kind = ?"
            " WHERE s.id <> ? AND (lower(s.name) IN (SELECT n FROM names)"
            " OR lower(i.value) IN (SELECT n FROM names)) ORDER BY s.id",
            (scholar_id, scholar_id, "arxiv-name", "arxiv-name", scholar_id),
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def get_scholar(self, scholar_id: int) -> ScholarView:
        row = self.db.execute(
            "SELECT id, name, followed, created_at FROM scholars WHERE id = ?", (scholar_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no scholar with id {scholar_id}")
        identities = tuple(Identity(k, v) for k, v in self.identities(scholar_id))
        return ScholarView(
            row["id"], row["name"], bool(row["followed"]), row["created_at"], identities
        )

    def find_scholar(self, query: str) -> int:
        """A scholar by id, handle (with or without @), DID, ORCID, arXiv name or name,
        or by part of a name or handle (``mara``, ``Lindqvist``, ``maralind``).

        Whole matches win: an id, then an identity, then a full name. Otherwise
        every scholar whose name (or an arXiv name) has, for each word asked, a
        word starting with it, or whose handle starts with what was asked. One
        scholar is the answer; several raise :class:`Ambiguous` listing them,
        followed scholars first.
        """
        text = " ".join(query.split())
        if not text:
            raise UsageError("give a scholar: an id, a handle, an ORCID iD or (part of) a name")
        if (
            text.isascii()  # "¹" is a digit to isdigit, and no int
            and text.isdigit()
            and len(text) < 19
            and self.db.execute("SELECT 1 FROM scholars WHERE id = ?", (int(text),)).fetchone()
        ):
            return int(text)
        handle = text.removeprefix("@").lower()
        try:
            orcid = validate.orcid(text).lower()
        except UsageError:
            orcid = handle
        exact = [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT scholar_id FROM identities WHERE lower(value) IN (?, ?, ?)",
                (text.lower(), handle, orcid),
            )
        ] or [
            r[0]
            for r in self.db.execute(
                "SELECT id FROM scholars WHERE lower(name) IN (?, ?)", (text.lower(), f"@{handle}")
            )
        ]
        found = exact or self._scholars_by_part(fold(text), handle)
        if not found:
            raise NotFound(f"no scholar matches {query!r} (see `lightnews scholars list`)")
        if len(found) == 1:
            return int(found[0])
        raise self._ambiguous(query, found)

    def _scholars_by_part(self, words: str, handle: str) -> list[int]:
        """Scholars whose names have words starting with each of ``words``, or whose
        handle starts with ``handle``."""
        asked = words.split()
        found: dict[int, None] = {}
        rows = self.db.execute(
            "SELECT s.id, s.name, d.kind, d.value FROM scholars s LEFT JOIN identities d "
            "ON d.scholar_id = s.id AND d.kind IN ('arxiv-name', 'bluesky-handle') "
            "ORDER BY s.followed DESC, lower(s.name), s.id"
        )
        for scholar_id, name, kind, value in rows:
            names = [name] + ([value] if kind == "arxiv-name" else [])
            by_name = any(
                asked and all(any(w.startswith(a) for w in fold(n).split()) for a in asked)
                for n in names
            )
            by_handle = kind == "bluesky-handle" and value.lower().startswith(handle)
            if by_name or by_handle:
                found[int(scholar_id)] = None
        return list(found)

    def _ambiguous(self, query: str, scholar_ids: Sequence[int]) -> Ambiguous:
        """The :class:`Ambiguous` error naming the scholars ``query`` matched."""
        rows = self.db.execute(
            "SELECT s.id, s.name, (SELECT value FROM identities d WHERE d.scholar_id = s.id "
            "AND d.kind = 'bluesky-handle' ORDER BY value LIMIT 1) AS handle FROM scholars s "
            f"WHERE {self.sql.in_list('s.id')} ORDER BY s.followed DESC, lower(s.name), s.id",
            (self.sql.list_param(scholar_ids),),
        ).fetchall()
        choices = [
            (str(r[0]), r[1] + (f" (@{r[2]})" if r[2] and r[2] not in r[1] else "")) for r in rows
        ]
        shown = "; ".join(f"#{key} {label}" for key, label in choices[:20])
        more = f" and {len(choices) - 20} more" if len(choices) > 20 else ""
        return Ambiguous(
            f"{len(choices)} scholars match {query!r}: {shown}{more}. "
            "Give the id (the number after #) or more of the name",
            choices,
        )

    def list_scholars(self, bar: float = 0.0) -> list[ScholarSummary]:
        rows = self.db.execute(
            "SELECT s.id, s.name, s.followed, "
            "(SELECT count(*) FROM authorships a WHERE a.scholar_id = s.id "
            " AND a.confidence >= ?) AS records "
            f"FROM scholars s ORDER BY {self.sql.caseless('s.name')}",
            (bar,),
        ).fetchall()
        return [
            ScholarSummary(
                row["id"],
                row["name"],
                bool(row["followed"]),
                int(row["records"]),
                tuple(Identity(k, v) for k, v in self.identities(row["id"])),
            )
            for row in rows
        ]

    def merge_scholars(self, keep: int, drop: int) -> None:
        """One person known twice: everything of ``drop`` moves to ``keep``."""
        if keep == drop:
            raise UsageError("cannot merge a scholar with itself")
        self.get_scholar(keep)
        self.get_scholar(drop)
        with self.transaction():
            self.serialize(f"scholar:{keep}", f"scholar:{drop}")
            # An identity is one scholar's ((kind, value) is unique): moving it cannot collide.
            self.db.execute(
                "UPDATE identities SET scholar_id = ? WHERE scholar_id = ?", (keep, drop)
            )
            self.db.execute("UPDATE sources SET scholar_id = ? WHERE scholar_id = ?", (keep, drop))
            self.db.execute(
                "UPDATE authorships SET scholar_id = ? WHERE scholar_id = ?", (keep, drop)
            )
            # A paper both were decided on keeps the decision of the one kept (portable SQL:
            # PostgreSQL has no UPDATE OR IGNORE).
            self.db.execute(
                "DELETE FROM attribution_decisions WHERE scholar_id = ? AND arxiv_id IN "
                "(SELECT arxiv_id FROM attribution_decisions WHERE scholar_id = ?)",
                (drop, keep),
            )
            self.db.execute(
                "UPDATE attribution_decisions SET scholar_id = ? WHERE scholar_id = ?",
                (keep, drop),
            )
            # Whoever followed either follows the one kept.
            self.db.execute(
                "INSERT INTO follows (user_id, scholar_id, created_at) SELECT user_id, ?, "
                "created_at FROM follows WHERE scholar_id = ? ON CONFLICT DO NOTHING",
                (keep, drop),
            )
            self.db.execute("DELETE FROM scholars WHERE id = ?", (drop,))
            self.db.execute(
                "UPDATE scholars SET followed = CASE WHEN EXISTS (SELECT 1 FROM follows f "
                "WHERE f.scholar_id = scholars.id) THEN 1 ELSE followed END WHERE id = ?",
                (keep,),
            )

    def split_scholar(
        self, scholar_id: int, identities: Sequence[tuple[str, str]], name: str, now: str
    ) -> int:
        """Two people known as one: move ``identities`` (and their sources) to a new scholar."""
        owned = set(self.identities(scholar_id))
        missing = [f"{k}:{v}" for k, v in identities if (k, v) not in owned]
        if missing:
            raise UsageError(f"scholar {scholar_id} has no identity {', '.join(missing)}")
        with self.transaction():
            new_id = self.create_scholar(name, now)
            for kind, value in identities:
                self.db.execute(
                    "UPDATE identities SET scholar_id = ? WHERE kind = ? AND value = ?",
                    (new_id, kind, value),
                )
                # The sources that read this identity (a handle, a DID, a feed) go along.
                self.db.execute(
                    "UPDATE sources SET scholar_id = ? WHERE scholar_id = ? AND address = ?",
                    (new_id, scholar_id, value),
                )
            # Attributions are recomputed for both from their identities.
            self.db.execute(
                "UPDATE authorships SET scholar_id = NULL, confidence = NULL WHERE scholar_id = ?",
                (scholar_id,),
            )
        return new_id

    # -- accounts --------------------------------------------------------------------

    @retried
    def save_accounts(self, accounts: Iterable[Account], now: str) -> int:
        """Insert or refresh accounts (profile counts change); returns how many were saved."""
        rows = [
            (
                a.service,
                a.id,
                a.handle,
                a.name,
                a.description,
                a.avatar,
                a.followers,
                a.following,
                a.posts,
                a.pinned,
                a.created,
                a.payload,
                now,
            )
            for a in sorted(accounts, key=lambda a: (a.service, a.id))  # one order: no deadlock
        ]
        with self.transaction():
            self.db.executemany(
                "INSERT INTO accounts (service, id, handle, name, description, avatar, "
                "followers, following, posts, pinned, created, payload, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(service, id) DO UPDATE SET handle = excluded.handle, "
                "name = COALESCE(NULLIF(excluded.name, ''), accounts.name), "
                "description = COALESCE(NULLIF(excluded.description, ''), accounts.description), "
                "avatar = COALESCE(excluded.avatar, accounts.avatar), "
                "followers = COALESCE(excluded.followers, accounts.followers), "
                "following = COALESCE(excluded.following, accounts.following), "
                "posts = COALESCE(excluded.posts, accounts.posts), "
                "pinned = CASE WHEN excluded.payload LIKE '%\"followersCount\"%' "
                "  THEN excluded.pinned ELSE COALESCE(excluded.pinned, accounts.pinned) END, "
                "created = COALESCE(excluded.created, accounts.created), "
                "payload = CASE WHEN length(excluded.payload) > 0 THEN excluded.payload "
                "  ELSE accounts.payload END, updated_at = excluded.updated_at",
                rows,
            )
        return len(rows)

    def get_account(self, service: str, key: str) -> AccountView | None:
        """An account by its id or its handle."""
        row = self.db.execute(
            "SELECT service, id, handle, name, description, avatar, followers, following, "
            "posts, pinned, created, bot, bot_reason FROM accounts "
            "WHERE service = ? AND (id = ? OR lower(handle) = lower(?))",
            (service, key, key.removeprefix("@")),
        ).fetchone()
        if row is None:
            return None
        fields = dict(row)
        for text in ("handle", "name", "description"):
            fields[text] = fields[text] or ""
        fields["bot"] = bool(fields["bot"])
        return AccountView(**fields)

    def mark_bot(self, service: str, account_id: str, reason: str | None) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE accounts SET bot = ?, bot_reason = ? WHERE service = ? AND id = ?",
                (int(reason is not None), reason, service, account_id),
            )

    def account_items(
        self, account_ids: Sequence[str], limit: int = 200, offset: int = 0
    ) -> list[Item]:
        """Posts and reposts by these accounts (or reposted by them), newest first."""
        if not account_ids:
            return []
        marks = ", ".join("?" * len(account_ids))
        # Reposts by an account are keyed as their source kind says: a key range, which
        # the items_key index answers (LIKE cannot use a case-sensitive index). The page
        # is chosen first by id and time, then only its rows are read in full.
        keyed = {r for t in all_traits().values() for a in account_ids if (r := t.reposts_by(a))}
        bounds = [b for r in sorted(keyed) for b in r]
        ranges = "".join(
            " UNION ALL SELECT id FROM items WHERE key >= ? AND key < ? AND kind = 'repost'"
            for _ in keyed
        )
        rows = self.db.execute(
            "SELECT i.id, i.key, i.kind, i.title, i.url, i.author, i.text, i.published, "
            "i.links, i.engagement, i.extra, i.account, i.thread_root, i.reply_parent, "
            f"(SELECT {self.sql.concat('p.arxiv_id')} FROM mentions m JOIN papers p "
            " ON p.id = m.paper_id WHERE m.item_id = i.id) AS papers "
            "FROM (SELECT min(id) AS id, max(published) AS published FROM items WHERE id IN ("
            f"SELECT id FROM items WHERE account IN ({marks}) AND kind IN ('post', 'repost') "
            f"{ranges}) GROUP BY key ORDER BY published DESC LIMIT ? OFFSET ?) AS top "
            "JOIN items i ON i.id = top.id ORDER BY top.published DESC",
            (*account_ids, *bounds, limit, offset),
        )
        return [
            Item(
                key=r["key"],
                kind=r["kind"],
                title=r["title"],
                url=r["url"],
                author=r["author"],
                text=r["text"],
                published=r["published"],
                links=orjson.loads(r["links"]),
                engagement=orjson.loads(r["engagement"]),
                **_details(r["kind"], orjson.loads(r["extra"])),
                account=r["account"],
                thread_root=r["thread_root"],
                reply_parent=r["reply_parent"],
                mentions=[Mention(a, "stored", 1.0) for a in (r["papers"] or "").split()],
            )
            for r in rows
        ]

    # -- attribution --------------------------------------------------------------------

    def authorship_candidates(self, name_keys: Sequence[str]) -> list[AuthorshipCandidate]:
        """Authorships whose folded surname is one of ``name_keys``, with paper context."""
        if not name_keys:
            return []
        marks = ", ".join("?" * len(name_keys))
        rows = self.db.execute(
            "SELECT a.paper_id, a.position, a.name, a.keyname, a.forenames, a.scholar_id, "
            "a.confidence, p.arxiv_id, p.categories, p.published, "
            f"(SELECT {self.sql.concat('b.name_key')} FROM authorships b "
            " WHERE b.paper_id = a.paper_id AND b.position != a.position) AS coauthors "
            f"FROM authorships a JOIN papers p ON p.id = a.paper_id WHERE a.name_key IN ({marks})",
            list(name_keys),
        )
        return [AuthorshipCandidate(**r) for r in rows]

    def paper_authorships(self, arxiv_id: str) -> list[PaperAuthorship]:
        rows = self.db.execute(
            "SELECT a.paper_id, a.position, a.name FROM authorships a JOIN papers p "
            "ON p.id = a.paper_id WHERE p.arxiv_id = ? ORDER BY a.position",
            (arxiv_id,),
        )
        return [PaperAuthorship(paper_id=r[0], position=r[1], name=r[2]) for r in rows]

    def set_attributions(self, scholar_id: int, rows: Sequence[tuple[int, int, float]]) -> None:
        """Replace the scholar's attributions with ``(paper_id, position, confidence)`` rows."""
        with self.transaction():
            self.db.execute(
                "UPDATE authorships SET scholar_id = NULL, confidence = NULL WHERE scholar_id = ?",
                (scholar_id,),
            )
            self.db.executemany(
                "UPDATE authorships SET scholar_id = ?, confidence = ? "
                "WHERE paper_id = ? AND position = ? AND (scholar_id IS NULL OR confidence < ?)",
                [(scholar_id, c, p, pos, c) for p, pos, c in rows],
            )

    def set_decision(
        self, scholar_id: int, arxiv_id: str, decision: str | None, now: str, by: str | None = None
    ) -> None:
        with self.transaction():
            if decision is None:
                self.db.execute(
                    "DELETE FROM attribution_decisions WHERE scholar_id = ? AND arxiv_id = ?",
                    (scholar_id, arxiv_id),
                )
            else:
                self.db.execute(
                    "INSERT INTO attribution_decisions (scholar_id, arxiv_id, decision, "
                    "decided_at, decided_by) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT(scholar_id, arxiv_id) DO UPDATE SET "
                    "decision = excluded.decision, decided_at = excluded.decided_at, "
                    "decided_by = excluded.decided_by",
                    (scholar_id, arxiv_id, decision, now, by),
                )

    def decisions(self, scholar_id: int) -> dict[str, str]:
        rows = self.db.execute(
            "SELECT arxiv_id, decision FROM attribution_decisions WHERE scholar_id = ?",
            (scholar_id,),
        )
        return {r[0]: r[1] for r in rows}

    def deciders(self, scholar_id: int) -> dict[str, str]:
        """Who made each decision on the scholar's papers that says so (arXiv id → name)."""
        rows = self.db.execute(
            "SELECT arxiv_id, decided_by FROM attribution_decisions "
            "WHERE scholar_id = ? AND decided_by IS NOT NULL",
            (scholar_id,),
        )
        return {r[0]: r[1] for r in rows}

    def scholar_papers(
        self, scholar_id: int, bar: float, limit: int, offset: int = 0
    ) -> tuple[int, list[ScholarPaper]]:
        """Attributed records above ``bar``, newest first, and how many there are in all."""
        total = self.db.execute(
            "SELECT count(DISTINCT paper_id) FROM authorships "
            "WHERE scholar_id = ? AND confidence >= ?",
            (scholar_id, bar),
        ).fetchone()[0]
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.title, p.abstract, p.primary_category, p.categories, "
            "p.published, p.updated, p.withdrawn, max(a.confidence) AS confidence, "
            "(SELECT b.name FROM authorships b WHERE b.paper_id = p.id AND b.scholar_id = ? "
            " ORDER BY b.confidence DESC, b.position LIMIT 1) AS name_as_written "
            "FROM authorships a JOIN papers p ON p.id = a.paper_id "
            "WHERE a.scholar_id = ? AND a.confidence >= ? GROUP BY p.id "
            "ORDER BY p.published DESC LIMIT ? OFFSET ?",
            (scholar_id, scholar_id, bar, limit, offset),
        )
        return int(total), [ScholarPaper(**{**r, "withdrawn": bool(r["withdrawn"])}) for r in rows]

    def scholar_sources(self, scholar_id: int) -> list[SourceRef]:
        rows = self.db.execute(
            "SELECT id, kind, address FROM sources WHERE scholar_id = ? ORDER BY id", (scholar_id,)
        )
        return [SourceRef(*r) for r in rows]
