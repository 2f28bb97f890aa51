"""Paper merge rules without a database: what any backend keeps of two records."""

from __future__ import annotations

from typing import Any

from lightnews.model import Author, Paper, Version
from lightnews.store.merge import (
    PAPER_COLUMNS,
    is_stub,
    latest_by_id,
    merged_values,
    prepare_paper,
)


def _paper(**changes: Any) -> Paper:
    fields: dict[str, Any] = {
        "title": "Sparse Ring Attention",
        "abstract": "We route blocks of tokens.",
        "authors": [Author("Mara Lindqvist")],
        "categories": ["cs.LG"],
        "published": "2025-10-02T17:59:48Z",
        "updated": "2025-10-02T17:59:48Z",
        "versions": [Version(1, "2025-10-02T17:59:48Z", "1mb")],
    }
    fields.update(changes)
    return Paper("2510.02375", **fields)


def _row(paper: Paper) -> dict[str, Any]:
    values, _ = prepare_paper(paper)
    return dict(zip(PAPER_COLUMNS, values, strict=True))


def test_newer_wins_gaps_fill_versions_unite() -> None:
    stored = _row(_paper(doi="10.1/x"))
    newer, _ = prepare_paper(
        _paper(
            title="Sparse Ring Attention (v2)",
            updated="2025-11-01T00:00:00Z",
            published="2025-10-05T00:00:00Z",
            versions=[Version(2, "2025-11-01T00:00:00Z")],
        )
    )
    merged = merged_values(newer, stored)
    assert merged is not None
    row = dict(zip(PAPER_COLUMNS, merged, strict=True))
    assert row["title"] == "Sparse Ring Attention (v2)" and row["doi"] == "10.1/x"
    assert row["latest_version"] == 2 and row["published"] == "2025-10-02T17:59:48Z"
    assert row["versions"] == '[[1,"2025-10-02T17:59:48Z","1mb"],[2,"2025-11-01T00:00:00Z",null]]'
    # The older record again adds nothing.
    assert merged_values(prepare_paper(_paper())[0], row) is None


def test_a_stub_is_prepared_but_never_wins() -> None:
    stub, _ = prepare_paper(Paper("2510.02375"))
    assert is_stub(stub) and not is_stub(prepare_paper(_paper())[0])
    kept = latest_by_id(
        [prepare_paper(_paper(updated="2025-12-01T00:00:00Z")), prepare_paper(_paper())]
    )
    assert kept["2510.02375"][0][PAPER_COLUMNS.index("updated")] == "2025-12-01T00:00:00Z"
