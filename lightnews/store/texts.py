"""Store: papers' words in id order, for the word index beside the database.

The word index (``lightnews.embed.lexical``) is built from every paper's
title and abstract and then kept current from what is new: papers stored
after it was built (a higher row id) and papers whose text changed (their
vector was written again: a changed title or abstract re-queues a paper for
embedding, so a vector row newer than the index names it). No table of its
own: the index is derived data, like the vector index.
"""

from __future__ import annotations

from collections.abc import Sequence

from lightnews.store.connection import Queries

__all__ = ["TextQueries"]


class TextQueries(Queries):
    """Titles and abstracts by row id, and the marks that tell what is new."""

    def paper_texts_after(self, after: int, limit: int) -> list[tuple[int, str, str]]:
        """``(paper id, title, abstract)`` of titled papers with a row id above ``after``."""
        rows = self.db.execute(
            "SELECT id, title, abstract FROM papers WHERE id > ? AND title != '' "
            "ORDER BY id LIMIT ?",
            (after, limit),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def paper_texts_of(self, paper_ids: Sequence[int]) -> list[tuple[int, str, str]]:
        """``(paper id, title, abstract)`` of these papers (those still titled)."""
        rows = self.db.execute(
            "SELECT id, title, abstract FROM papers WHERE title != '' "
            f"AND {self.sql.in_list('id')} ORDER BY id",
            (self.sql.list_param(int(i) for i in paper_ids),),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def revised_papers(self, after_vector_row: int, up_to_paper: int) -> list[int]:
        """Papers up to row ``up_to_paper`` re-embedded after vector row ``after_vector_row``.

        Their title or abstract changed since (or they were stubs that got
        their metadata): the word index must read them again.
        """
        rows = self.db.execute(
            "SELECT DISTINCT paper_id FROM paper_vectors WHERE id > ? AND paper_id <= ?",
            (after_vector_row, up_to_paper),
        )
        return [int(r[0]) for r in rows]

    def text_marks(self) -> tuple[int, int]:
        """``(newest paper row id, newest vector row id)``: cheap, asked before every use."""
        row = self.db.execute(
            "SELECT (SELECT max(id) FROM papers), (SELECT max(id) FROM paper_vectors)"
        ).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def paper_row_id(self, arxiv_id: str) -> int | None:
        """The row id of a stored paper (its id in the word and vector indexes)."""
        row = self.db.execute("SELECT id FROM papers WHERE arxiv_id = ?", (arxiv_id,)).fetchone()
        return int(row[0]) if row else None

    def paper_row_ids(self, arxiv_ids: Sequence[str]) -> dict[str, int]:
        """Row ids of stored papers by arXiv id (those not stored are left out)."""
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            f"SELECT arxiv_id, id FROM papers WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(list(arxiv_ids)),),
        )
        return {r[0]: int(r[1]) for r in rows}
