"""``/api/openapi.json``: the JSON API's description (generated in ``serve/api.py``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lightnews.serve.api import openapi as openapi_description
from lightnews.serve.site import Site

__all__ = ["openapi"]


def openapi(site: Site, request: Request) -> Response:
    return JSONResponse(openapi_description())
