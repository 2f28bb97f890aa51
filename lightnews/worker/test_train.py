"""A reader's model is trained by the worker's job and kept in the library (PostgreSQL).

The job runs as a worker runs it (:class:`~lightnews.worker.jobs.Worker`, in this
process); deferring it waits once per reader in the queue (its queueing lock),
however many times the reader's signals change before a worker takes it.
"""

from __future__ import annotations

import asyncio

import pytest

from lightnews.embed import embed_papers, forget_cached
from lightnews.embed.encoders import missing_packages
from lightnews.model import Paper
from lightnews.rank.trained import current_version
from lightnews.settings import Settings
from lightnews.store.readers import ReaderId

psycopg = pytest.importorskip("psycopg", reason="workers need the server extra")
pytest.importorskip("procrastinate", reason="workers need the server extra")

from lightnews.store.postgres import PostgresStore  # noqa: E402
from lightnews.worker import queue  # noqa: E402
from lightnews.worker.jobs import TRAIN_TASK, Worker  # noqa: E402
from lightnews.worker.queue import (  # noqa: E402
    TRAIN_QUEUE,
    build_app,
    queue_training,
    training_queue,
)

SETTINGS = Settings(environ={})
NOW = "2026-08-01T00:00:00Z"
READER = ReaderId(3)


def waiting(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE task_name = %s AND status = 'todo'",
            (TRAIN_TASK,),
        ).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.skipif(
    bool(missing_packages(str(SETTINGS.semantic))),
    reason="needs the semantic extra: pip install -e '.[semantic]'",
)
def test_the_worker_job_trains_and_stores_the_model(pg_url: str) -> None:
    words = ["robot grasping", "speech recognition", "protein folding", "graph networks"]
    papers = [
        Paper(
            f"2501.{n:05d}",
            title=f"{words[n % 4]} study {n}",
            abstract=f"We study {words[n % 4]} with method {n}.",
            categories=["cs.LG"],
            published="2025-01-02T00:00:00Z",
        )
        for n in range(40)
    ]
    store = PostgresStore(pg_url, pool_size=2)
    store.save_papers(papers, NOW)
    forget_cached()
    embed_papers(store, SETTINGS)
    for paper in papers[:8:4]:
        store.mark_story(READER, paper.arxiv_id, NOW, saved=True)
    assert queue_training(pg_url, [int(READER)]) == 1
    worker = Worker(pg_url)
    try:
        app = build_app(pg_url, worker)

        async def work_off_the_queue() -> None:
            async with app.open_async():
                await app.run_worker_async(
                    queues=[TRAIN_QUEUE], wait=False, install_signal_handlers=False
                )

        asyncio.run(work_off_the_queue())  # the jobs waiting, then it stops
        assert waiting(pg_url) == 0
        row = worker.store.reader_model(READER)
        assert row is not None and row.model is not None
        assert worker.train(int(READER)).summary == f"reader {READER}: model current"
        store.mark_story(READER, papers[1].arxiv_id, NOW, read=True)
        assert worker.train(int(READER)).summary == f"reader {READER}: model trained"
        row = worker.store.reader_model(READER)
        assert row is not None and row.model is not None
        assert row.version == current_version(worker.store, READER, worker.settings())
    finally:
        worker.close()
        store.close()
        forget_cached()


def test_training_waits_in_the_queue_once_per_reader(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert queue_training(pg_url, [1, 2]) == 2
    assert queue_training(pg_url, [1, 2, 2]) == 0  # already waiting: not again
    assert waiting(pg_url) == 2
    monkeypatch.setattr(queue, "WORKERS_SEEN_FOR", -1.0)  # look again at every call
    with PostgresStore(pg_url, pool_size=2) as store:
        # No worker beats its heart: the web trains itself, else no one would.
        assert not training_queue(store, 4)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now())")
        assert training_queue(store, 4) and training_queue(store, 4)  # for the workers...
        assert waiting(pg_url) == 3  # ...once
        store.close()
