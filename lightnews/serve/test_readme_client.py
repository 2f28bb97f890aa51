"""The README's API client works against the demo, as a reader would run it.

The README shows the steps (the demo library, an admin, a token, ``serve``) and a
client in plain Python; this test takes the steps with the same commands, serves
the library with the real server, and runs the README's client code, as
written there, in a Python of its own. Its write is checked against what the
OpenAPI description promises for it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lightnews.cli import cli
from lightnews.serve.api import openapi
from lightnews.settings import Settings
from lightnews.store import open_store

README = Path(__file__).resolve().parents[2] / "README.md"
#: The answers are checked against the description with schemathesis's own validator.
jsonschema: Any = pytest.importorskip("jsonschema", reason="a dev dependency (schemathesis)")


def readme_client() -> str:
    """The Python block between the README's ``api-client`` markers."""
    text = README.read_text(encoding="utf-8")
    block = re.search(
        r"<!-- api-client.*?-->\s*```python\n(.*?)```\s*<!-- /api-client -->", text, re.S
    )
    assert block, "the README shows an API client between its markers"
    return block.group(1)


def test_the_readme_client_runs_against_the_demo(
    demo_database: Path, tmp_path: Path, serving: Any
) -> None:
    from lightnews.serve.app import create_app

    db = tmp_path / "demo.db"
    shutil.copy(demo_database, db)
    runner = CliRunner()
    added = runner.invoke(
        cli,
        ["--db", str(db), "users", "add", "me", "--admin", "--password-stdin"],
        input="a long passphrase\n",
    )
    assert added.exit_code == 0, added.output
    made = runner.invoke(
        cli, ["--db", str(db), "--as", "me", "tokens", "create", "script", "--json"]
    )
    assert made.exit_code == 0, made.output
    token = json.loads(made.stdout)["token"]
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with serving(create_app(str(db), settings)) as url:
        env = {**os.environ, "LIGHTNEWS_URL": url, "LIGHTNEWS_TOKEN": token}
        ran = subprocess.run(
            [sys.executable, "-c", readme_client()],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        lines = ran.stdout.splitlines()
        assert re.fullmatch(r"\d+ endpoints, described at /api/openapi\.json", lines[0])
        assert len(lines) == 6 and all(" · " in line for line in lines[1:4])
        saved = lines[4].removeprefix("saved ")
        assert re.fullmatch(r"\d{4}\.\d{4,5}", saved) and lines[1].startswith(saved)
        assert lines[5].startswith("saved now: [") and f"'{saved}'" in lines[5]
        # The write answers what the description promises.
        post = openapi()["paths"]["/api/mark"]["post"]
        request = urllib.request.Request(
            url + "/api/mark",
            data=json.dumps({"action": "read", "story": saved}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = json.load(answer)
        answers = post["responses"]["200"]["content"]["application/json"]["schema"]
        takes = post["requestBody"]["content"]["application/json"]["schema"]
        jsonschema.validate(body, answers)
        jsonschema.validate({"action": "read", "story": saved}, takes)
        no_token = urllib.request.Request(
            url + "/api/mark",
            data=b'{"action": "save"}',
            headers={"Content-Type": "application/json"},
        )
        try:
            urllib.request.urlopen(no_token, timeout=30)
        except urllib.error.HTTPError as refused:
            assert str(refused.code) in post["responses"]  # 401: described
            assert refused.code == 401
        else:
            raise AssertionError("a write without a token was taken")
    with open_store(str(db)) as store:
        me = store.get_user("me").reader
        assert store.story_states(me)[saved][1]  # saved, for the token's reader
