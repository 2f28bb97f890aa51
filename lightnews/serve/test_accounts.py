"""Many readers on one instance, through the web: sign-in, sessions, tokens, each one's own pages.

Every test runs on SQLite and on PostgreSQL: a fresh copy of the demo library
per test (a file copy, or a PostgreSQL database made from a template).
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

from conftest import ROOT, new_pg_database
from lightnews.serve.app import create_app
from lightnews.serve.pages.account import PER_ADDRESS
from lightnews.serve.security import HSTS, SECURITY_HEADERS
from lightnews.settings import Settings
from lightnews.store import LOCAL_READER, open_store
from lightnews.store.secrets import digest, hash_password, new_token

NOW = "2026-12-03T12:00:00Z"
SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def library(request: pytest.FixtureRequest, demo_database: Path, tmp_path: Path) -> str:
    """A fresh demo library with two accounts, ada (admin) and bob (reader)."""
    if request.param == "sqlite":
        path = tmp_path / "library.db"
        shutil.copy(demo_database, path)
        location = str(path)
    else:
        location = request.getfixturevalue("pg_demo_url")
    with open_store(location) as store:
        store.add_user("ada", hash_password("ada's password"), admin=True, now=NOW)
        store.add_user("bob", hash_password("bob's password"), admin=False, now=NOW)
    return location


@pytest.fixture(scope="module")
def pg_demo_template(pg_server: str, worker_id: str) -> Iterator[str]:
    """The demo library on PostgreSQL, built once per module; tests copy it as a template."""
    from lightnews.demo import build_demo
    from lightnews.store.postgres import PostgresStore

    url, drop = new_pg_database(pg_server, f"{worker_id}_accounts")
    with PostgresStore(url, pool_size=2) as store:
        build_demo(store, SETTINGS)
    yield url
    drop()


@pytest.fixture
def pg_demo_url(pg_server: str, pg_demo_template: str) -> Iterator[str]:
    """A copy of the PostgreSQL demo library for one test (made from it as a template)."""
    import psycopg

    template = urlsplit(pg_demo_template).path.lstrip("/")
    name = f"{template}_{next(_copies)}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    yield urlsplit(pg_server)._replace(path="/" + name).geturl()
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_copies = itertools.count()


def client_for(location: str, settings: Settings = SETTINGS, **options: bool) -> TestClient:
    return TestClient(create_app(location, settings, **options), base_url="http://localhost")


def sign_in(client: TestClient, name: str, password: str | None = None) -> str:
    """Sign ``client`` in through the sign-in page; returns its (new) form token."""
    page = client.get("/signin")
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
    assert token, page.text
    done = client.post(
        "/signin",
        data={
            "name": name,
            "password": password or f"{name}'s password",
            "csrf_token": token[1],
            "next": "/",
        },
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    fresh = re.search(r'name="csrf_token" value="([0-9a-f]+)"', client.get("/").text)
    assert fresh and fresh[1] != token[1], "the form token changes at sign-in"
    client.headers["x-csrf-token"] = fresh[1]
    return fresh[1]


def test_two_readers_each_see_only_their_own(library: str) -> None:
    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        sign_in(bob, "bob")
        # ada took over the local reader's follows (the demo follows its scholars).
        words = re.sub(r"<[^>]+>", "", ada.get("/").text)  # reasons link the names they say
        assert "posted by Mara Lindqvist (followed)" in words
        assert "(followed)" not in bob.get("/").text
        bob.post("/follow", data={"arxiv_author": "Jon Ode"})
        ada.post("/mark", data={"action": "save", "story": "2511.18342"})
        bob.post("/mark", data={"action": "save", "story": "2511.17015"})
        ada.post("/mark", data={"action": "mute", "kind": "keyword", "value": "benchmark"})
        bob.post("/mark", data={"action": "mute", "kind": "keyword", "value": "diffusion"})
        ada_home, bob_home = ada.get("/").text, bob.get("/").text
        ada_muted = ada_home.split('id="muted-title"')[1].split("</section>")[0]
        assert "benchmark" in ada_muted and "diffusion" not in ada_muted
        assert "Jon Ode" in bob_home and "Jon Ode" not in ada_home
        ada_feed = {s.get("arxiv_id"): s for s in ada.get("/api/feed").json()}
        bob_feed = {s.get("arxiv_id"): s for s in bob.get("/api/feed").json()}
        assert "saved" in ada_feed["2511.18342"]["why"]
        assert "saved" not in bob_feed.get("2511.18342", {"why": []})["why"]
        assert "saved" in bob_feed["2511.17015"]["why"]
        jon = bob.get("/api/scholar/Jon Ode").json()["scholar"]
        assert jon["followed"] is True
        assert ada.get("/api/scholar/Jon Ode").json()["scholar"]["followed"] is False
        # Error pages carry nobody's state either.
        missing = bob.get("/paper/2512.99999").text
        assert "benchmark" not in missing and "Mara" not in missing
    with open_store(library) as store:
        ada_id, bob_id = store.get_user("ada").reader, store.get_user("bob").reader
        assert store.mutes(ada_id).keyword == {"benchmark"}
        assert store.mutes(bob_id).keyword == {"diffusion"}
        assert not store.story_states(LOCAL_READER)


def test_sign_in_is_needed_and_headers_are_on_its_pages(library: str) -> None:
    with client_for(library) as client:
        home = client.get("/paper/2511.18342?x=1", follow_redirects=False)
        assert home.status_code == 303
        assert home.headers["location"] == "/signin?next=%2Fpaper%2F2511.18342%3Fx%3D1"
        assert client.get("/api/feed").status_code == 401
        assert client.get("/static/site.css").status_code == 200
        page = client.get("/signin")
        for name, value in SECURITY_HEADERS.items():
            assert page.headers[name] == value
        assert "strict-transport-security" not in page.headers
        bad = client.post(
            "/signin",
            data={
                "name": "ada",
                "password": "nope",
                "csrf_token": re.search(r'value="([0-9a-f]{64})"', page.text)[1],  # type: ignore[index]
            },
        )
        assert bad.status_code == 401 and "do not match" in bad.text
        assert "nope" not in bad.text
    with TestClient(create_app(library, SETTINGS), base_url="https://localhost") as secure:
        page = secure.get("/signin")
        assert page.headers["strict-transport-security"] == HSTS
        token = re.search(r'value="([0-9a-f]{64})"', page.text)[1]  # type: ignore[index]
        done = secure.post(
            "/signin",
            data={"name": "ada", "password": "ada's password", "csrf_token": token},
            follow_redirects=False,
        )
        cookie = next(
            c for c in done.headers.get_list("set-cookie") if c.startswith("lightnews_session=")
        )
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" in cookie


def test_failed_sign_ins_are_limited_across_processes(library: str) -> None:
    settings = SETTINGS.with_overrides(sign_in_attempts=3)
    with client_for(library, settings) as one, client_for(library, settings) as two:
        for client in (one, two, one):  # two web processes share the count
            token = re.search(r'value="([0-9a-f]{64})"', client.get("/signin").text)[1]  # type: ignore[index]
            failed = client.post(
                "/signin", data={"name": "bob", "password": "guess", "csrf_token": token}
            )
            assert failed.status_code == 401
        token = re.search(r'value="([0-9a-f]{64})"', two.get("/signin").text)[1]  # type: ignore[index]
        held = two.post(
            "/signin", data={"name": "bob", "password": "bob's password", "csrf_token": token}
        )
        assert held.status_code == 429 and "Too many failed sign-ins" in held.text
        assert held.headers["retry-after"] == "900"
        sign_in(one, "ada")  # another account is not held up by bob's


def _failed_sign_ins(base: str, forwarded_for: str, names: list[str]) -> list[int]:
    """Wrong passwords through the real server, as a proxy forwarding ``forwarded_for``."""
    headers = {"x-forwarded-for": forwarded_for, "origin": base}
    statuses = []
    with httpx.Client(base_url=base, headers=headers) as client:
        for name in names:
            token = re.search(r'value="([0-9a-f]{64})"', client.get("/signin").text)[1]  # type: ignore[index]
            statuses.append(
                client.post(
                    "/signin", data={"name": name, "password": "guess", "csrf_token": token}
                ).status_code
            )
    return statuses


@pytest.mark.parametrize("trusted", [True, False])
def test_behind_a_trusted_proxy_the_limit_counts_each_readers_address(
    library: str, serving: Any, trusted: bool
) -> None:
    """Behind a proxy every request comes from its address: believed, X-Forwarded-For
    keeps one attacker from locking everyone out; from anyone else, it is ignored."""
    from lightnews.serve.server import proxy_options

    proxy = "127.0.0.1" if trusted else "192.0.2.1"  # the server sees 127.0.0.1
    settings = SETTINGS.with_overrides(sign_in_attempts=1, trusted_proxies=(proxy,))
    app = create_app(library, settings)
    with serving(app, **proxy_options(settings)) as base:
        names = [f"stranger{n}" for n in range(PER_ADDRESS)]  # one try each: the address counts
        assert _failed_sign_ins(base, "203.0.113.5", names) == [401] * PER_ADDRESS
        assert _failed_sign_ins(base, "203.0.113.5", ["another"]) == [429]
        # Another reader behind the same proxy:
        assert _failed_sign_ins(base, "198.51.100.7", ["ada"]) == [401 if trusted else 429]


def _account_form(client: TestClient, **fields: str) -> Any:
    return client.post("/account", data=fields, follow_redirects=False)


def test_a_reader_changes_their_password_on_the_web(library: str) -> None:
    with client_for(library) as here, client_for(library) as elsewhere:
        sign_in(here, "bob")
        sign_in(elsewhere, "bob")
        tries = {
            ("guess", "new password 1", "new password 1"): "current password is not that",
            ("bob's password", "new password 1", "new password 2"): "differ",
            ("bob's password", "short", "short"): "at least 8 characters",
        }
        for (current, new, again), words in tries.items():
            refused = _account_form(here, action="password", current=current, new=new, again=again)
            assert refused.status_code == 400 and words in refused.text, refused.text
            assert 'name="current"' in refused.text  # the form, to try again
        done = _account_form(
            here,
            action="password",
            current="bob's password",
            new="a better one",
            again="a better one",
        )
        assert done.status_code == 303 and done.headers["location"] == "/account?changed=password"
        page = here.get(done.headers["location"])  # this session goes on (renewed) ...
        assert page.status_code == 200 and "every other session has ended" in page.text
        assert elsewhere.get("/", follow_redirects=False).status_code == 303  # ... not the other
    with client_for(library) as again:
        sign_in(again, "bob", "a better one")
    with open_store(library) as store:
        assert ("bob", "users.passwd", "bob") in [
            (e.actor, e.action, e.target) for e in store.audit_log()
        ]


def test_a_reader_makes_and_revokes_api_tokens_on_the_web(library: str) -> None:
    body = {"action": "save", "story": "2511.18342"}
    with client_for(library) as bob:
        sign_in(bob, "bob")
        unnamed = _account_form(bob, action="token-create", name="  ")
        assert unnamed.status_code == 400 and "Name the token" in unnamed.text
        made = _account_form(bob, action="token-create", name="my laptop")
        token = re.search(r"shown once: copy it now\): <code>([^<]+)</code>", made.text)
        assert made.status_code == 200 and token, made.text
        assert token[1] not in bob.get("/account").text  # shown once only
        token_id = re.search(r'name="token" value="(\d+)"', made.text)[1]  # type: ignore[index]
        with client_for(library) as script:
            bearer = {"authorization": f"Bearer {token[1]}"}
            assert script.post("/api/mark", json=body, headers=bearer).status_code == 200
            foreign = sign_in(script, "ada")
            assert foreign
            stolen = _account_form(script, action="token-revoke", token=token_id)
            assert stolen.status_code == 400 and "no token" in stolen.text  # not ada's to revoke
        revoked = _account_form(bob, action="token-revoke", token=token_id)
        assert revoked.status_code == 303
        with client_for(library) as script:
            bearer = {"authorization": f"Bearer {token[1]}"}
            assert script.post("/api/mark", json=body, headers=bearer).status_code == 401


def test_sessions_expire_and_end_everywhere(library: str) -> None:
    # The same library served with sessions of five seconds: the session made on the
    # first server (whatever a loaded machine takes to sign in) is refused there once
    # five seconds have passed since it was made.
    short = SETTINGS.with_overrides(session_hours=5 / 3600)
    with client_for(library) as client, client_for(library, short) as later:
        sign_in(client, "bob")
        assert client.get("/", follow_redirects=False).status_code == 200
        session = client.cookies["lightnews_session"]
        time.sleep(5.2)
        # The browser drops the cookie at its Max-Age; one kept past it is refused too.
        kept = {"cookie": f"lightnews_session={session}"}
        gone = later.get("/", headers=kept, follow_redirects=False)
        assert gone.status_code == 303 and "expired=1" in gone.headers["location"]
        assert "Your session has ended" in later.get(gone.headers["location"]).text
        assert client.get("/", headers=kept, follow_redirects=False).status_code == 200
    with client_for(library) as laptop, client_for(library) as phone:
        sign_in(laptop, "bob")
        sign_in(phone, "bob")
        assert (
            laptop.post("/signout", data={"everywhere": "1"}, follow_redirects=False).status_code
            == 303
        )
        assert phone.get("/", follow_redirects=False).status_code == 303
        assert laptop.get("/", follow_redirects=False).status_code == 303


def test_api_writes_need_a_token_never_a_cookie(library: str) -> None:
    token = new_token()
    with open_store(library) as store:
        bob = store.get_user("bob")
        made = store.create_token(bob.id, "script", digest(token), NOW)
    body = {"action": "save", "story": "2511.18342"}
    with client_for(library) as browser:
        sign_in(browser, "bob")
        refused = browser.post("/api/mark", json=body)
        assert refused.status_code == 403 and "API token" in refused.json()["error"]
    with client_for(library) as script:
        bearer = {"authorization": f"Bearer {token}"}
        done = script.post("/api/mark", json=body, headers=bearer)
        assert done.status_code == 200 and done.json()["done"] == "save"
        assert script.get("/api/feed", headers=bearer).status_code == 200
        assert script.get("/", headers=bearer).status_code == 401  # tokens are for /api/
        with open_store(library) as store:
            assert store.story_states(bob.reader)["2511.18342"][1]
            store.revoke_token(bob.id, made.id, NOW)
        again = script.post("/api/mark", json=body, headers=bearer)
        assert again.status_code == 401 and "revoked" in again.json()["error"]


def test_only_admins_manage_sources_and_accounts_with_an_audit_log(library: str) -> None:
    feed = {"feed": "https://example.org/lab/feed.xml"}
    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        sign_in(bob, "bob")
        assert bob.post("/sources/manage", data=feed).status_code == 403
        assert bob.get("/admin").status_code == 403
        assert (
            bob.post("/admin/users", data={"name": "eve", "password": "long enough"}).status_code
            == 403
        )
        assert ada.post("/sources/manage", data=feed, follow_redirects=False).status_code == 303
        added = ada.post(
            "/admin/users", data={"name": "cy", "password": "cy's password"}, follow_redirects=False
        )
        assert added.status_code == 303
        admin = ada.get("/admin").text
        assert "sources.add" in admin and "example.org/lab/feed.xml" in admin
        assert "users.add" in admin and ">cy<" in admin
        assert "Admin" not in bob.get("/").text.split("<main")[0]
        if library.startswith("postgresql"):  # the queue's health, where the admin looks
            assert "<h2>Workers</h2>" in admin and "no worker is running" in admin
            assert "workers: 0 alive" in admin and "sources due now: " in admin
        else:  # an embedded library has no workers to report
            assert "Workers" not in admin
    with open_store(library) as store:
        assert [(e.actor, e.action) for e in store.audit_log()] == [
            ("ada", "users.add"),
            ("ada", "sources.add"),
        ]
        assert store.find_source("feed", "https://example.org/lab/feed.xml") is not None


def test_a_reader_sees_no_admin_control_on_the_sources_page(library: str) -> None:
    """Before, a reader saw Add feed, Follow category and Remove, which answered 403."""
    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        sign_in(bob, "bob")
        admin_page, reader_page = ada.get("/sources").text, bob.get("/sources").text
        for page in (admin_page, reader_page):
            assert "Northlake AI Lab Blog" in page  # both see every source and its health
            assert 'action="/mark"' in page and ">Mute</button>" in page  # muting is theirs
        assert admin_page.count('action="/sources/manage"') >= 3  # add feed, category, remove
        assert ">Add feed</button>" in admin_page and ">Remove</button>" in admin_page
        assert "/sources/manage" not in reader_page
        assert "Add feed" not in reader_page and "Follow category" not in reader_page
        assert ">Remove</button>" not in reader_page and 'id="admins-add"' in reader_page
        assert 'id="admins-add"' not in admin_page
    with client_for(library, public_read_only=True) as visitor:  # no admin there either
        assert "/sources/manage" not in visitor.get("/sources").text


def test_the_favicon_is_there_before_sign_in(library: str) -> None:
    """Browsers ask /favicon.ico of every site: it was a 404 (here, a sign-in redirect)."""
    with client_for(library) as stranger:
        moved = stranger.get("/favicon.ico", follow_redirects=False)
        assert moved.status_code == 301 and moved.headers["location"] == "/static/favicon.svg"
        icon = stranger.get("/static/favicon.svg")
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
        assert icon.text.startswith("<svg") and "<title>Lightnews</title>" in icon.text
        page = stranger.get("/signin").text
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page


def test_secret_feed_urls_work_without_sign_in_and_rotate(library: str) -> None:
    with client_for(library) as ada:
        sign_in(ada, "ada")
        ada.post("/mark", data={"action": "save", "story": "2511.18342"})
        made = ada.post("/account", data={"action": "feed-key"}).text
        urls = re.findall(r"<code>(http://localhost/feeds/[^<]+)</code>", made)
        assert len(urls) == 3
        again = ada.post("/account", data={"action": "feed-key"}).text
        fresh = re.findall(r"<code>(http://localhost/feeds/[^<]+)</code>", again)
    with client_for(library) as reader:  # a feed reader: no session
        for old in urls:
            assert reader.get(old.removeprefix("http://localhost")).status_code == 404
        atom, jsonfeed, bib = (reader.get(u.removeprefix("http://localhost")) for u in fresh)
        assert atom.status_code == 200 and atom.headers["content-type"].startswith(
            "application/atom+xml"
        )
        assert "Sparse Ring Attention" in atom.text
        assert jsonfeed.json()["items"] and "2511.18342" in bib.text
        assert reader.get("/feeds/lnf_nonsense_key/feed.atom").status_code == 404
    with open_store(library) as store:
        key = fresh[0].split("/feeds/")[1].split("/")[0]
        assert store.feed_key_reader(digest(key)) == store.get_user("ada").reader


def test_group_picks_with_who_and_opt_out(library: str) -> None:
    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        sign_in(bob, "bob")
        for client in (ada, bob):
            client.post("/mark", data={"action": "save", "story": "2511.18342"})
        ada.post("/mark", data={"action": "save", "story": "2511.17015"})  # ada alone
        page = bob.get("/group").text
        assert "saved by ada, bob" in page and "2511.17015" not in page
        agenda = bob.get("/group?format=md").text
        assert agenda.startswith("# Journal club agenda") and "saved by ada, bob" in agenda
        assert "2511.18342" in bob.get("/group?format=bibtex").text
        bob.post("/account", data={"action": "private"})
        assert "saved by ada" not in ada.get("/group").text


def test_read_only_instance_refuses_every_change(demo_database: Path, tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    shutil.copy(demo_database, path)
    with client_for(str(path), public_read_only=True, open_without_accounts=False) as client:
        home = client.get("/")
        assert home.status_code == 200 and "read-only" in home.text
        assert not re.search(r'<form(?![^>]*hidden)[^>]*method="post"', home.text)
        token = re.search(r'value="([0-9a-f]{64})"', home.text)
        data = {
            "action": "mute",
            "kind": "keyword",
            "value": "x",
            "csrf_token": token[1] if token else "",
        }
        assert client.post("/mark", data=data).status_code == 403
        assert client.get("/?format=atom").status_code == 200
    with client_for(str(path), open_without_accounts=False) as closed:
        assert closed.get("/").status_code == 403


def test_serve_beyond_loopback_without_accounts_refuses_to_start(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run = [
        sys.executable,
        "-m",
        "lightnews",
        "--db",
        str(db),
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "1",
    ]
    result = subprocess.run(run, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 2, result.stderr
    assert "no accounts" in result.stderr and "--public-read-only" in result.stderr


def state(location: str) -> dict[str, list[str]]:
    """Every row a form could change, read straight from the database (either backend)."""

    from lightnews.store.copy import TABLES

    with open_store(location) as store:
        db: Any = store.db  # type: ignore[attr-defined]
        skip = {"settings", "sign_in_failures", "api_tokens"}  # sign-in and token use
        return {
            t: sorted(repr(tuple(r)) for r in db.execute(f"SELECT * FROM {t}"))
            for t in TABLES
            if t not in skip
        }


def test_every_post_route_refuses_a_session_without_its_own_token(library: str) -> None:
    from lightnews.serve.test_security import FORM, post_routes

    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        bobs = sign_in(bob, "bob")
        before = state(library)
        routes = post_routes(ada)
        assert {"/signin", "/signout", "/account", "/admin/users", "/api/mark"} <= set(routes)
        for path in routes:
            ada.headers.pop("x-csrf-token", None)
            assert ada.post(path, data=FORM).status_code in (401, 403), path  # no token
            wrong = {**FORM, "csrf_token": bobs}  # another session's token
            assert ada.post(path, data=wrong).status_code in (401, 403), path
            assert ada.post(path, data=FORM, headers={"x-csrf-token": bobs}).status_code in (
                401,
                403,
            ), path
        assert state(library) == before, "nothing changed"
        assert ada.get("/", follow_redirects=False).status_code == 200  # still signed in


@pytest.mark.parametrize(
    ("target", "kept"),
    [
        ("/paper/2511.18342", True),
        ("/search?q=a", True),
        ("//evil.example", False),
        ("/\t/evil.example", False),
        ("/\\evil.example", False),
        ("https://evil.example", False),
        ("javascript:alert(1)", False),
    ],
)
def test_sign_in_returns_only_to_this_site(target: str, kept: bool) -> None:
    from lightnews.serve.pages.account import _safe_next

    assert (_safe_next(target) == target) is kept


def _admin_form(client: TestClient, **fields: str) -> Any:
    return client.post("/admin/users", data=fields, follow_redirects=False)


def test_nothing_of_a_removed_account_opens_the_next_one(library: str) -> None:
    """bob's cookie, token, feed key, watches and push targets, kept after bob is removed,
    open nothing of the account made next (on SQLite its id was bob's, reused)."""
    from lightnews.deliver.watch import start_watching, watching
    from lightnews.store.network import PushTarget

    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        sign_in(bob, "bob")
        token, key = new_token(), "k" * 40
        with open_store(library) as store:
            old = store.get_user("bob")
            store.create_token(old.id, "laptop", digest(token), NOW)
            store.set_feed_key(old.reader, digest(key), NOW)
            start_watching(store, f"user:{old.id}", "2511.18342")
            store.set_push_target(
                PushTarget("ntfy", "https://ntfy.example/bob", f"user:{old.id}"), NOW
            )
        assert bob.get("/api/feed").status_code == 200
        assert bob.get(f"/feeds/{key}/feed.atom").status_code == 200
        assert _admin_form(ada, remove="bob").status_code == 303
        made = _admin_form(ada, name="grace", password="grace's password", admin="1")
        assert made.status_code == 303
        with open_store(library) as store:
            grace = store.get_user("grace")
            assert grace.id != old.id  # an id is never handed out twice
            assert watching(store, f"user:{grace.id}") == []
            assert store.push_targets(f"user:{grace.id}") == []
            assert store.push_targets(f"user:{old.id}") == []
        # bob's old session opens nothing: not the admin page, not the feed, not the API
        assert bob.get("/admin", follow_redirects=False).status_code == 303
        assert bob.get("/", follow_redirects=False).status_code == 303
        assert bob.get("/api/feed").status_code == 401
        assert _admin_form(
            bob, name="mallory", password="mallory's password", admin="1"
        ).status_code in (303, 403)
        with open_store(library) as store:
            assert "mallory" not in [u.name for u in store.list_users()]
            actors = {e.actor for e in store.audit_log()}
            assert actors == {"ada"}, actors  # nothing was done in grace's name
        with TestClient(create_app(library, SETTINGS), base_url="http://localhost") as anyone:
            assert (
                anyone.get("/api/feed", headers={"authorization": f"Bearer {token}"}).status_code
                == 401
            )
            assert anyone.get(f"/feeds/{key}/feed.atom").status_code == 404


def test_signing_out_ends_the_session_on_the_server(library: str) -> None:
    """A copy of the cookie (another browser, a stolen one) stops working at sign-out."""
    with client_for(library) as bob, client_for(library) as copy:
        sign_in(bob, "bob")
        copy.cookies.update(bob.cookies)
        assert copy.get("/", follow_redirects=False).status_code == 200
        out = bob.post("/signout", data={}, follow_redirects=False)
        assert out.status_code == 303
        assert copy.get("/", follow_redirects=False).status_code == 303
        assert copy.get("/api/feed").status_code == 401


def test_concurrent_wrong_passwords_check_at_most_the_limit(library: str, serving: Any) -> None:
    """50 guesses at once through the real server: at most the limit's worth are checked
    (the rest are refused before the password is looked at), and the member, from their
    own address, still signs in."""
    from concurrent.futures import ThreadPoolExecutor

    limit = 5
    settings = SETTINGS.with_overrides(sign_in_attempts=limit, trusted_proxies=("127.0.0.1",))
    from lightnews.serve.server import proxy_options

    with serving(create_app(library, settings), **proxy_options(settings)) as base:
        attacker = {"x-forwarded-for": "203.0.113.5", "origin": base}
        tokens = []
        clients = [httpx.Client(base_url=base, headers=attacker, timeout=60) for _ in range(50)]
        for client in clients:
            tokens.append(re.search(r'value="([0-9a-f]{64})"', client.get("/signin").text)[1])  # type: ignore[index]

        def guess(n: int) -> int:
            form = {"name": "bob", "password": f"guess {n}", "csrf_token": tokens[n]}
            return clients[n].post("/signin", data=form).status_code

        with ThreadPoolExecutor(50) as pool:
            statuses = list(pool.map(guess, range(50)))
        for client in clients:
            client.close()
        assert statuses.count(401) <= limit, statuses
        assert statuses.count(401) + statuses.count(429) == 50, statuses
        with httpx.Client(
            base_url=base, timeout=60, headers={"x-forwarded-for": "198.51.100.7", "origin": base}
        ) as member:
            token = re.search(r'value="([0-9a-f]{64})"', member.get("/signin").text)[1]  # type: ignore[index]
            done = member.post(
                "/signin",
                data={"name": "bob", "password": "bob's password", "csrf_token": token},
                follow_redirects=False,
            )
            assert done.status_code == 303, done.text


def test_a_reader_follows_what_is_fetched_and_adds_no_source(library: str) -> None:
    """Issue 31: /follow by a reader follows for them; new sources are an admin's (or every
    reader's with ``readers_add_sources``), and existing scholars gain no identity."""
    with open_store(library) as store:
        before = {(r.kind, r.address) for r in store.list_sources()}
        mara = store.find_scholar("Mara Lindqvist")
        handle = next(
            i.value for i in store.get_scholar(mara).identities if i.kind == "bluesky-handle"
        )
    with client_for(library) as bob:
        sign_in(bob, "bob")
        new = bob.post("/follow", data={"arxiv_author": "Jon Ode"}, follow_redirects=False)
        assert new.status_code == 303 and new.headers["location"].endswith("?not_fetched=1")
        assert "does not fetch all of what you gave" in bob.get(new.headers["location"]).text
        # A known handle with an unknown name: mara is followed, the name is not made hers.
        mixed = bob.post(
            "/follow",
            data={"handle": handle, "arxiv_author": "Ode Jonsson"},
            follow_redirects=False,
        )
        assert mixed.headers["location"] == f"/scholar/{mara}?not_fetched=1"
        known = bob.post("/follow", data={"handle": handle}, follow_redirects=False)
        assert known.headers["location"] == f"/scholar/{mara}"  # all of it is fetched
        bad = bob.post("/follow", data={"arxiv_author": ""})
        assert bad.status_code == 400 and 'name="arxiv_author"' in bad.text
        # A suggestion naming a known scholar: a reader follows that scholar, no "@handle"
        # scholar is made, and the handle is not tied to them (that is an admin's).
        with open_store(library) as store:
            scholars = len(store.list_scholars(0.5))
        onto = bob.post(
            "/follow",
            data={"handle": "jonode.bsky.social", "scholar": str(mara)},
            follow_redirects=False,
        )
        assert onto.headers["location"] == f"/scholar/{mara}?not_fetched=1"
    with open_store(library) as store:
        assert len(store.list_scholars(0.5)) == scholars
        assert store.scholar_by_identity("bluesky-handle", "jonode.bsky.social") is None
        assert {(r.kind, r.address) for r in store.list_sources()} == before
        bob_follows = store.follows(store.get_user("bob").reader)
        ode = store.find_scholar("Jon Ode")
        assert bob_follows == {ode, mara}
        assert "Ode Jonsson" not in {i.value for i in store.get_scholar(mara).identities}
        assert ode not in store.follows(store.get_user("ada").reader)
    allowed = SETTINGS.with_overrides(readers_add_sources=True)
    with client_for(library, allowed) as bob, client_for(library) as ada:
        sign_in(bob, "bob")
        sign_in(ada, "ada")
        assert (
            bob.post(
                "/follow", data={"arxiv_author": "Ida Reyes"}, follow_redirects=False
            ).status_code
            == 303
        )
        assert (
            ada.post(
                "/follow", data={"arxiv_author": "Oskar Nyberg"}, follow_redirects=False
            ).status_code
            == 303
        )
    with open_store(library) as store:
        added = {(r.kind, r.title) for r in store.list_sources()} - {
            (r.kind, r.title) for r in store.list_sources() if (r.kind, r.address) in before
        }
        assert added == {("arxiv-api", "Ida Reyes"), ("arxiv-api", "Oskar Nyberg")}


def test_shared_decisions_are_admins_and_audited_and_a_readers_hide_is_theirs(
    library: str,
) -> None:
    with open_store(library) as store:
        mara = store.find_scholar("Mara Lindqvist")
    paper = "2511.10268"
    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        sign_in(bob, "bob")
        for action in ("reject", "confirm", "undecide"):
            asked = {"scholar": mara, "paper": paper, "action": action}
            refused = bob.post("/scholars/manage", data=asked)
            assert refused.status_code == 403 and "decided for every reader" in refused.text
        hide = {"scholar": mara, "paper": paper, "action": "hide"}
        hid = bob.post("/scholars/manage", data=hide, follow_redirects=False)
        assert hid.status_code == 303
        assert paper not in {s.get("arxiv_id") for s in bob.get("/api/feed").json()}
        assert paper in {s.get("arxiv_id") for s in ada.get("/api/feed").json()}
        assert "hidden from your feed" in bob.get(f"/scholar/{mara}?tab=papers").text
        bob.post("/scholars/manage", data={"scholar": mara, "paper": paper, "action": "unhide"})
        assert "hidden from your feed" not in bob.get(f"/scholar/{mara}?tab=papers").text
        ada.post("/scholars/manage", data={"scholar": mara, "paper": paper, "action": "confirm"})
        assert "confirmed for everyone, by ada" in bob.get(f"/scholar/{mara}?tab=papers").text
        ada.post("/scholars/manage", data={"scholar": mara, "paper": paper, "action": "undecide"})
    with open_store(library) as store:
        assert store.decisions(mara) == {} and store.deciders(mara) == {}
        assert [(e.actor, e.action, e.target) for e in reversed(store.audit_log())] == [
            ("ada", "attribution.confirm", f"#{mara} {paper}"),
            ("ada", "attribution.undecide", f"#{mara} {paper}"),
        ]


def test_one_person_known_twice_is_offered_as_a_merge_an_admin_makes(library: str) -> None:
    """A handle followed on its own, once its profile named it, meets the arXiv author of
    that name: its page offers the merge; an admin's merge is audited, a reader's refused."""
    with open_store(library) as store:
        twin = store.create_scholar("tobias achterberg-reyes", NOW)  # as a profile named it
        store.add_identity(twin, "bluesky-handle", "tobias-ar.bsky.social")
        assert store.namesakes(twin) == [(2, "Tobias Achterberg-Reyes")]
        assert store.namesakes(2) == [(twin, "tobias achterberg-reyes")]
        assert store.namesakes(1) == []  # nobody else is known by her name
    with client_for(library) as ada, client_for(library) as bob:
        sign_in(ada, "ada")
        sign_in(bob, "bob")
        page = bob.get(f"/scholar/{twin}").text
        assert "Maybe the same person as" in page and 'href="/scholar/2"' in page
        assert 'value="merge"' not in page and "An admin can merge them" in page
        assert bob.get(f"/api/scholar/{twin}").json()["namesakes"] == [
            {"id": 2, "name": "Tobias Achterberg-Reyes"}
        ]
        merge = {"action": "merge", "scholar": str(twin), "into": "2"}
        assert bob.post("/scholars/manage", data=merge).status_code == 403
        assert 'value="merge"' in ada.get(f"/scholar/{twin}").text
        done = ada.post("/scholars/manage", data=merge, follow_redirects=False)
        assert done.status_code == 303 and done.headers["location"] == "/scholar/2"
        assert "tobias-ar.bsky.social" in ada.get("/api/scholar/2").text
        assert ada.get(f"/api/scholar/{twin}").status_code == 404
        assert "Maybe the same person" not in ada.get("/scholar/2").text
        assert "scholars.merge" in ada.get("/admin").text
