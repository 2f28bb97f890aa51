"""Store queries behind follow suggestions: whose accounts the reader's circle points at.

Part of the store (mixed into :class:`~lightnews.store.common.CommonStore`, so
both backends run the same SQL), kept apart because it has one job: read the
few facts :mod:`lightnews.rank.suggest` weighs into "you might follow": the
social identities of every scholar (who is already followed or muted, which
known scholar an account is), the reposts and quotes followed scholars made on
the network, the papers of followed scholars and the authors of papers, and the
accounts known by id, handle or display name. No ranking here, and nothing
written: suggestions are computed when asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lightnews.store.connection import Queries
from lightnews.store.views import AccountView

__all__ = ["NetworkShare", "PaperAuthor", "SocialIdentity", "SuggestQueries"]


@dataclass(frozen=True, slots=True)
class SocialIdentity:
    """A scholar's account on a social service: ``kind`` is ``<service>-did`` or ``-handle``."""

    scholar_id: int
    scholar_name: str
    kind: str
    value: str


@dataclass(frozen=True, slots=True)
class NetworkShare:
    """A repost or a quote heard on the network: ``did`` shared the post ``subject``."""

    did: str
    kind: str
    subject: str
    uri: str


@dataclass(frozen=True, slots=True)
class PaperAuthor:
    """One author of a paper, as written, and the scholar it is attributed to (if any)."""

    arxiv_id: str
    position: int
    name: str
    scholar_id: int | None


_ACCOUNT_COLUMNS = (
    "service, id, handle, name, description, avatar, followers, following, posts, pinned, "
    "created, bot, bot_reason"
)


def _account(row: Any) -> AccountView:
    return AccountView(
        row[0],
        row[1],
        row[2] or "",
        row[3] or "",
        row[4] or "",
        row[5],
        None if row[6] is None else int(row[6]),
        None if row[7] is None else int(row[7]),
        None if row[8] is None else int(row[8]),
        row[9],
        row[10],
        bool(row[11]),
        row[12],
    )


class SuggestQueries(Queries):
    """Reads for follow suggestions (both backends, one SQL)."""

    def social_identities(self) -> list[SocialIdentity]:
        """Every scholar's social accounts (DIDs and handles), by scholar."""
        rows = self.db.execute(
            "SELECT d.scholar_id, s.name, d.kind, d.value FROM identities d "
            "JOIN scholars s ON s.id = d.scholar_id "
            "WHERE d.kind LIKE '%-did' OR d.kind LIKE '%-handle' ORDER BY d.scholar_id, d.kind"
        )
        return [SocialIdentity(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def network_shares(self, dids: Sequence[str], limit: int = 5_000) -> list[NetworkShare]:
        """The newest reposts and quotes these accounts made on the network (what they shared)."""
        if not dids:
            return []
        rows = self.db.execute(
            "SELECT did, kind, subject, uri FROM network_posts WHERE kind IN ('repost', 'quote') "
            f"AND subject IS NOT NULL AND {self.sql.in_list('did')} ORDER BY time_us DESC LIMIT ?",
            (self.sql.list_param(dids), limit),
        )
        return [NetworkShare(r[0], r[1], r[2], r[3]) for r in rows]

    def scholars_paper_ids(
        self, scholar_ids: Sequence[int], bar: float, limit: int = 2_000
    ) -> dict[int, list[str]]:
        """The newest papers attributed to each scholar (at ``bar`` or more)."""
        if not scholar_ids:
            return {}
        rows = self.db.execute(
            "SELECT DISTINCT a.scholar_id, p.arxiv_id, p.published FROM authorships a "
            "JOIN papers p ON p.id = a.paper_id WHERE a.confidence >= ? AND "
            f"{self.sql.in_list('a.scholar_id')} ORDER BY p.published DESC LIMIT ?",
            (bar, self.sql.list_param(scholar_ids), limit),
        )
        found: dict[int, list[str]] = {}
        for scholar_id, arxiv_id, _ in rows:
            found.setdefault(int(scholar_id), []).append(arxiv_id)
        return found

    def paper_authors(self, arxiv_ids: Sequence[str], bar: float) -> list[PaperAuthor]:
        """Every author of these papers, with the scholar attributed at ``bar`` or more."""
        if not arxiv_ids:
            return []
        rows = self.db.execute(
            "SELECT p.arxiv_id, a.position, a.name, "
            "CASE WHEN a.confidence >= ? THEN a.scholar_id END FROM authorships a "
            f"JOIN papers p ON p.id = a.paper_id WHERE {self.sql.in_list('p.arxiv_id')} "
            "ORDER BY p.arxiv_id, a.position",
            (bar, self.sql.list_param(arxiv_ids)),
        )
        return [
            PaperAuthor(r[0], int(r[1]), r[2], None if r[3] is None else int(r[3])) for r in rows
        ]

    def accounts_matching(
        self,
        service: str,
        *,
        ids: Sequence[str] = (),
        handles: Sequence[str] = (),
        names: Sequence[str] = (),
    ) -> list[AccountView]:
        """Accounts known by one of these ids, handles or display names (caseless).

        One indexed lookup each (the network's accounts table holds everyone heard).
        """
        found: dict[str, AccountView] = {}
        for where, values in (
            ("id", list(ids)),
            ("handle", [h.lower() for h in handles]),
            ("lower(name)", [n.lower() for n in names]),
        ):
            if not values:
                continue
            rows = self.db.execute(
                f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE service = ? AND "
                f"{self.sql.in_list(where)}",
                (service, self.sql.list_param(values)),
            )
            for row in rows:
                found.setdefault(row[1], _account(row))
        return list(found.values())
