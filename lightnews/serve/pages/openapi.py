"""``/api``, the JSON API's index, and ``/api/openapi.json``, its description (both
generated in ``serve/api.py``)."""

from __future__ import annotations

from functools import cache

from starlette.requests import Request
from starlette.responses import Response

from lightnews.serve.api import index
from lightnews.serve.api import openapi as openapi_description
from lightnews.serve.site import JsonAnswer, Site

__all__ = ["api_index", "openapi"]


@cache
def _description() -> bytes:
    """The description as sent: the same for the life of a process (it is made from the
    routes' types, some 4 ms of CPU each time, and clients and readiness checks poll it)."""
    return bytes(JsonAnswer(openapi_description()).body)


def openapi(site: Site, request: Request) -> Response:
    return Response(_description(), media_type="application/json")


def api_index(site: Site, request: Request) -> Response:
    return JsonAnswer(index())
