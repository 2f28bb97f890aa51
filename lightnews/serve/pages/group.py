"""The group: stories saved by two or more members who share, with who saved them.

Exportable as a journal-club agenda: ``?format=md`` (Markdown) or
``?format=bibtex``; ``/api/group`` answers JSON.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from lightnews.deliver.export import bibtex
from lightnews.errors import NotFound
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.serve.security import visitor_of
from lightnews.serve.site import Site
from lightnews.store.readers import GroupSave
from lightnews.store.views import PaperPage

__all__ = ["group"]


def group(site: Site, request: Request) -> Response:
    visitor = visitor_of(request)
    saves = site.store.group_saves()
    papers: dict[str, PaperPage] = {}
    for entry in saves:
        if parse_arxiv_id(entry.story_key):
            try:
                papers[entry.story_key] = site.store.get_paper(entry.story_key)
            except NotFound:
                continue
    kind = request.query_params.get("format")
    if kind == "bibtex":
        return Response(bibtex(papers.values()), media_type="application/x-bibtex")
    if kind == "md":
        return PlainTextResponse(_agenda(saves, papers), media_type="text/markdown")
    return site.respond(
        request,
        lambda: [
            {
                "story": g.story_key,
                "members": list(g.members),
                "first_saved": g.first_saved,
                "title": papers[g.story_key].title if g.story_key in papers else None,
            }
            for g in saves
        ],
        lambda: site.page(
            "group.html",
            title="The group",
            saves=saves,
            papers=papers,
            shares=visitor.user.shares if visitor.user else None,
        ),
    )


def _agenda(saves: Sequence[GroupSave], papers: dict[str, PaperPage]) -> str:
    """The group's picks as a journal-club agenda in Markdown."""
    lines = ["# Journal club agenda", ""]
    if not saves:
        lines.append("No story is saved by two or more members yet.")
    for n, entry in enumerate(saves, start=1):
        paper = papers.get(entry.story_key)
        title = (paper.title if paper else None) or entry.story_key
        url = f"https://arxiv.org/abs/{entry.story_key}" if paper else ""
        lines.append(f"{n}. **[{title}]({url})**" if url else f"{n}. **{title}**")
        lines.append(f"   saved by {', '.join(entry.members)}")
    return "\n".join(lines) + "\n"
