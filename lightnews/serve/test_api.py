"""The API keeps its contract: schemathesis, all checks, against the demo's own description.

The description is generated from typed route declarations (serve/api.py);
these tests run the real server on the demo library (both backends) and the
``schemathesis`` command against it, as a client would, with every check on
every route: a search whose query asks too much of the index (short prefixes,
many terms) is narrowed and says so, not refused, so every query the
description allows answers.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route

from lightnews import __version__
from lightnews.serve.api import ROUTES, openapi
from lightnews.settings import Settings

ST = shutil.which("st", path=str(Path(sys.executable).parent)) or shutil.which("st")


def test_the_description_covers_every_api_route_and_its_errors() -> None:
    doc = openapi()
    assert doc["info"]["version"] == __version__
    described = {r.path for r in ROUTES}
    assert set(doc["paths"]) == described
    for path, item in doc["paths"].items():
        responses = item["get"]["responses"]
        assert "200" in responses and "503" in responses, path
        if item["get"]["parameters"]:
            assert "400" in responses, path  # what it takes can be wrong
        for param in item["get"]["parameters"]:
            assert param["description"] and param["schema"].get("type"), (path, param)
    page = next(p for p in doc["paths"]["/api/search"]["get"]["parameters"] if p["name"] == "page")
    assert page["schema"] == {"type": "integer", "minimum": 1, "maximum": 100_000}


def test_every_api_route_of_the_app_is_described(tmp_path: Path) -> None:
    from lightnews.serve.app import create_app

    app = create_app(tmp_path / "empty.db", Settings(environ={}))
    paths = {
        r.path.replace(":path", "") for r in app.routes
        if isinstance(r, Route) and r.path.startswith("/api/") and "GET" in (r.methods or ())
    }  # fmt: skip
    assert paths - {"/api/openapi.json"} == {r.path for r in ROUTES}


@pytest.fixture(scope="module")
def api_url(demo_library: str, serving: Any) -> Iterator[str]:
    from lightnews.serve.app import create_app

    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with serving(create_app(demo_library, settings)) as url:
        yield f"{url}/api/openapi.json"


def _schemathesis(url: str, cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [str(ST), "run", url, "--checks", "all", "--max-examples", "25", "--seed", "1",
               "--no-color", *options]  # fmt: skip
    # In a temporary folder: schemathesis keeps its cache of failures where it runs.
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False,
                          cwd=cwd)  # fmt: skip


@pytest.mark.skipif(ST is None, reason="schemathesis is not installed (a dev dependency)")
def test_schemathesis_all_checks_pass(api_url: str, tmp_path: Path) -> None:
    every = _schemathesis(api_url, tmp_path)
    assert every.returncode == 0, every.stdout[-4000:]
    routes = len(openapi()["paths"])
    assert re.search(rf"Operations:\s+{routes} selected / {routes} total", every.stdout)
    assert re.search(rf"Tested:\s+{routes}\b", every.stdout), every.stdout[-4000:]
    assert "repeatedly returned 404" not in every.stdout  # the examples reach real records


def test_the_day_the_description_allows_is_the_day_the_handler_takes() -> None:
    """Issue 31: ``/api/daily/0000-01-01`` matched the description and was refused."""
    from lightnews.errors import UsageError
    from lightnews.normalize.validate import day

    (param,) = openapi()["paths"]["/api/daily/{day}"]["get"]["parameters"]
    pattern = param["schema"]["pattern"]

    def taken(text: str) -> bool:
        try:
            day(text)
        except UsageError:
            return False
        return True

    for text in ("0000-01-01", "0000-12-28", "0001-01-01", "0010-02-28", "0999-11-09",
                 "2025-11-27", "9999-12-28"):  # fmt: skip
        assert bool(re.search(pattern, text)) == taken(text), text
