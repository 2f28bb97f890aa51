"""Cited papers looked up online: "Surname: short title" references the library lacks.

An item that names papers by reference (a notes page, a post) may name papers
not stored yet. They are asked of arXiv by surname and title words, in
batches, through the shared polite client; what arXiv answers is stored, and
the items are linked again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from lightnews.errors import FetchError, ParseError
from lightnews.ingest.report import RunReport
from lightnews.link import link_titles
from lightnews.link.attribution import attribute_new
from lightnews.model import (
    Item,
    Reference,
    SourceState,
)
from lightnews.normalize.times import iso, utc_now
from lightnews.settings import Settings
from lightnews.sources.arxiv_api import ArxivApiSource
from lightnews.sources.http import HttpClient
from lightnews.store import SourceRow, Store

__all__ = [
    "MAX_TITLE_LOOKUPS",
    "TITLE_LOOKUP_BATCH",
    "fetch_cited_papers",
    "lookup_titles_online",
]


MAX_TITLE_LOOKUPS = 20

#: References asked of arXiv in one query (joined with OR).
TITLE_LOOKUP_BATCH = 5


def lookup_titles_online(
    store: Store,
    settings: Settings,
    client: HttpClient,
    row: SourceRow,
    report: RunReport,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> int:
    """Ask arXiv for papers cited as "Surname: short title" that are not stored yet.

    See :func:`fetch_cited_papers`; the items are then linked again and those
    that gained a link are saved. Failures become warnings: the references
    are tried again on a later refresh.
    """
    linked = {id(item): {m.arxiv_id for m in item.mentions} for item in report.unresolved}
    report.saved.warnings += fetch_cited_papers(store, settings, client, report.unresolved, clock)
    link_titles(report.unresolved, store, bar=settings.link_bar, semantic=settings.semantic)
    found = 0
    for item in report.unresolved:
        if {m.arxiv_id for m in item.mentions} - linked[id(item)]:
            found += 1
            report.saved.add(store.save_items(row.id, [item], iso(clock())))
    return found


def _reference_query(reference: Reference) -> str | None:
    """An arXiv query for one reference: its surname and its title's longer words."""
    words = re.findall(r"[A-Za-z0-9]{3,}", reference.title)[:6]
    parts = reference.surname.split()
    surname = re.sub(r"[^A-Za-z-]", "", parts[-1]) if parts else ""
    if len(words) < 2 or not surname:
        return None
    return "(" + " AND ".join([f"au:{surname}", *(f"ti:{w}" for w in words)]) + ")"


def fetch_cited_papers(
    store: Store,
    settings: Settings,
    client: HttpClient,
    items: list[Item],
    clock: Callable[[], datetime] = utc_now,
) -> list[str]:
    """Store from arXiv the papers that items' unmatched references may name; warnings back.

    References are asked for in batches of ``TITLE_LOOKUP_BATCH`` (one API
    query joining them with OR), through the shared polite client, at most
    ``MAX_TITLE_LOOKUPS`` references per call.
    """
    queries: list[str] = []
    for item in items:
        for reference in item.references:
            query = _reference_query(reference)
            if query and query not in queries and len(queries) < MAX_TITLE_LOOKUPS:
                queries.append(query)
    warnings: list[str] = []
    for start in range(0, len(queries), TITLE_LOOKUP_BATCH):
        chunk = queries[start : start + TITLE_LOOKUP_BATCH]
        source = ArxivApiSource(" OR ".join(chunk), {}, settings)
        request = source.first_request(SourceState())
        request.params["max_results"] = 10 * len(chunk)
        try:
            response = client.get(request.url, params=request.params)
            batch = source.read(response.body, SourceState())
        except (FetchError, ParseError) as error:
            warnings.append(f"title lookup for {len(chunk)} references: {error}")
            break
        attribute_new(store, store.save_papers(batch.papers, iso(clock())).name_keys)
    return warnings
