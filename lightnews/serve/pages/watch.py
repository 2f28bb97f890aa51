"""``POST /watch``: the paper page's Watch button (what happens to it reaches the digest)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.errors import LightnewsError, UsageError
from lightnews.normalize import validate
from lightnews.serve.site import Site, read_form, reader_of

__all__ = ["watch"]


def watch(site: Site, request: Request) -> Response:
    """Watch a paper (or stop): the story page's Watch button."""
    from lightnews.deliver.watch import start_watching, stop_watching
    from lightnews.store.readers import reader_key

    form = read_form(request)
    action = str(form.get("action") or "watch")
    try:
        arxiv_id = validate.paper_id(str(form.get("paper") or "")).base
        site.store.get_paper(arxiv_id)
        if action == "watch":
            start_watching(site.store, reader_key(reader_of(request)), arxiv_id)
        elif action == "unwatch":
            stop_watching(site.store, reader_key(reader_of(request)), arxiv_id)
        else:
            raise UsageError("action must be watch or unwatch")
    except LightnewsError as error:
        return site.failure(request, error)
    return RedirectResponse(f"/paper/{arxiv_id}", status_code=303)
