"""Readers' models are trained off the feed and kept in the store, on both backends.

A stored model is read by another store instance (another web process, the CLI)
without training; a feed request whose stored model is behind what the reader did
uses it and leaves the training to the trainer's thread (trainings counted); a
reader's first feed trains once. The model survives JSON exactly.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from lightnews.rank import rank_stories
from lightnews.rank.learn import (
    SAVED,
    Interest,
    Params,
    TrainingSet,
    fit_reader_model,
    model_from_json,
    model_to_json,
)
from lightnews.rank.test_learn import NOW, READER, SETTINGS, library, saved_by_topic
from lightnews.rank.trained import (
    STORED,
    TRAINER,
    StoredModels,
    current_version,
    train_and_store,
)
from lightnews.store import SQLiteStore, Store
from lightnews.store.readers import ReaderId

__all__ = ["library"]  # the fixture, shared with test_learn.py


def test_a_model_survives_json_exactly() -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    raw = rng.normal(size=(40, 16))
    vectors = {i: (v / np.linalg.norm(v)).astype(np.float32) for i, v in enumerate(raw)}
    words = {i: Counter({f"w{i % 5}": 2, f"v{i % 3}": 1}) for i in vectors}
    training = TrainingSet(
        (Interest(SAVED, (0, 1, 2)), Interest("robots", (3, 4))), background=tuple(range(10, 40))
    )
    model = fit_reader_model(training, vectors, words, Params())
    assert model is not None
    again = model_from_json(model_to_json(model))
    ranked = list(range(5, 40))
    matrix = np.stack([vectors[p] for p in ranked])
    assert model.score_features(matrix, [words[p] for p in ranked]) == again.score_features(
        matrix, [words[p] for p in ranked]
    )
    assert again.interests == model.interests
    with pytest.raises(ValueError, match="layout"):
        model_from_json('{"layout": 0}')


@pytest.fixture
def trainings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The threads that trained a model, one entry per training, however it was asked for
    (``MainThread``: the caller's, here a feed request's; ``lightnews-trainer``: off it)."""
    done: list[str] = []
    from lightnews.rank.learn import train_reader_model as real

    def counted(store: Store, reader: int, *args: object, **kwargs: object) -> object:
        done.append(threading.current_thread().name)
        return real(store, ReaderId(reader), *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("lightnews.rank.trained.train_reader_model", counted)
    monkeypatch.setattr(TRAINER, "queue", None)  # no workers: this process trains
    STORED.forget()
    yield done
    TRAINER.drain()
    STORED.forget()


def another_instance(store: Store) -> Store:
    """The same library opened again, as another process would."""
    if isinstance(store, SQLiteStore):
        return SQLiteStore(Path(store.path))
    from lightnews.store.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    return PostgresStore(store.url, pool_size=2)


def test_a_stored_model_is_shared_without_training_again(
    library: tuple[Store, dict[str, list[int]]], trainings: list[str]
) -> None:
    store, ids = library
    assert not TRAINER.train_now(store, READER, SETTINGS)  # nothing saved: nothing to learn
    saved_by_topic(store, ids, "robot", 4)
    assert TRAINER.train_now(store, READER, SETTINGS)  # as the CLI does after a save
    assert not TRAINER.train_now(store, READER, SETTINGS)  # current: not again
    assert trainings == ["MainThread"]
    row = store.reader_model(READER)
    assert row is not None and row.model is not None
    assert row.version == current_version(store, READER, SETTINGS)

    here = STORED.get(store, READER, SETTINGS)
    other = another_instance(store)
    try:
        there = StoredModels().get(other, READER, SETTINGS)  # another process's memory
        assert here is not None and there is not None and here[0] == there[0]
        assert here[1] is not None and there[1] is not None
        candidates = ids["robot"][4:] + ids["other"][:20]
        assert here[1].score(candidates) == pytest.approx(there[1].score(candidates))
        # Its feed uses the stored model: no training in that process either.
        feed = rank_stories(other, READER, limit=None, settings=SETTINGS)
        assert feed and trainings == ["MainThread"]
    finally:
        other.close()


def test_a_feed_with_a_stale_model_does_not_train(
    library: tuple[Store, dict[str, list[int]]], trainings: list[str]
) -> None:
    store, ids = library
    saved_by_topic(store, ids, "robot", 4)
    rank_stories(store, READER, limit=None, settings=SETTINGS)  # the first feed trains, once
    assert trainings == ["MainThread"]
    first = store.reader_model(READER)
    assert first is not None
    rank_stories(store, READER, limit=None, settings=SETTINGS)
    assert trainings == ["MainThread"]  # current: used as it is

    video = ids["video generation"]
    store.set_paper_feedback(READER, video[0], "not-interested", NOW)  # now it is behind
    assert rank_stories(store, READER, limit=None, settings=SETTINGS)
    assert TRAINER.drain()
    assert trainings == ["MainThread", "lightnews-trainer"]  # off the request, once
    now = store.reader_model(READER)
    assert now is not None and now.version != first.version
    assert now.version == current_version(store, READER, SETTINGS)
    rank_stories(store, READER, limit=None, settings=SETTINGS)
    assert TRAINER.drain() and len(trainings) == 2  # current again: nothing to train


def test_a_training_of_older_data_that_ends_last_does_not_replace_a_newer_model(
    library: tuple[Store, dict[str, list[int]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes train one reader at once: the first read the reader's data, the
    reader acted, the second read the new data and saved first. The first, ending
    last, must not put its older model back (the next feed would heal it, but until
    then the reader's feed ignores what they just did)."""
    store, ids = library
    saved_by_topic(store, ids, "robot", 4)
    older = current_version(store, READER, SETTINGS)
    from lightnews.rank.learn import train_reader_model as real

    calls: list[str] = []

    def slow(store: Store, reader: int, *args: object, **kwargs: object) -> object:
        calls.append("trained")
        if len(calls) == 1:  # while the first training runs, the reader acts and a second one
            store.set_paper_feedback(READER, ids["video generation"][0], "not-interested", NOW)
            assert train_and_store(store, READER, SETTINGS)  # ... trains and saves first
        return real(store, ReaderId(reader), *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("lightnews.rank.trained.train_reader_model", slow)
    assert train_and_store(store, READER, SETTINGS, older)
    assert calls == ["trained", "trained"]
    newer = current_version(store, READER, SETTINGS)
    assert newer != older
    kept = store.reader_model_version(READER)
    assert kept is not None and kept[0] == newer  # the second training's, not the first's
    # A training that began later still replaces it.
    store.set_paper_feedback(READER, ids["video generation"][1], "not-interested", NOW)
    assert train_and_store(store, READER, SETTINGS)
    latest = store.reader_model_version(READER)
    assert latest is not None and latest[0] == current_version(store, READER, SETTINGS)
    assert latest[1] > kept[1]


def test_a_store_is_closed_only_after_its_trainings(
    library: tuple[Store, dict[str, list[int]]], trainings: list[str]
) -> None:
    """A web server shutting down waits for the training its thread is running (closing
    the database under the thread's query crashed the test process once), and drops the
    ones not started."""
    store, ids = library
    saved_by_topic(store, ids, "robot", 4)
    started, release = threading.Event(), threading.Event()
    order: list[str] = []

    def then() -> None:  # what a server does after a training: rank the reader's feed
        started.set()
        release.wait(10)
        rank_stories(store, READER, limit=1, settings=SETTINGS)
        order.append("ranked")

    TRAINER.schedule(store, READER, SETTINGS, then=then)
    assert started.wait(60)
    TRAINER.schedule(store, ReaderId(READER + 1), SETTINGS)  # waits behind it: dropped
    settled: list[bool] = []
    closing = threading.Thread(target=lambda: settled.append(TRAINER.settle(store)))
    closing.start()
    closing.join(0.3)
    assert closing.is_alive() and not settled  # still waiting for the one under way
    release.set()
    closing.join(60)
    order.append("settled")
    assert settled == [True] and order == ["ranked", "settled"]
    assert trainings == ["lightnews-trainer"]  # the second reader's was not started
