"""``/api``, the JSON API's index, and ``/api/openapi.json``, its description (both
generated in ``serve/api.py``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lightnews.serve.api import index
from lightnews.serve.api import openapi as openapi_description
from lightnews.serve.site import Site

__all__ = ["api_index", "openapi"]


def openapi(site: Site, request: Request) -> Response:
    return JSONResponse(openapi_description())


def api_index(site: Site, request: Request) -> Response:
    return JSONResponse(index())
