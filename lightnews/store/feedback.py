"""Store queries behind the learned ranker: what one reader told it, and random papers.

Part of the store (mixed into :class:`~lightnews.store.common.CommonStore`, so
both backends run the same SQL), kept apart because it has one job: keep and
read the few facts :mod:`lightnews.rank.learn` learns from. Two tables of
per-reader state (migrations 0021 on SQLite, 0013 on PostgreSQL):

- ``paper_feedback``: a reader's word on one paper, "not interested" or "more
  like this" (one of the two at a time; taking it back deletes the row);
- ``saved_lists``: the lists a reader files saved stories in; each list is an
  interest of its own to the ranker. A save in no list is in the interest
  ``saved``. Filing a story in a list does not save it: saves stay in
  ``story_state``, and a list's stories that are not saved do not count.

And what was learned from them (migrations 0024 on SQLite, 0016 on PostgreSQL):
``reader_models``, each reader's model as last trained, as JSON, with the
digest of what it learned from (:class:`StoredModel`), so that every process
of the library uses one trained model.

No ranking here: :func:`lightnews.rank.learn.train_reader_model` reads
:meth:`FeedbackQueries.learning_signals` and random papers of the library.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from lightnews.errors import UsageError
from lightnews.store.connection import Queries

__all__ = ["DECISIONS", "FeedbackQueries", "LearningSignals", "StoredModel"]

#: What a reader may say about a paper.
DECISIONS = ("not-interested", "more-like-this")


@dataclass(frozen=True, slots=True)
class LearningSignals:
    """One reader's doings, as paper row ids, for their learned ranker."""

    saved: tuple[tuple[int, str], ...]  # (paper, list name; '' for no list), "more like this" too
    read: tuple[int, ...]  # read and not saved
    not_interested: tuple[int, ...]
    muted: tuple[int, ...]  # papers by scholars the reader muted, newest first


@dataclass(frozen=True, slots=True)
class StoredModel:
    """A reader's model as last trained: the digest of what it learned from, when, and
    the model as JSON (None: that version had nothing it could learn from)."""

    version: str
    trained_at: str
    model: str | None


