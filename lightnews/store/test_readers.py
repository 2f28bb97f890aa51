"""Readers on one library: accounts, tokens and feed keys, and state that stays each one's own.

Every test runs on SQLite and on PostgreSQL (the ``store`` fixture).
"""

from __future__ import annotations

import sqlite3
from typing import Any, cast

import pytest

from lightnews.errors import NotFound, UsageError
from lightnews.store import LOCAL_READER, Store
from lightnews.store.readers import ReaderId
from lightnews.store.secrets import digest, hash_password, new_feed_key, new_token, verify_password

NOW = "2026-12-03T12:00:00Z"


def _scholar(store: Store, name: str) -> int:
    return store.create_scholar(name, NOW)


def _all_text(store: Store) -> str:
    """Every value of every table that holds secrets, as one string."""
    db = cast(Any, store).db  # the backend's own connection: what is really stored
    rows = [
        *db.execute("SELECT * FROM users").fetchall(),
        *db.execute("SELECT * FROM api_tokens").fetchall(),
        *db.execute("SELECT * FROM feed_keys").fetchall(),
    ]
    return " ".join(str(v) for row in rows for v in row)


def test_each_reader_sees_only_their_own_state(store: Store) -> None:
    store.add_user("ada", hash_password("correct horse"), admin=True, now=NOW)  # takes reader 0
    ada = store.get_user("ada").reader
    bob = store.add_user("bob", hash_password("battery staple"), admin=False, now=NOW).reader
    mara, jon = _scholar(store, "Mara Lindqvist"), _scholar(store, "Jon Ode")
    store.set_followed(ada, mara, True, NOW)
    store.set_followed(bob, jon, True, NOW)
    store.set_mute(ada, "keyword", "benchmark", NOW)
    store.set_mute(bob, "scholar", str(mara), NOW)
    store.mark_story(ada, "2401.00001", NOW, saved=True)
    store.mark_story(bob, "2401.00002", NOW, read=True)
    store.save_reader_setting(bob, "digest_to", "bob@example.org")

    assert store.follows(ada) == {mara} and store.follows(bob) == {jon}
    assert [s.name for s in store.followed_scholars(ada)] == ["Mara Lindqvist"]
    assert store.mutes(ada).keyword == {"benchmark"} and not store.mutes(ada).scholar
    assert store.mutes(bob).scholar == {str(mara)} and not store.mutes(bob).keyword
    assert store.story_states(ada) == {"2401.00001": (None, NOW)}
    assert store.story_states(bob) == {"2401.00002": (NOW, None)}
    assert store.reader_settings(ada) == {}
    assert store.reader_settings(bob) == {"digest_to": "bob@example.org"}
    # Unfollowing is one reader's: the scholar stays tracked while anyone follows them.
    store.set_followed(bob, mara, True, NOW)
    store.set_followed(ada, mara, False, NOW)
    assert store.follows(ada) == frozenset() and store.get_scholar(mara).followed
    store.set_followed(bob, mara, False, NOW)
    assert not store.get_scholar(mara).followed
    # Removing an account removes what was its own, and nobody else's.
    store.remove_user(int(bob))
    assert store.follows(bob) == frozenset() and not store.story_states(bob)
    assert store.story_states(ada) == {"2401.00001": (None, NOW)}
    with pytest.raises(UsageError, match="not a reader's setting"):
        store.save_reader_setting(ada, "smtp_password", "x")


