"""Rank: each reader's learned model, trained off the feed's path and kept in the store.

Training a reader's model (:func:`~.learn.train_reader_model`) takes some 0.5 s
of CPU; a feed request has 20 ms. Trained inside the feed request whenever the
reader's saves, reads, feedback, lists or mutes had changed, it cost the first
feed after every change a third of a second, and each web process (``serve
--workers 2`` runs two) and the CLI trained its own. So the model is trained
once per change, outside the feed, and kept in the store (``reader_models``,
as JSON: :func:`~.learn.model_to_json`) with the digest of what it learned
from (:func:`learning_version`); every process reads that one model.

Who trains:

* **the worker**, on the group tier (PostgreSQL with workers running): a job
  per reader (:mod:`lightnews.worker`), queued when their signals change and
  waiting in the queue once per reader however many changes come;
* **the process that handled the write** otherwise (an embedded ``lightnews
  serve``): :data:`TRAINER`, a thread of its own, after the answer went out
  (a write request is no slower); there it also ranks the reader's feed once,
  so the slice their new model chooses (:mod:`.category_slice`) is chosen
  there, not in their next request. The CLI trains inline after its own write
  command (:meth:`Trainer.train_now`) and lets what a feed scheduled finish
  before it exits.

A feed request (:func:`model_for_feed`) never trains when a stored model
exists: it uses the newest stored one, even behind what the reader did since,
and makes sure a training is scheduled. Only a reader with no stored model at
all and something to learn from is trained in the request, once in their
life: the first save is when a reader is watching for what it changes, a
feed served without a model would say "nothing learned from your saves yet"
right after they saved, and it costs one request a third of a second once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from lightnews.rank.learn import (
    LAYOUT,
    Because,
    ReaderModel,
    model_document,
    model_from_document,
    store_features,
    train_reader_model,
)
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.readers import ReaderId
from lightnews.store.views import Mutes

__all__ = [
    "STORED",
    "TRAINER",
    "StoredModels",
    "Trainer",
    "current_version",
    "learning_version",
    "model_for_feed",
    "train_and_store",
]

log = logging.getLogger("lightnews.rank")

#: Seconds a reader's queued training is not queued again (it waits in the queue, or runs).
QUEUED_FOR = 10.0

#: Locks that keep a reader's trainings in this process one at a time (readers share them).
TURNS = 64

#: Queues a reader's training elsewhere (the group tier's workers); False: not queued,
#: train here.
Queue = Callable[[Store, ReaderId], bool]


def learning_version(
    encoder: str,
    states: Mapping[str, tuple[str | None, str | None]],
    feedback: Mapping[int, str],
    lists: Mapping[str, list[str]],
    mutes: Mutes,
) -> str:
    """The digest of what a reader's model learns from: their saves, reads, word on
    papers, saved lists, muted scholars and keywords, and the encoder of its vectors.
    A model of another digest learned from something else (the reader did something)."""
    read = max((r or "" for r, _ in states.values()), default="")
    described = {
        "layout": LAYOUT,
        "encoder": encoder,
        "saved": sorted(k for k, (_, at) in states.items() if at),
        "read": [read, len(states)],
        "feedback": sorted([p, d] for p, d in feedback.items()),
        "lists": sorted([k, sorted(v)] for k, v in lists.items()),
        "muted": [sorted(mutes.scholar), sorted(mutes.keyword)],
    }
    text = json.dumps(described, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def current_version(store: Store, reader: ReaderId, settings: Settings) -> str | None:
    """The reader's :func:`learning_version` as the store has it now; None when there is
    nothing to learn from (nothing saved, no "more like this")."""
    states = store.story_states(reader)
    feedback = store.paper_feedback(reader)
    if not _learns(states, feedback):
        return None
    return learning_version(
        str(settings.semantic), states, feedback, store.saved_lists(reader), store.mutes(reader)
    )


def _learns(
    states: Mapping[str, tuple[str | None, str | None]], feedback: Mapping[int, str]
) -> bool:
    return any(at for _, at in states.values()) or "more-like-this" in feedback.values()


def _primary(store: Store) -> Store:
    """Where a model is written: the library itself, not a read replica of it."""
    found: Store | None = getattr(store, "replica_of", None)
    return store if found is None else found


def train_and_store(
    store: Store, reader: ReaderId, settings: Settings, version: str | None = None
) -> bool:
    """Train the reader's model and keep it, unless the stored one is of the current
    version (``version``, else read from the store) or there is nothing to learn from;
    whether it trained. Every training of this package goes through here."""
    store = _primary(store)
    # A model is as of when its training began: the store keeps the one that began last,
    # so a training that read older data and ends later does not replace a newer model.
    began = datetime.now(UTC).isoformat(timespec="microseconds")
    version = version or current_version(store, reader, settings)
    if version is None:
        return False
    head = store.reader_model_version(reader)
    if head is not None and head[0] == version:
        return False
    # The same reader and data learn the same model (the random papers drawn by reader).
    model = train_reader_model(store, reader, settings, seed=int(reader))
    found = None if model is None else _document(model, str(settings.semantic))
    # To the microsecond: a model trained again within the second is told apart.
    store.save_reader_model(reader, version, began, found)
    return True


def _document(model: ReaderModel, encoder: str) -> str:
    """The stored text: the model (:func:`~.learn.model_document`) and its vectors' encoder."""
    return json.dumps({"encoder": encoder, "model": model_document(model)}, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class _Loaded:
    version: str
    trained_at: str
    encoder: str
    model: ReaderModel | None
    #: The model's word on papers it was asked about (:attr:`ReaderModel.memo`).
    memo: dict[int, Because | None] = field(default_factory=dict)


class StoredModels:
    """The stored models this process has read, kept while the store holds the same one
    (one small row read per feed request tells; a changed one is read and parsed again)."""

    def __init__(self, keep: int = 256) -> None:
        self.keep = keep
        self._kept: dict[tuple[str, int], _Loaded] = {}
        self._lock = threading.Lock()

    def get(
        self, store: Store, reader: ReaderId, settings: Settings
    ) -> tuple[str, ReaderModel | None] | None:
        """The reader's stored model and its version (the model None: that version had
        nothing to learn from); None when none is stored that this process can use (none
        at all, or one over another encoder's vectors)."""
        head = store.reader_model_version(reader)
        if head is None:
            return None
        key = (str(store.path), int(reader))
        with self._lock:
            kept = self._kept.get(key)
        if kept is None or (kept.version, kept.trained_at) != head:
            kept = self._load(store, reader)
            if kept is None:
                return None
            with self._lock:
                self._kept.pop(key, None)
                self._kept[key] = kept
                while len(self._kept) > self.keep:  # the longest unused goes first
                    self._kept.pop(next(iter(self._kept)))
        if kept.model is None:  # learned nothing (its version names the encoder too)
            return kept.version, None
        encoder = str(settings.semantic)
        if kept.encoder != encoder:  # another encoder's vectors: of no use here
            return None
        # Its papers' features are read through this store (another may be shut).
        return kept.version, replace(
            kept.model, source=store_features(store, encoder), memo=kept.memo
        )

    @staticmethod
    def _load(store: Store, reader: ReaderId) -> _Loaded | None:
        row = store.reader_model(reader)
        if row is None:
            return None
        if row.model is None:
            return _Loaded(row.version, row.trained_at, "", None)
        try:
            found = json.loads(row.model)
            model = model_from_document(found["model"])
        except (ValueError, KeyError, TypeError):  # another layout: as if none were stored
            log.warning("reader %s: the stored model cannot be read; training anew", reader)
            return None
        return _Loaded(row.version, row.trained_at, str(found["encoder"]), model)

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()


#: A training asked for: where, whose, with which settings, and what to run after it.
_Asked = tuple[Store, ReaderId, Settings, Callable[[], object] | None]


class Trainer:
    """Trains readers' models in a thread of this process, each reader once however often
    asked while it waits (:meth:`schedule`); :meth:`drain` waits until all are done.

    ``queue``, when set (the web server of a PostgreSQL library), is asked first: when
    it queues the training for the workers, this process does not train.
    """

    def __init__(self) -> None:
        self.queue: Queue | None = None
        self._pending: dict[tuple[str, int], _Asked] = {}
        self._busy: set[tuple[str, int]] = set()
        # One training of a reader at a time in this process, by a lock of a fixed set
        # (a lock per reader ever trained would be kept for the life of the process).
        self._turns = tuple(threading.Lock() for _ in range(TURNS))
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._queued: dict[tuple[str, int], float] = {}  # when each was last queued
        #: Trainings done by this process (:func:`train_and_store` that trained).
        self.trained = 0

    def schedule(
        self,
        store: Store,
        reader: ReaderId,
        settings: Settings,
        then: Callable[[], object] | None = None,
    ) -> None:
        """Have the reader's model trained soon (if what it learns from changed), off the
        caller's thread: returns at once. ``then`` runs in that thread once this process
        trained it (a web server chooses the reader's slice with it there)."""
        key = (str(store.path), int(reader))
        with self._changed:
            waiting = self._pending.get(key)
            then = then or (waiting[3] if waiting else None)
            self._pending[key] = (_primary(store), reader, settings, then)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="lightnews-trainer", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    def train_now(self, store: Store, reader: ReaderId, settings: Settings) -> bool:
        """Train here, now (the CLI after a write, a reader's first feed); a training of
        the same reader under way in the thread is waited for, not repeated."""
        store = _primary(store)
        with self._turn((str(store.path), int(reader))):
            done = train_and_store(store, reader, settings)
        if done:
            with self._changed:
                self.trained += 1
            STORED.get(store, reader, settings)  # read in now, not by the next feed
        return done

    def drain(self, timeout: float = 120.0) -> bool:
        """Wait until every scheduled training is done (tests, the CLI before it exits);
        whether they were within ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._pending and not self._busy, timeout)

    def settle(self, store: Store, timeout: float = 120.0) -> bool:
        """Before ``store`` is closed: drop its trainings not started, and wait for those
        under way (closing a database under a training thread's query crashed the
        process); whether they ended within ``timeout`` seconds."""
        path = str(_primary(store).path)
        with self._changed:
            for key in [k for k in self._pending if k[0] == path]:
                del self._pending[key]
            return self._changed.wait_for(
                lambda: not any(k[0] == path for k in self._busy), timeout
            )

    def _queue(self, key: tuple[str, int], store: Store, reader: ReaderId) -> bool:
        """Whether the training is left to the workers: queued now, or lately (a feed asks
        at every request while its model is behind; the queue keeps one job anyway)."""
        if self.queue is None:
            return False
        now = time.monotonic()
        if now - self._queued.get(key, -QUEUED_FOR) < QUEUED_FOR:
            return True
        if not self.queue(store, reader):
            return False
        with self._changed:
            self._queued[key] = now
            if len(self._queued) > 4096:
                self._queued.pop(next(iter(self._queued)))
        return True

    def _turn(self, key: tuple[str, int]) -> threading.Lock:
        """The lock a training of ``key`` holds: the same for the same reader; two readers
        share one rarely, and then one waits for the other's training to end."""
        return self._turns[hash(key) % TURNS]

    def _run(self) -> None:
        while True:
            with self._changed:
                if not self._changed.wait_for(lambda: bool(self._pending), timeout=30.0):
                    self._thread = None  # idle: a new one starts with the next training
                    return
                key, (store, reader, settings, then) = next(iter(self._pending.items()))
                del self._pending[key]
                self._busy.add(key)
            try:
                trained = not self._queue(key, store, reader) and self.train_now(
                    store, reader, settings
                )
                if trained and then is not None:
                    then()
            except Exception:  # a store shut meanwhile, a lost database: the next change retries
                log.exception("reader %s: training their model failed", reader)
            finally:
                with self._changed:
                    self._busy.discard(key)
                    self._changed.notify_all()


#: The stored models this process has read, and its trainer.
STORED = StoredModels()
TRAINER = Trainer()


def model_for_feed(
    store: Store, reader: ReaderId, settings: Settings, version: str
) -> tuple[ReaderModel, str] | None:
    """The reader's model for a feed request whose signals are of ``version``, with the
    version it learned from: the stored one, even behind (a training is then scheduled,
    never run here); with none stored, it is trained here, this once (see the module's
    docstring for why). None: it learned nothing (no vectors yet)."""
    found = STORED.get(store, reader, settings)
    if found is None:
        TRAINER.train_now(store, reader, settings)
        found = STORED.get(_primary(store), reader, settings)
        if found is None or found[1] is None:
            return None
        model = replace(found[1], source=store_features(store, str(settings.semantic)))
        return model, found[0]
    stored_version, model_ = found
    if stored_version != version:
        TRAINER.schedule(store, reader, settings)
    return None if model_ is None else (model_, stored_version)