class FeedbackQueries(Queries):
    """A reader's word on papers, saved lists, and random papers to learn against."""

    def set_paper_feedback(
        self, reader: int, paper_id: int, decision: str | None, now: str
    ) -> None:
        """Say "not interested" or "more like this" about a paper (None takes it back)."""
        if decision is not None and decision not in DECISIONS:
            raise UsageError(f"{decision!r} is not a decision; say one of {', '.join(DECISIONS)}")
        with self.transaction():
            self.serialize(f"feedback:{reader}:{paper_id}")  # deleted, then inserted
            self.db.execute(
                "DELETE FROM paper_feedback WHERE user_id = ? AND paper_id = ?", (reader, paper_id)
            )
            if decision is not None:
                self.db.execute(
                    "INSERT INTO paper_feedback (user_id, paper_id, decision, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (reader, paper_id, decision, now),
                )

    def paper_feedback(self, reader: int) -> dict[int, str]:
        """``paper id -> decision`` of everything the reader said about papers."""
        rows = self.db.execute(
            "SELECT paper_id, decision FROM paper_feedback WHERE user_id = ?", (reader,)
        )
        return {int(r[0]): r[1] for r in rows}

    def set_saved_list(self, reader: int, story_key: str, name: str, filed: bool = True) -> None:
        """File a story in the reader's list ``name`` (or take it out)."""
        name = name.strip()
        if not name:
            raise UsageError("a saved list needs a name")
        with self.transaction():
            if filed:
                self.db.execute(
                    "INSERT INTO saved_lists (user_id, story_key, name) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    (reader, story_key, name),
                )
            else:
                self.db.execute(
                    "DELETE FROM saved_lists WHERE user_id = ? AND story_key = ? AND name = ?",
                    (reader, story_key, name),
                )

    def saved_lists(self, reader: int) -> dict[str, list[str]]:
        """``list name -> story keys`` of the reader's lists."""
        found: dict[str, list[str]] = {}
        for name, key in self.db.execute(
            "SELECT name, story_key FROM saved_lists WHERE user_id = ? ORDER BY name, story_key",
            (reader,),
        ):
            found.setdefault(name, []).append(key)
        return found

    def learning_signals(
        self, reader: int, bar: float = 0.5, limit: int = 2_000
    ) -> LearningSignals:
        """What the reader saved (with its lists), read, hid, and whom they muted."""
        saved = self.db.execute(
            "SELECT p.id, COALESCE(l.name, '') FROM story_state st "
            "JOIN papers p ON p.arxiv_id = st.story_key "
            "LEFT JOIN saved_lists l ON l.user_id = st.user_id AND l.story_key = st.story_key "
            "WHERE st.user_id = ? AND st.saved_at IS NOT NULL "
            "ORDER BY st.saved_at DESC, p.id LIMIT ?",
            (reader, limit),
        ).fetchall()
        read = self.db.execute(
            "SELECT p.id FROM story_state st JOIN papers p ON p.arxiv_id = st.story_key "
            "WHERE st.user_id = ? AND st.read_at IS NOT NULL AND st.saved_at IS NULL "
            "ORDER BY st.read_at DESC, p.id LIMIT ?",
            (reader, limit),
        ).fetchall()
        feedback = self.paper_feedback(reader)
        muted = self.db.execute(
            "SELECT DISTINCT a.paper_id FROM mutes m JOIN authorships a "
            "ON CAST(a.scholar_id AS TEXT) = m.value "
            "WHERE m.user_id = ? AND m.kind = 'scholar' AND a.confidence >= ? "
            "ORDER BY a.paper_id DESC LIMIT ?",
            (reader, bar, limit),
        ).fetchall()
        liked = [(p, "") for p, d in sorted(feedback.items()) if d == "more-like-this"]
        return LearningSignals(
            saved=tuple((int(r[0]), r[1]) for r in saved) + tuple(liked),
            read=tuple(int(r[0]) for r in read),
            not_interested=tuple(p for p, d in sorted(feedback.items()) if d == "not-interested"),
            muted=tuple(int(r[0]) for r in muted),
        )

    def random_paper_ids(self, count: int, model: str, rng: random.Random) -> list[int]:
        """About ``count`` distinct papers of the library drawn at random among those with a
        ``model`` vector (row ids drawn uniformly: no scan of the table)."""
        row = self.db.execute("SELECT min(id), max(id) FROM papers").fetchone()
        if row[0] is None or count <= 0:
            return []
        low, high = int(row[0]), int(row[1])
        found: list[int] = []
        seen: set[int] = set()
        for _ in range(4):
            want = min(high - low + 1, 2 * (count - len(found)))
            draw = [i for i in rng.sample(range(low, high + 1), want) if i not in seen]
            seen.update(draw)
            rows = self.db.execute(
                f"SELECT paper_id FROM paper_vectors WHERE model = ? AND "
                f"{self.sql.in_list('paper_id')}",
                (model, self.sql.list_param(draw)),
            )
            found += sorted(int(r[0]) for r in rows)
            if len(found) >= count or len(seen) > high - low:
                break
        rng.shuffle(found)
        return found[:count]

    def save_reader_model(
        self, reader: int, version: str, trained_at: str, model: str | None
    ) -> None:
        """Keep the reader's newly trained model (JSON), in place of the one before,
        unless the one stored began training later (``trained_at``, ISO 8601 in UTC to
        the microsecond): two processes training the same reader at once, the one that
        read the older data and ended last does not replace the newer model."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO reader_models (user_id, version, trained_at, model) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET "
                "version = excluded.version, trained_at = excluded.trained_at, "
                "model = excluded.model "
                "WHERE reader_models.trained_at < excluded.trained_at",
                (reader, version, trained_at, model),
            )

    def reader_model_version(self, reader: int) -> tuple[str, str] | None:
        """The stored model's version and training time (None: none stored): one small
        row, read at every feed request to tell whether the model held in memory is it."""
        row = self.db.execute(
            "SELECT version, trained_at FROM reader_models WHERE user_id = ?", (reader,)
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def reader_model(self, reader: int) -> StoredModel | None:
        """The reader's stored model (None: none was ever trained)."""
        row = self.db.execute(
            "SELECT version, trained_at, model FROM reader_models WHERE user_id = ?", (reader,)
        ).fetchone()
        return None if row is None else StoredModel(str(row[0]), str(row[1]), row[2])
