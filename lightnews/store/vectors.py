"""Store: the sentence vectors of papers (reads and writes for ``lightnews.embed``).

Vectors are kept in the database, so they are backed up, exported and
migrated with everything else; the vector index beside the database is
derived from them and can always be rebuilt. Vectors are bytes here: the
store does not need numpy.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from lightnews.store.connection import Queries

__all__ = ["VectorQueries"]


class VectorQueries(Queries):
    """Which papers need vectors, saving them, and reading them back in order.

    Finding the nearest vectors is each backend's own (``nearest_vectors``:
    pgvector's index in PostgreSQL, a FAISS index beside an SQLite file).
    """

    def unembedded_papers(self, limit: int) -> list[tuple[int, str, str]]:
        """``(paper id, title, abstract)`` of queued papers (new or changed), in id order."""
        rows = self.db.execute(
            "SELECT p.id, p.title, p.abstract FROM embed_queue q "
            "JOIN papers p ON p.id = q.paper_id ORDER BY q.paper_id LIMIT ?",
            (limit,),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def count_unembedded(self, cap: int | None = None) -> int:
        """Papers waiting for a vector (counting stops past ``cap``: a search asks often)."""
        if cap is None:
            return int(self.db.execute("SELECT count(*) FROM embed_queue").fetchone()[0])
        row = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM embed_queue LIMIT ?)", (cap + 1,)
        ).fetchone()
        return int(row[0])

    def requeue_all_papers(self) -> None:
        """Queue every paper again (the library switched encoders)."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO embed_queue (paper_id) "
                "SELECT id FROM papers WHERE title != '' ON CONFLICT DO NOTHING"
            )

    def save_vectors(self, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
        """Store ``(paper id, vector bytes)`` pairs and take them off the queue.

        A paper's older vector is replaced.
        """
        with self.transaction():
            # Deleted, then inserted: two embedders of one encoder take turns.
            self.serialize(f"vectors:{model}")
            self.db.executemany(
                "DELETE FROM embed_queue WHERE paper_id = ?", [(paper_id,) for paper_id, _ in rows]
            )
            # Delete and insert (not update): the new row gets a newer id, so
            # an index that saw the old vector learns of the new one.
            self.db.executemany(
                "DELETE FROM paper_vectors WHERE paper_id = ? AND model = ?",
                [(paper_id, model) for paper_id, _ in rows],
            )
            # Each vector records the version whose text it was made from.
            self.db.executemany(
                "INSERT INTO paper_vectors (paper_id, model, vector, version) "
                f"VALUES (?, ?, {self.sql.vector_mark()}, "
                "(SELECT latest_version FROM papers WHERE id = ?))",
                [(paper_id, model, self.sql.vector_in(blob), paper_id) for paper_id, blob in rows],
            )

    def vectors_after(
        self, model: str, after: int, chunk: int = 50_000
    ) -> Iterator[list[tuple[int, int, bytes]]]:
        """``(row id, paper id, vector)`` written after row ``after``, in chunks, in order."""
        while True:
            rows = self.db.execute(
                f"SELECT id, paper_id, {self.sql.vector_out('vector')} FROM paper_vectors "
                "WHERE model = ? AND id > ? "
                "ORDER BY id LIMIT ?",
                (model, after, chunk),
            ).fetchall()
            if not rows:
                return
            yield [(int(r[0]), int(r[1]), self.sql.vector_bytes(r[2])) for r in rows]
            after = int(rows[-1][0])

    def last_vector_row(self) -> int:
        """The newest vector row id: an index that has seen it is up to date."""
        row = self.db.execute("SELECT max(id) FROM paper_vectors").fetchone()
        return int(row[0] or 0)

    def has_vectors(self, model: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM paper_vectors WHERE model = ? LIMIT 1", (model,)
        ).fetchone()
        return row is not None

    def vector_count(self, model: str) -> int:
        row = self.db.execute(
            "SELECT count(*) FROM paper_vectors WHERE model = ?", (model,)
        ).fetchone()
        return int(row[0])

    def vector_versions(self, arxiv_id: str) -> dict[str, int | None]:
        """The paper version each encoder's vector of the paper was made from."""
        rows = self.db.execute(
            "SELECT v.model, v.version FROM paper_vectors v JOIN papers p ON p.id = v.paper_id "
            "WHERE p.arxiv_id = ?",
            (arxiv_id,),
        )
        return {r[0]: r[1] for r in rows}

    def paper_vector(self, arxiv_id: str, model: str) -> tuple[int, bytes] | None:
        """The paper's row id and vector from ``model``, if it has one."""
        row = self.db.execute(
            f"SELECT p.id, {self.sql.vector_out('v.vector')} FROM papers p "
            "JOIN paper_vectors v ON v.paper_id = p.id WHERE p.arxiv_id = ? AND v.model = ?",
            (arxiv_id, model),
        ).fetchone()
        return (int(row[0]), self.sql.vector_bytes(row[1])) if row else None

    def vectors_by_arxiv_id(
        self, arxiv_ids: Sequence[str], model: str
    ) -> dict[str, tuple[int, bytes]]:
        """``arxiv id -> (paper id, vector)`` for those of the papers that have one."""
        rows = self.db.execute(
            f"SELECT p.arxiv_id, p.id, {self.sql.vector_out('v.vector')} FROM papers p "
            "JOIN paper_vectors v "
            "ON v.paper_id = p.id WHERE v.model = ? "
            f"AND {self.sql.in_list('p.arxiv_id')}",
            (model, self.sql.list_param(arxiv_ids)),
        )
        return {r[0]: (int(r[1]), self.sql.vector_bytes(r[2])) for r in rows}

    def interest_version(self, reader: int) -> tuple[Any, ...]:
        """Changes whenever the papers the reader cares about may have (cheap to ask):
        ``(library, own)``, what any writer changes (newest authorship and vector)
        and what only the reader does (follows, saves)."""
        row = self.db.execute(
            "SELECT (SELECT max(paper_id) FROM authorships), "
            f"(SELECT {self.sql.concat('scholar_id', ',')} FROM follows WHERE user_id = ?), "
            "(SELECT max(saved_at) FROM story_state WHERE user_id = ?), "
            "(SELECT max(id) FROM paper_vectors)",
            (reader, reader),
        ).fetchone()
        return (row[0], row[3]), (row[1], row[2])

    def interest_vectors(
        self, reader: int, model: str, bar: float, limit: int = 2000
    ) -> list[tuple[int, int | None, bytes]]:
        """``(paper id, scholar id, vector)`` of the papers that say what the user cares about.

        Papers attributed to followed scholars (at or above ``bar``; the most
        recently stored first), then saved papers (scholar id None). Only
        small rows are read (ids and vectors, not the papers themselves), in a
        fixed join order (the planner otherwise scanned every vector to find
        no saved paper): the feed asks on every request.
        """
        authored = self.db.execute(
            "WITH followed AS MATERIALIZED "
            "(SELECT scholar_id AS id FROM follows WHERE user_id = ?) "
            f"SELECT a.paper_id, a.scholar_id, {self.sql.vector_out('v.vector')} FROM followed f "
            f"{self.sql.join_in_order} authorships a ON a.scholar_id = f.id "
            f"{self.sql.join_in_order} paper_vectors v ON v.paper_id = a.paper_id AND v.model = ? "
            "WHERE a.confidence >= ? ORDER BY a.paper_id DESC, a.position LIMIT ?",
            (reader, model, bar, limit),
        ).fetchall()
        saved = self.db.execute(
            f"SELECT p.id, {self.sql.vector_out('v.vector')} FROM story_state st "
            f"{self.sql.join_in_order} papers p ON p.arxiv_id = st.story_key "
            f"{self.sql.join_in_order} paper_vectors v ON v.paper_id = p.id AND v.model = ? "
            "WHERE st.user_id = ? AND st.saved_at IS NOT NULL ORDER BY st.saved_at DESC LIMIT ?",
            (model, reader, limit),
        ).fetchall()
        return [(int(r[0]), int(r[1]), self.sql.vector_bytes(r[2])) for r in authored] + [
            (int(r[0]), None, self.sql.vector_bytes(r[1])) for r in saved
        ]

    def vectors_of(self, paper_ids: Sequence[int], model: str) -> list[tuple[int, bytes]]:
        rows = self.db.execute(
            f"SELECT paper_id, {self.sql.vector_out('vector')} FROM paper_vectors WHERE model = ? "
            f"AND {self.sql.in_list('paper_id')}",
            (model, self.sql.list_param(int(i) for i in paper_ids)),
        )
        return [(int(r[0]), self.sql.vector_bytes(r[1])) for r in rows]

    def other_models(self, model: str) -> bool:
        """True when some vector comes from another encoder than ``model``."""
        row = self.db.execute(
            "SELECT 1 FROM paper_vectors WHERE model != ? LIMIT 1", (model,)
        ).fetchone()
        return row is not None

    def drop_vectors(self, keep_model: str) -> int:
        """Forget vectors of every other encoder (after the library switched encoders)."""
        with self.transaction():
            cursor = self.db.execute("DELETE FROM paper_vectors WHERE model != ?", (keep_model,))
        return cursor.rowcount