def test_the_first_account_takes_over_the_local_readers_state(store: Store) -> None:
    mara = _scholar(store, "Mara Lindqvist")
    store.set_followed(LOCAL_READER, mara, True, NOW)
    store.set_mute(LOCAL_READER, "keyword", "survey", NOW)
    store.mark_story(LOCAL_READER, "2401.00001", NOW, saved=True)
    store.save_reader_setting(LOCAL_READER, "digest_to", "me@example.org")
    store.set_feed_key(LOCAL_READER, digest("lnf_old"), NOW)

    first = store.add_user("ada", hash_password("correct horse"), admin=False, now=NOW)
    assert first.admin  # someone must manage sources and users
    assert store.follows(first.reader) == {mara}
    assert store.mutes(first.reader).keyword == {"survey"}
    assert store.story_states(first.reader) == {"2401.00001": (None, NOW)}
    assert store.reader_settings(first.reader) == {"digest_to": "me@example.org"}
    assert store.feed_key_reader(digest("lnf_old")) == first.reader
    assert not store.follows(LOCAL_READER) and not store.story_states(LOCAL_READER)
    second = store.add_user("bob", hash_password("battery staple"), admin=False, now=NOW)
    assert not second.admin and not store.follows(second.reader)
    with pytest.raises(UsageError, match="already an account"):
        store.add_user("bob", hash_password("another one"), admin=False, now=NOW)
    with pytest.raises(UsageError, match="last admin"):
        store.remove_user(first.id)


def test_tokens_are_hashed_at_rest_and_refused_once_revoked(store: Store) -> None:
    user = store.add_user("ada", hash_password("correct horse"), admin=True, now=NOW)
    token = new_token()
    made = store.create_token(user.id, "laptop", digest(token), NOW)
    assert store.token_user(digest(token), "2026-12-03T13:00:00Z") == user
    assert store.list_tokens(user.id)[0].last_used == "2026-12-03T13:00:00Z"
    store.token_user(digest(token), "2026-12-03T13:00:40Z")  # the same minute: not written
    assert store.list_tokens(user.id)[0].last_used == "2026-12-03T13:00:00Z"
    store.token_user(digest(token), "2026-12-03T13:01:05Z")
    assert store.list_tokens(user.id)[0].last_used == "2026-12-03T13:01:05Z"
    assert store.token_user(digest(new_token()), NOW) is None
    key = new_feed_key()
    store.set_feed_key(user.reader, digest(key), NOW)
    stored = _all_text(store)
    assert token not in stored and token.removeprefix("lnt_") not in stored
    assert key not in stored and "correct horse" not in stored
    store.revoke_token(user.id, made.id, NOW)
    assert store.token_user(digest(token), NOW) is None
    assert store.list_tokens(user.id)[0].revoked_at == NOW
    with pytest.raises(NotFound):
        store.revoke_token(user.id + 1, made.id, NOW)  # not another account's to revoke
    # A rotated feed key: the old one opens nothing.
    fresh = new_feed_key()
    store.set_feed_key(user.reader, digest(fresh), NOW)
    assert store.feed_key_reader(digest(key)) is None
    assert store.feed_key_reader(digest(fresh)) == user.reader


def test_passwords_sessions_audit_and_failures(store: Store) -> None:
    user = store.add_user("ada", hash_password("correct horse"), admin=True, now=NOW)
    found = store.password_hash("ada")
    assert found is not None and found[0] == user
    assert verify_password(found[1], "correct horse") and not verify_password(found[1], "wrong")
    assert not verify_password(None, "correct horse") and store.password_hash("nobody") is None
    store.set_password(user.id, hash_password("a new secret"))
    changed = store.get_user("ada")
    assert changed.session_epoch == user.session_epoch + 1  # every session ends
    store.end_sessions(user.id)
    assert store.get_user("ada").session_epoch == user.session_epoch + 2
    store.audit("ada", "sources.add", "feed https://example.org/feed.xml", NOW)
    store.audit("ada", "users.add", "bob", "2026-12-03T12:01:00Z")
    assert [(e.actor, e.action) for e in store.audit_log()] == [
        ("ada", "users.add"),
        ("ada", "sources.add"),
    ]
    for _ in range(3):
        store.record_sign_in_failure("ada", "127.0.0.1", NOW)
    store.record_sign_in_failure("bob", "127.0.0.1", NOW)
    assert store.sign_in_failures("ada", "127.0.0.1", "2026-12-03T11:00:00Z") == (3, 4)
    assert store.sign_in_failures("ada", "127.0.0.1", "2026-12-03T12:30:00Z") == (0, 0)
    store.clear_sign_in_failures("ada", "2026-12-03T11:00:00Z")
    assert store.sign_in_failures("ada", "127.0.0.1", "2026-12-03T11:00:00Z") == (0, 1)


