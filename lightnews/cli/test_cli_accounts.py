"""Accounts from the command line: users, tokens, acting as a reader; on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lightnews.cli import cli
from lightnews.store import open_store


@pytest.fixture(params=["sqlite", "postgresql"])
def library(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty library: an SQLite file or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "lightnews.db")
    return str(request.getfixturevalue("pg_url"))


def run(db: str, *args: str, code: int = 0, stdin: str | None = None) -> Result:
    result = CliRunner().invoke(cli, ["--db", db, *args], input=stdin, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def test_users_tokens_and_acting_as_a_reader(library: str) -> None:
    run(library, "init")
    run(library, "follow", "--orcid", "0000-0002-1825-0097")  # the local reader's follow
    assert "no accounts" in run(library, "users", "list").output
    first = run(library, "users", "add", "ada", "--password-stdin", stdin="correct horse\n")
    assert "added admin ada" in first.output and "local reader" in first.output
    run(library, "users", "add", "bob", "--password-stdin", stdin="battery staple\n")
    listed = json.loads(run(library, "users", "list", "--json").stdout)
    assert [(u["name"], u["admin"]) for u in listed] == [("ada", True), ("bob", False)]

    # Two accounts: reader commands say whose state they use.
    refused = run(library, "mute", "--keyword", "survey", code=2)
    assert "--as NAME" in refused.output
    run(library, "--as", "bob", "mute", "--keyword", "survey")
    ada = {
        s["id"]: s
        for s in json.loads(run(library, "--as", "ada", "scholars", "list", "--json").stdout)
    }
    bob = {
        s["id"]: s
        for s in json.loads(run(library, "--as", "bob", "scholars", "list", "--json").stdout)
    }
    assert [s["followed"] for s in ada.values()] == [True]  # took the local reader's follow
    assert [s["followed"] for s in bob.values()] == [False]
    exported = json.loads(run(library, "--as", "ada", "export").stdout)
    assert exported["mutes"]["keyword"] == []
    assert json.loads(run(library, "--as", "bob", "export").stdout)["mutes"]["keyword"] == [
        "survey"
    ]
    assert "no account named 'cy'" in run(library, "--as", "cy", "feed", code=2).output

    run(library, "--as", "bob", "settings", "set", "digest_to", "bob@example.org")
    settings = {
        r["name"]: r["value"]
        for r in json.loads(run(library, "--as", "bob", "settings", "--json").stdout)
    }
    assert settings["digest_to"] == "bob@example.org"
    settings = {
        r["name"]: r["value"]
        for r in json.loads(run(library, "--as", "ada", "settings", "--json").stdout)
    }
    assert settings["digest_to"] == ""
    made = json.loads(run(library, "--as", "bob", "tokens", "create", "laptop", "--json").stdout)
    assert made["token"].startswith("lnt_")
    rows = json.loads(run(library, "--as", "bob", "tokens", "list", "--json").stdout)
    assert [(r["name"], r["revoked_at"]) for r in rows] == [("laptop", None)]
    assert "token" not in rows[0]
    assert (
        "no token"
        in run(library, "--as", "ada", "tokens", "revoke", str(made["id"]), code=2).output
    )
    run(library, "--as", "bob", "tokens", "revoke", str(made["id"]))
    rows = json.loads(run(library, "--as", "bob", "tokens", "list", "--json").stdout)
    assert rows[0]["revoked_at"]
    with open_store(library) as store:
        epoch = store.get_user("bob").session_epoch
    run(library, "users", "passwd", "bob", "--password-stdin", stdin="a new password\n")
    run(library, "users", "remove", "bob", "--yes")
    with open_store(library) as store:
        assert epoch == 0 and [u.name for u in store.list_users()] == ["ada"]
        assert [e.action for e in store.audit_log()] == [
            "users.remove",
            "users.passwd",
            "users.add",
            "users.add",
        ]
    run(library, "--as", "ada", "sources", "add", "https://example.org/lab/feed.xml")
    with open_store(library) as store:
        entry = store.audit_log()[0]
        assert (entry.actor, entry.action) == ("ada", "sources.add")
        assert entry.target.endswith("feed https://example.org/lab/feed.xml")
    assert (
        "no account named 'nobody'"
        in run(
            library, "--as", "nobody", "sources", "add", "https://example.org/x.xml", code=2
        ).output
    )
    run(library, "--as", "ada", "settings", "set", "worker_tick", "120")
    run(library, "settings", "unset", "worker_tick")
    with open_store(library) as store:
        entries = [(e.actor, e.action, e.target) for e in store.audit_log()[:2]]
        assert entries[1] == ("ada", "settings.set", "worker_tick = 120")
        assert entries[0][1:] == ("settings.unset", "worker_tick")
        assert "nobody" not in {e.actor for e in store.audit_log()}
    # One account left: it is the reader without --as.
    run(library, "mute", "--keyword", "benchmark")
    assert json.loads(run(library, "export").stdout)["mutes"]["keyword"] == ["benchmark"]


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("users", "add", "bad name!"), "long enough\n", "cannot name an account"),
        (("users", "add", "ada", "--password-stdin"), "short\n", "at least 8 characters"),
        (("users", "passwd", "nobody", "--password-stdin"), "long enough\n", "no account named"),
        (("users", "remove", "nobody", "--yes"), None, "no account named"),
        (("tokens", "create", "laptop"), None, "belong to accounts"),
    ],
)
def test_bad_account_input_is_a_usage_error(
    tmp_path: Path, args: tuple[str, ...], stdin: str | None, message: str
) -> None:
    result = run(str(tmp_path / "x.db"), *args, code=2, stdin=stdin)
    assert message in result.output and "Traceback" not in result.output


def test_init_makes_the_first_admin_from_the_environment_once(
    library: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deployment's setup step: the first admin from the environment, then never again."""
    from lightnews.store.secrets import verify_password

    for name in (
        "LIGHTNEWS_ADMIN_USER",
        "LIGHTNEWS_ADMIN_PASSWORD",
        "LIGHTNEWS_ADMIN_PASSWORD_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    # Nothing to make an admin from: a usage error that names what to set.
    refused = run(library, "init", "--admin-from-env", code=2)
    assert "LIGHTNEWS_ADMIN_USER" in refused.output and "no accounts" in refused.output
    monkeypatch.setenv("LIGHTNEWS_ADMIN_USER", "ada")
    assert "LIGHTNEWS_ADMIN_PASSWORD" in run(library, "init", "--admin-from-env", code=2).output
    secret = tmp_path / "admin-password"
    secret.write_text("correct horse\n")
    monkeypatch.setenv("LIGHTNEWS_ADMIN_PASSWORD_FILE", str(secret))
    monkeypatch.setenv("LIGHTNEWS_ADMIN_PASSWORD", "something else")
    assert "not both" in run(library, "init", "--admin-from-env", code=2).output
    monkeypatch.delenv("LIGHTNEWS_ADMIN_PASSWORD")
    monkeypatch.setenv("LIGHTNEWS_ADMIN_PASSWORD_FILE", str(tmp_path / "missing"))
    assert "cannot read" in run(library, "init", "--admin-from-env", code=2).output
    monkeypatch.setenv("LIGHTNEWS_ADMIN_PASSWORD_FILE", str(secret))

    made = run(library, "init", "--admin-from-env")
    assert "added admin ada" in made.output
    with open_store(library) as store:
        ada = store.password_hash("ada")
    assert ada is not None and ada[0].admin and verify_password(ada[1], "correct horse")
    # Again, with another password given: the account and its password are left alone, said so.
    monkeypatch.delenv("LIGHTNEWS_ADMIN_PASSWORD_FILE")
    monkeypatch.setenv("LIGHTNEWS_ADMIN_PASSWORD", "a new one, please")
    again = run(library, "init", "--admin-from-env")
    assert "admin ada exists: its password is left as it is" in again.output
    assert "not ada's" in again.output
    # Once accounts exist, the environment makes no other: a removed admin stays removed.
    run(library, "users", "add", "bob", "--admin", "--password-stdin", stdin="battery staple\n")
    run(library, "users", "remove", "ada", "--yes")
    gone = run(library, "init", "--admin-from-env")
    assert "no admin made from the environment" in gone.output
    monkeypatch.delenv("LIGHTNEWS_ADMIN_USER")
    monkeypatch.delenv("LIGHTNEWS_ADMIN_PASSWORD")
    run(library, "init", "--admin-from-env")  # a later start without the secrets: fine
    listed = json.loads(run(library, "users", "list", "--json").stdout)
    assert [(u["name"], u["admin"]) for u in listed] == [("bob", True)]
    with open_store(library) as store:
        found = store.password_hash("bob")
        audit = [(e.action, e.target) for e in store.audit_log()]
    assert found is not None and verify_password(found[1], "battery staple")
    assert ("users.add", "ada (admin, from the environment)") in audit
