"""Notes pages: a reading group's or a reviewer's notes, by section, each linked to its papers.

``/notes`` lists every notes page among the sources (the kinds whose traits
say ``note_pages``); ``/notes/ID`` shows one, with "N papers reviewed".
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from lightnews.errors import LightnewsError
from lightnews.normalize.validate import whole_number
from lightnews.serve.site import Site
from lightnews.sources import kinds_where
from lightnews.store.views import ItemView

__all__ = ["notes_index", "notes_page"]


def notes_index(site: Site, request: Request) -> Response:
    """Every notes page among the sources."""
    kinds = set(kinds_where(lambda t: t.note_pages))
    rows = [r for r in site.store.list_sources() if r.kind in kinds]
    return site.respond(
        request,
        lambda: [
            {"id": r.id, "title": r.title or r.address, "url": r.address, "page": f"/notes/{r.id}"}
            for r in rows
        ],
        lambda: site.page("notes_index.html", sources=rows, title="Notes"),
    )


def notes_page(site: Site, request: Request) -> Response:
    """A notes page: "N papers reviewed", notes by section, each linked to its papers."""
    try:
        source = site.store.get_source(
            whole_number(request.path_params["source_id"], "a source id")
        )
    except LightnewsError as error:
        return site.failure(request, error)
    entries = site.store.source_items(source.id, "note")
    sections: dict[str, list[ItemView]] = {}
    for entry in entries:
        sections.setdefault((entry.note and entry.note.section) or "Notes", []).append(entry)
    reviewed = next(
        (e.note.papers_reviewed for e in entries if e.note and e.note.papers_reviewed), None
    )
    title = source.title or source.address
    data = {"title": title, "papers_reviewed": reviewed, "sections": sections}
    return site.respond(
        request,
        lambda: {
            "title": title,
            "papers_reviewed": reviewed,
            "sections": {name: [e.to_json() for e in shown] for name, shown in sections.items()},
        },
        lambda: site.page("notes.html", notes=data, title=title),
    )
