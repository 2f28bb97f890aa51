"""Scheduled digests: due once per period, sent once by however many workers, on both backends.

E-mail goes to a real local SMTP server (aiosmtpd), as in ``test_digest``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from aiosmtpd.controller import Controller

from lightnews.deliver.digest import (
    CLAIM_TIMEOUT,
    DigestOutcome,
    Recipient,
    deliver_due_digest,
    library_recipient,
    parse_schedule,
)
from lightnews.deliver.test_digest import Inbox, Refusing
from lightnews.demo import build_demo
from lightnews.errors import FetchError
from lightnews.settings import Settings
from lightnews.store import Store, open_store
from lightnews.store.readers import LOCAL_READER

#: Half a day after the demo's newest stories: the daily 07:00 digest is due.
NOW = datetime(2025, 11, 28, 12, 0, tzinfo=UTC)
PERIOD = "2025-11-28T07:00:00Z"


def _serve(handler: object) -> tuple[Controller, int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    return controller, int(port)


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    controller, port = _serve(inbox)
    yield inbox, port
    controller.stop()


@pytest.fixture
def library(store: Store) -> Store:
    build_demo(store, Settings(environ={}).with_overrides(resolve_online=False, semantic="off"))
    return store


def _settings(port: int) -> Settings:
    return Settings(environ={}).with_overrides(
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_from="digest@lightnews.example",
        digest_to="reader@example.org",
        digest_schedule="daily 07:00",
        semantic="off",
    )


def _recipient(settings: Settings) -> Recipient:
    recipient = library_recipient(settings)
    assert recipient is not None
    return recipient


def _location(store: Store) -> str:
    return str(getattr(store, "url", store.path))


def _unread(store: Store) -> bool:
    return not any(read for read, _ in store.story_states(LOCAL_READER).values())


def test_schedules_read_as_said_and_know_their_latest_due_moment() -> None:
    assert parse_schedule("off") is None and parse_schedule("") is None
    daily = parse_schedule("Daily 7:00")
    assert daily is not None and str(daily) == "daily 07:00"
    assert daily.last_due(NOW) == datetime(2025, 11, 28, 7, 0, tzinfo=UTC)
    early = datetime(2025, 11, 28, 6, 59, tzinfo=UTC)
    assert daily.last_due(early) == datetime(2025, 11, 27, 7, 0, tzinfo=UTC)
    weekly = parse_schedule("weekly monday 07:30")  # 2025-11-28 is a Friday
    assert weekly is not None and str(weekly) == "weekly mon 07:30"
    assert weekly.last_due(NOW) == datetime(2025, 11, 24, 7, 30, tzinfo=UTC)
    monday_early = datetime(2025, 11, 24, 7, 0, tzinfo=UTC)
    assert weekly.last_due(monday_early) == datetime(2025, 11, 17, 7, 30, tzinfo=UTC)
    for bad in ("sometimes", "daily 24:00", "daily 07:60", "weekly someday 07:00", "daily"):
        with pytest.raises(ValueError):
            parse_schedule(bad)
    # No address or no schedule: no scheduled digest.
    assert library_recipient(Settings(environ={})) is None
    assert library_recipient(Settings(environ={}).with_overrides(digest_to="a@b.org")) is None


def test_a_due_digest_goes_out_once_with_several_workers_and_a_retry(
    library: Store, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    settings = _settings(port)
    outcomes: list[DigestOutcome] = []
    errors: list[BaseException] = []

    def worker() -> None:
        store = open_store(_location(library))  # each worker its own connection
        try:
            outcomes.append(deliver_due_digest(store, settings, _recipient(settings), NOW))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            store.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(o.status for o in outcomes).count("delivered") == 1, outcomes
    (message,) = inbox.messages
    assert message["To"] == "reader@example.org" and "Lightnews digest" in message["Subject"]
    assert message["Message-ID"].startswith("<digest-")
    sent = next(o for o in outcomes if o.status == "delivered")
    assert sent.period == PERIOD and sent.stories >= 3
    # A retry of the job (or the next tick) finds it delivered: nothing sent again.
    again = deliver_due_digest(library, settings, _recipient(settings), NOW + timedelta(hours=1))
    assert again.status == "already delivered" and len(inbox.messages) == 1
    (record,) = library.digest_deliveries("library")
    assert record.period == PERIOD and record.sent_at and record.stories == sent.stories
    assert not _unread(library)  # its stories count as read
    # The next day's period is due the next day, and has only what is new since.
    tomorrow = deliver_due_digest(library, settings, _recipient(settings), NOW + timedelta(days=1))
    assert tomorrow.period == "2025-11-29T07:00:00Z" and tomorrow.status == "nothing new"
    assert len(inbox.messages) == 1


def test_a_refused_digest_stays_due_and_goes_out_at_the_next_look(
    library: Store, smtp: tuple[Inbox, int]
) -> None:
    refusing = Refusing()
    controller, port = _serve(refusing)
    try:
        with pytest.raises(FetchError):
            deliver_due_digest(library, _settings(port), _recipient(_settings(port)), NOW)
    finally:
        controller.stop()
    assert refusing.tried == 1
    assert library.digest_deliveries("library") == [] and _unread(library)
    inbox, good = smtp
    later = NOW + timedelta(minutes=1)
    outcome = deliver_due_digest(library, _settings(good), _recipient(_settings(good)), later)
    assert outcome.status == "delivered" and len(inbox.messages) == 1


def test_a_claim_left_by_a_dead_worker_is_taken_over_after_its_timeout(
    library: Store, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    settings = _settings(port)
    claimed = NOW - timedelta(minutes=1)
    stamp = claimed.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert library.claim_digest("library", PERIOD, stamp, "2000-01-01T00:00:00Z", "dead-1")
    busy = deliver_due_digest(library, settings, _recipient(settings), NOW)
    assert busy.status == "being sent" and inbox.messages == []
    late = claimed + CLAIM_TIMEOUT + timedelta(seconds=1)
    taken = deliver_due_digest(library, settings, _recipient(settings), late)
    assert taken.status == "delivered" and len(inbox.messages) == 1
    (record,) = library.digest_deliveries("library")
    assert record.claimed_by != "dead-1"


def test_a_worker_sends_the_library_digest_from_its_periodic_job(
    store: Store, smtp: tuple[Inbox, int]
) -> None:
    if not store.vectors_indexed:
        pytest.skip("workers run on PostgreSQL")
    from lightnews.worker.jobs import DIGEST_TASK, Worker
    from lightnews.worker.queue import build_app

    inbox, port = smtp
    url = _location(store)
    worker = Worker(url)
    try:
        assert "no digest scheduled" in worker.digest().summary
        settings = _settings(port)
        for name in ("smtp_host", "smtp_port", "smtp_from", "digest_to", "digest_schedule"):
            store.save_setting(name, str(settings.get(name)))
        first = worker.digest()  # an empty library: the period is done, nothing to send
        assert first.ok and "nothing new" in first.summary
        assert "already delivered" in worker.digest().summary
        assert inbox.messages == []
        assert DIGEST_TASK in build_app(url, worker).tasks
    finally:
        worker.close()
