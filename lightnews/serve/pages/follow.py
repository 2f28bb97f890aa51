"""``POST /follow``: the feed page's follow form (a Bluesky handle, an arXiv author, an ORCID iD).

Following is the reader's own. Adding what the instance fetches (a source for
a new account or author) is an admin's, or every reader's with
``readers_add_sources``; otherwise the reader follows what is already fetched
and the scholar's page says what is not.

A suggestion whose account is a scholar already known (an arXiv author of that
name) sends that scholar too (``scholar``): the handle is added to them rather
than to a second scholar named "@handle". The scholar's page then says when the
first fetch comes (:func:`~lightnews.ingest.follow.first_fetch`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.errors import LightnewsError, UsageError
from lightnews.normalize import validate
from lightnews.normalize.times import now_iso
from lightnews.normalize.validate import whole_number
from lightnews.serve.pages.feed import home
from lightnews.serve.security import visitor_of
from lightnews.serve.site import Site, read_form, reader_of

__all__ = ["follow"]


def follow(site: Site, request: Request) -> Response:
    """Follow a scholar for this reader (see the module's docstring for who adds sources)."""
    from lightnews.ingest.follow import follow_fetched, follow_scholar

    form = read_form(request)
    typed = {
        name: str(form.get(name) or "").strip() for name in ("handle", "arxiv_author", "orcid")
    }
    try:
        if not any(typed.values()):
            raise UsageError("give a Bluesky handle or an arXiv author's name to follow")
        handle = typed["handle"] and validate.bluesky_handle(
            typed["handle"], by_name="the arXiv author box:"
        )
        author = typed["arxiv_author"] and validate.arxiv_author(typed["arxiv_author"])
        orcid = typed["orcid"] and validate.orcid(typed["orcid"])
        onto = str(form.get("scholar") or "").strip()
        known = whole_number(onto, "scholar") if onto else None
        if known is not None:
            site.store.get_scholar(known)  # NotFound when there is none
        if visitor_of(request).admin or site.current_settings().readers_add_sources:
            scholar_id = follow_scholar(
                site.store,
                reader_of(request),
                now_iso(),
                handle=handle or None,
                arxiv_author=author or None,
                orcid=orcid or None,
                scholar_id=known,
            )
        else:
            followed, unfetched = follow_fetched(
                site.store,
                reader_of(request),
                now_iso(),
                handle=handle or None,
                arxiv_author=author or None,
                orcid=orcid or None,
                scholar_id=known,
            )
            scholar_id = followed[0]
            if unfetched:  # followed for what the library holds; the page says the rest
                return RedirectResponse(f"/scholar/{scholar_id}?not_fetched=1", status_code=303)
    except UsageError as error:  # the feed again, the form as typed, what is wrong
        return home(site, request, 400, error=str(error), **typed)
    except LightnewsError as error:
        return site.failure(request, error)
    return RedirectResponse(f"/scholar/{scholar_id}", status_code=303)