def test_group_saves_count_members_who_share(store: Store) -> None:
    readers: dict[str, ReaderId] = {}
    for name in ("ada", "bob", "cy"):
        readers[name] = store.add_user(
            name, hash_password("password!"), admin=False, now=NOW
        ).reader
    store.mark_story(readers["ada"], "2401.00001", "2026-12-01T00:00:00Z", saved=True)
    store.mark_story(readers["bob"], "2401.00001", "2026-12-02T00:00:00Z", saved=True)
    store.mark_story(readers["cy"], "2401.00002", NOW, saved=True)
    store.mark_story(readers["ada"], "2401.00002", NOW, read=True)  # read is not saved
    [group] = store.group_saves()
    assert group.story_key == "2401.00001" and set(group.members) == {"ada", "bob"}
    assert group.first_saved == "2026-12-01T00:00:00Z"
    store.set_sharing(readers["bob"], False)
    assert store.group_saves() == []


def test_an_old_library_keeps_its_state_as_the_local_readers(tmp_path: object) -> None:
    """Migration 0012 on an SQLite library made before accounts: nothing is lost."""
    from pathlib import Path

    from lightnews.store import SQLiteStore

    path = Path(str(tmp_path)) / "old.db"
    db = sqlite3.connect(path)
    from lightnews.store.common import read_migrations

    for number, _, script in read_migrations("migrations"):
        if number < 12:
            db.executescript(script)
            db.execute(f"PRAGMA user_version = {number}")
    db.execute("INSERT INTO scholars (name, created_at, followed) VALUES ('Mara', ?, 1)", (NOW,))
    db.execute("INSERT INTO scholars (name, created_at, followed) VALUES ('Jon', ?, 0)", (NOW,))
    db.execute("INSERT INTO mutes VALUES ('keyword', 'survey', ?)", (NOW,))
    db.execute("INSERT INTO story_state VALUES ('2401.00001', NULL, ?)", (NOW,))
    db.execute("INSERT INTO settings VALUES ('digest_to', 'me@example.org')")
    db.commit()
    db.close()
    with SQLiteStore(path) as store:
        assert [s.name for s in store.followed_scholars(LOCAL_READER)] == ["Mara"]
        assert store.mutes(LOCAL_READER).keyword == {"survey"}
        assert store.story_states(LOCAL_READER) == {"2401.00001": (None, NOW)}
        assert store.reader_settings(LOCAL_READER) == {"digest_to": "me@example.org"}
        assert "digest_to" not in store.saved_settings()


def test_starter_pack_members_are_followed_for_whoever_followed_the_pack(store: Store) -> None:
    from lightnews.ingest.page import _pack_reader

    old, _ = store.add_source(
        "bluesky-starter-pack", "at://pack/old", now=NOW, params={"follow_members": True}
    )
    assert _pack_reader(store, old) == LOCAL_READER
    ada = store.add_user("ada", hash_password("correct horse"), admin=True, now=NOW)
    bob = store.add_user("bob", hash_password("battery staple"), admin=False, now=NOW)
    assert _pack_reader(store, old) == ada.reader  # who took the local reader's state over
    mine, _ = store.add_source(
        "bluesky-starter-pack",
        "at://pack/bob",
        now=NOW,
        params={"follow_members": True, "follow_for": bob.id},
    )
    assert _pack_reader(store, mine) == bob.reader
    store.remove_user(bob.id)
    assert _pack_reader(store, mine) == ada.reader
