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
from lightnews.serve.api import ROUTES, WRITES, index, openapi
from lightnews.settings import Settings

ST = shutil.which("st", path=str(Path(sys.executable).parent)) or shutil.which("st")


def test_the_description_covers_every_api_route_and_its_errors() -> None:
    doc = openapi()
    assert doc["info"]["version"] == __version__
    described = {r.path for r in ROUTES}
    assert set(doc["paths"]) == described | {w.path for w in WRITES}
    for path, item in doc["paths"].items():
        if "get" not in item:
            continue
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
        r.path.replace(":path", "")
        for r in app.routes
        if isinstance(r, Route) and r.path.startswith("/api") and "GET" in (r.methods or ())
    }
    assert paths - {"/api/openapi.json"} == {r.path for r in ROUTES}
    writes = {
        r.path
        for r in app.routes
        if isinstance(r, Route) and r.path.startswith("/api") and "POST" in (r.methods or ())
    }
    assert writes == {w.path for w in WRITES} == {"/api/mark"}


def test_writes_are_described_with_their_body_and_auth() -> None:
    """Before, the description listed reads only: ``POST /api/mark`` was found by reading
    the source, and nothing said what it takes or who may send it."""
    doc = openapi()
    post = doc["paths"]["/api/mark"]["post"]
    shapes = post["requestBody"]["content"]["application/json"]["schema"]["oneOf"]
    story, feedback, mute, source = shapes
    assert post["requestBody"]["required"]
    assert story["required"] == feedback["required"] == ["action", "story"]
    assert mute["required"] == ["action", "value"] and source["required"] == [
        "action",
        "kind",
        "value",
    ]
    assert {"save", "read"} <= set(story["properties"]["action"]["enum"])
    assert "not-interested" in feedback["properties"]["action"]["enum"]
    assert "item:" in story["properties"]["story"]["pattern"]
    assert "item:" not in feedback["properties"]["story"]["pattern"]  # papers only
    assert set(mute["properties"]["action"]["enum"]) == {"mute", "unmute"}
    assert story["properties"]["story"]["examples"] == ["2511.18342"]
    assert post["security"] == [{"token": []}, {"form": []}]
    schemes = doc["components"]["securitySchemes"]
    assert schemes["token"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schemes["token"]["description"],
    }
    assert "tokens create" in schemes["token"]["description"]
    assert schemes["form"]["in"] == "header" and schemes["form"]["name"] == "X-CSRF-Token"
    assert {"200", "400", "401", "403", "404", "503"} <= set(post["responses"])
    done = post["responses"]["200"]["content"]["application/json"]["schema"]
    assert done["required"] == ["done", "story", "kind", "value"]


def test_api_is_an_index_of_every_address(tmp_path: Path) -> None:
    """Before, ``/api`` was a 404."""
    from starlette.testclient import TestClient

    from lightnews.serve.app import create_app

    app = create_app(tmp_path / "empty.db", Settings(environ={}))
    with TestClient(app, base_url="http://localhost") as client:
        answer = client.get("/api")
        assert answer.status_code == 200 and answer.json() == index()
        listed = {(e["method"], e["path"]) for e in answer.json()["endpoints"]}
        assert ("POST", "/api/mark") in listed and ("GET", "/api/search") in listed
        assert ("GET", "/api/openapi.json") in listed and answer.json()["openapi"] == (
            "/api/openapi.json"
        )
        described = set(client.get(answer.json()["openapi"]).json()["paths"])
        assert {path for _, path in listed} - {"/api/openapi.json"} == described
        assert client.get("/api/", follow_redirects=True).json() == index()


@pytest.fixture(scope="module")
def api_url(demo_library: str, serving: Any) -> Iterator[str]:
    from lightnews.serve.app import create_app

    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with serving(create_app(demo_library, settings)) as url:
        yield f"{url}/api/openapi.json"


def _schemathesis(
    url: str, cwd: Path, *options: str, method: str = "GET"
) -> subprocess.CompletedProcess[str]:
    # GET on the demo library the module's tests share; the writes (which change the
    # library) on a library of their own (test_schemathesis_all_checks_pass_on_the_writes).
    command = [
        str(ST),
        "run",
        url,
        "--checks",
        "all",
        "--max-examples",
        "25",
        "--seed",
        "1",
        "--no-color",
        *(() if options else ("--include-method", method)),
        *options,
    ]
    # In a temporary folder: schemathesis keeps its cache of failures where it runs.
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, check=False, cwd=cwd
    )


@pytest.mark.skipif(ST is None, reason="schemathesis is not installed (a dev dependency)")
def test_schemathesis_all_checks_pass(api_url: str, tmp_path: Path) -> None:
    every = _schemathesis(api_url, tmp_path)
    assert every.returncode == 0, every.stdout[-4000:]
    routes = len(ROUTES)
    total = routes + len(WRITES)
    assert re.search(rf"Operations:\s+{routes} selected / {total} total", every.stdout)
    assert re.search(rf"Tested:\s+{routes}\b", every.stdout), every.stdout[-4000:]
    assert "repeatedly returned 404" not in every.stdout  # the examples reach real records


@pytest.mark.skipif(ST is None, reason="schemathesis is not installed (a dev dependency)")
def test_schemathesis_all_checks_pass_on_the_writes(
    fresh_demo: str, serving: Any, tmp_path: Path
) -> None:
    """The writes, fuzzed with every check on a library of this test's own (they change
    it), by a client holding an API token, as a script does."""
    from lightnews.serve.app import create_app
    from lightnews.store import open_store
    from lightnews.store.secrets import digest, hash_password, new_token

    token = new_token()
    with open_store(fresh_demo) as store:
        me = store.add_user("me", hash_password("a long password"), admin=False, now="2026-12-06")
        store.create_token(me.id, "fuzz", digest(token), "2026-12-06")
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with serving(create_app(fresh_demo, settings)) as url:
        writes = _schemathesis(
            f"{url}/api/openapi.json", tmp_path, "--include-method", "POST",
            "-H", f"Authorization: Bearer {token}", method="POST",
        )  # fmt: skip
    assert writes.returncode == 0, writes.stdout[-4000:]
    assert re.search(rf"Tested:\s+{len(WRITES)}\b", writes.stdout), writes.stdout[-4000:]


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

    for text in (
        "0000-01-01",
        "0000-12-28",
        "0001-01-01",
        "0010-02-28",
        "0999-11-09",
        "2025-11-27",
        "9999-12-28",
    ):
        assert bool(re.search(pattern, text)) == taken(text), text
