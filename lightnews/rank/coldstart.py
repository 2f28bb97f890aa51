"""Rank: where a new reader's feed starts from, before they have saved anything here.

A reader's learned ranker (:mod:`lightnews.rank.learn`) learns from saves. A new
reader has none; the quickest honest start is the library they already keep
elsewhere: :func:`save_library` turns the entries of a reference library export
(:mod:`lightnews.sources.libraries`) into their saves, in a saved list of its
own when asked (an interest of its own to the ranker). A paper named by arXiv id
that the library lacks becomes a stub, fetched by the next refresh or worker
run; one named only by a DOI is saved when a stored paper has that DOI.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lightnews.model import Paper
from lightnews.sources.libraries import LibraryEntry
from lightnews.store import ReaderId, Store

__all__ = ["LibraryImport", "save_library"]


@dataclass(frozen=True, slots=True)
class LibraryImport:
    """What an import of a reference library did."""

    entries: int
    saved: int
    #: Saved papers the library lacked: stubs, fetched by the next refresh.
    new_stubs: int
    #: Entries naming no arXiv paper and no DOI a stored paper has (their keys).
    unmatched: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "saved": self.saved,
            "new_stubs": self.new_stubs,
            "unmatched": list(self.unmatched),
        }


def save_library(
    store: Store,
    reader: ReaderId,
    entries: Sequence[LibraryEntry],
    now: str,
    list_name: str | None = None,
) -> LibraryImport:
    """Save every paper ``entries`` name for ``reader`` (idempotent: re-running saves the
    same papers once), filed in ``list_name`` when given."""
    by_doi = store.papers_by_doi(sorted({e.doi for e in entries if e.doi and not e.arxiv_id}))
    wanted: dict[str, None] = {}
    unmatched = []
    for entry in entries:
        found = entry.arxiv_id or (by_doi.get(entry.doi) if entry.doi else None)
        if found:
            wanted[found] = None
        else:
            unmatched.append(entry.key)
    papers = list(wanted)
    stored = store.papers_by_ids(papers)
    missing = [p for p in papers if p not in stored and store.paper_row_id(p) is None]
    with store.transaction():
        if missing:
            store.save_papers([Paper(p) for p in missing], now)  # stubs, never overwriting
        for arxiv_id in papers:
            store.mark_story(reader, arxiv_id, now, saved=True)
            if list_name:
                store.set_saved_list(reader, arxiv_id, list_name)
    return LibraryImport(len(entries), len(papers), len(missing), tuple(unmatched))
