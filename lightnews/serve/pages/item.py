"""An item's page: an article, post or note with the papers it names (``/item/ID``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from lightnews.errors import LightnewsError
from lightnews.normalize.validate import whole_number
from lightnews.serve.site import Site

__all__ = ["item"]


def item(site: Site, request: Request) -> Response:
    """An article, post or note with the papers it names (seed: a lab's blog post)."""
    try:
        data = site.store.get_item(whole_number(request.path_params["item_id"], "an item id"))
    except LightnewsError as error:
        return site.failure(request, error)
    return site.respond(
        request, data.to_json, lambda: site.page("item.html", item=data, title=data.title or "Item")
    )
