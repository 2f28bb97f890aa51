"""A reader's word on papers: "more like this" and "not interested", through the API and the
command line, on both backends; the feed shows each entry's score.

"Not interested" hides the paper from that reader's feed alone and teaches their ranker
(lightnews/rank/test_learn.py shows it lowers similar papers); "more like this" counts
as a save for the ranker; either is taken back with ``no-feedback`` (``--undo``).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from lightnews.cli import cli
from lightnews.serve.app import create_app
from lightnews.settings import Settings
from lightnews.store import open_store
from lightnews.store.secrets import digest, hash_password, new_token

SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)
NOW = "2026-12-06T12:00:00Z"
PAPER = "2511.17015"


@pytest.fixture
def library(fresh_demo: str) -> str:
    return fresh_demo


def feed_keys(client: TestClient, headers: dict[str, str]) -> list[str]:
    return [e.get("arxiv_id") or e["item"] for e in client.get("/api/feed", headers=headers).json()]


def test_the_api_takes_more_like_this_and_not_interested_per_reader(library: str) -> None:
    with open_store(library) as store:
        ada = store.add_user("ada", hash_password("ada's password"), admin=True, now=NOW)
        bob = store.add_user("bob", hash_password("bob's password"), admin=False, now=NOW)
        tokens = {}
        for user in (ada, bob):
            tokens[user.name] = new_token()
            store.create_token(user.id, "script", digest(tokens[user.name]), NOW)
    as_ada = {"authorization": f"Bearer {tokens['ada']}"}
    as_bob = {"authorization": f"Bearer {tokens['bob']}"}
    with TestClient(create_app(library, SETTINGS), base_url="http://localhost") as client:
        assert PAPER in feed_keys(client, as_ada) and PAPER in feed_keys(client, as_bob)
        entry = client.get("/api/feed", headers=as_ada).json()[0]
        assert isinstance(entry["score"], float) and entry["score"] > 0
        done = client.post(
            "/api/mark", json={"action": "not-interested", "story": PAPER}, headers=as_ada
        )
        assert done.status_code == 200 and done.json()["done"] == "not-interested"
        assert PAPER not in feed_keys(client, as_ada)
        assert PAPER in feed_keys(client, as_bob)  # ada's word is hers alone
        assert (
            client.post(
                "/api/mark",
                json={"action": "more-like-this", "story": "2511.18342"},
                headers=as_bob,
            ).status_code
            == 200
        )
        lone = client.post(
            "/api/mark", json={"action": "not-interested", "story": "item:40"}, headers=as_ada
        )
        assert lone.status_code == 400 and "only a paper" in lone.json()["error"]
        undo = client.post(
            "/api/mark", json={"action": "no-feedback", "story": PAPER}, headers=as_ada
        )
        assert undo.status_code == 200 and PAPER in feed_keys(client, as_ada)
    with open_store(library) as store:
        assert store.paper_feedback(ada.reader) == {}
        row = store.paper_row_id("2511.18342")
        assert store.paper_feedback(bob.reader) == {row: "more-like-this"}


def test_a_write_has_the_model_trained_after_answering(
    library: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The POST answers without training: the web process's trainer thread trains, and the
    next feed (here: another app over the same library, as a second process) uses the
    stored model without training again."""
    from lightnews.rank.learn import train_reader_model
    from lightnews.rank.trained import STORED, TRAINER, current_version

    where: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        where.append(threading.current_thread().name)
        return train_reader_model(*args, **kwargs)

    monkeypatch.setattr("lightnews.rank.trained.train_reader_model", counted)
    monkeypatch.setattr(TRAINER, "queue", None)
    STORED.forget()
    token = new_token()
    with open_store(library) as store:
        ada = store.add_user("ada", hash_password("ada's password"), admin=True, now=NOW)
        store.create_token(ada.id, "script", digest(token), NOW)
    as_ada = {"authorization": f"Bearer {token}"}
    with TestClient(create_app(library, SETTINGS), base_url="http://localhost") as client:
        done = client.post(
            "/api/mark", json={"action": "more-like-this", "story": PAPER}, headers=as_ada
        )
        assert done.status_code == 200
        assert TRAINER.drain()
        assert where == ["lightnews-trainer"]  # after answering, off the request
    with open_store(library) as store:
        stored = store.reader_model(ada.reader)
        assert stored is not None and stored.model is not None
        assert stored.version == current_version(store, ada.reader, SETTINGS)
    STORED.forget()  # a second process: nothing of the first in memory
    with TestClient(create_app(library, SETTINGS), base_url="http://localhost") as client:
        assert PAPER in feed_keys(client, as_ada)
        assert TRAINER.drain() and where == ["lightnews-trainer"]


def test_the_command_line_takes_them_too(library: str) -> None:
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"})

    def run(*args: str, code: int = 0) -> str:
        done = runner.invoke(cli, ["--db", library, *args])
        assert done.exit_code == code, done.output
        return done.output

    def keys() -> list[str]:
        entries = json.loads(run("feed", "--json", "--limit", "60"))
        return [e.get("arxiv_id") or e["item"] for e in entries]

    assert PAPER in keys()
    assert "score " in run("feed", "--limit", "3")
    assert "item:" in run("feed", "--limit", "60")  # posts say the key `read` takes
    run("not-interested", PAPER)
    assert PAPER not in keys()
    run("not-interested", PAPER, "--undo")
    assert PAPER in keys()
    run("more-like-this", "2511.18342")
    assert "not a stored paper" in run("not-interested", "item:40", code=1)
    assert "not a stored paper" in run("more-like-this", "2511.18342", "1801.00001", code=1)
    with open_store(library) as store:
        assert list(store.paper_feedback(0).values()) == ["more-like-this"]  # nothing half-done
        # Trained by the command itself, after its write, for every later process to use.
        from lightnews.rank.trained import current_version
        from lightnews.store import ReaderId

        stored = store.reader_model(ReaderId(0))
        assert stored is not None and stored.version == current_version(
            store, ReaderId(0), Settings(store.saved_settings())
        )
