"""Store: which scheduled digests were delivered, so that each goes out once.

Workers on any number of machines look for due digests (see
``lightnews.deliver.digest.deliver_due_digest``). A digest is one row per
recipient and period: the worker that inserts it (in a write transaction, so
two cannot both) sends it; the row is marked sent only once the SMTP server
accepted the message, and taken off again when it did not, so the next look
tries again. A claim left by a worker that died while sending is taken over
once it is older than the caller's limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from lightnews.store.connection import Queries

__all__ = ["DigestDelivery", "DigestQueries"]


@dataclass(frozen=True, slots=True)
class DigestDelivery:
    """One scheduled digest: whose, for which period, and whether it went out."""

    recipient: str
    period: str
    claimed_at: str
    claimed_by: str
    sent_at: str | None
    stories: int


class DigestQueries(Queries):
    """Claims and deliveries of scheduled digests (both backends, one SQL)."""

    def claim_digest(
        self, recipient: str, period: str, now: str, stale_before: str, by: str
    ) -> bool:
        """Take on the digest of ``recipient`` for ``period``; False when it was delivered,
        or another worker is sending it (its claim newer than ``stale_before``)."""
        with self.transaction():
            self.serialize(f"digest:{recipient}:{period}")  # looked up, then claimed
            row = self.db.execute(
                "SELECT claimed_at, sent_at FROM digest_deliveries "
                "WHERE recipient = ? AND period = ?",
                (recipient, period),
            ).fetchone()
            if row is None:
                self.db.execute(
                    "INSERT INTO digest_deliveries (recipient, period, claimed_at, claimed_by) "
                    "VALUES (?, ?, ?, ?)",
                    (recipient, period, now, by),
                )
                return True
            if row[1] is not None or row[0] >= stale_before:
                return False
            self.db.execute(  # a claim whose worker died while sending
                "UPDATE digest_deliveries SET claimed_at = ?, claimed_by = ? "
                "WHERE recipient = ? AND period = ?",
                (now, by, recipient, period),
            )
            return True

    def digest_delivered(self, recipient: str, period: str, now: str, stories: int) -> None:
        """The SMTP server accepted the digest of ``recipient`` for ``period``."""
        with self.transaction():
            self.db.execute(
                "UPDATE digest_deliveries SET sent_at = ?, stories = ? "
                "WHERE recipient = ? AND period = ?",
                (now, stories, recipient, period),
            )

    def release_digest(self, recipient: str, period: str) -> None:
        """Give up a claim (the message was not accepted): the next look tries again."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM digest_deliveries "
                "WHERE recipient = ? AND period = ? AND sent_at IS NULL",
                (recipient, period),
            )

    def digest_deliveries(self, recipient: str) -> list[DigestDelivery]:
        """The recipient's digests, newest period first."""
        rows = self.db.execute(
            "SELECT recipient, period, claimed_at, claimed_by, sent_at, stories "
            "FROM digest_deliveries WHERE recipient = ? ORDER BY period DESC",
            (recipient,),
        )
        return [DigestDelivery(*r) for r in rows]
