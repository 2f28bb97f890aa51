"""The worker's queue: procrastinate on the library's PostgreSQL, and the worker's process.

:func:`build_app` declares the tasks (a refresh job per source, periodic jobs
once for the whole cluster every ``worker_tick``), :func:`run_worker` runs a
worker process until it is stopped or loses its database for longer than its
bound, and the stalled jobs of workers gone silent are handed back
(:func:`recover_once`). See :mod:`lightnews.worker` for what holds however many
workers run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from lightnews.errors import Unavailable
from lightnews.ingest.refresh import due_for_refresh
from lightnews.normalize.times import iso, utc_now
from lightnews.settings import Settings, tick_period
from lightnews.store.cluster import job_alive, job_turn, recovery_turn
from lightnews.store.postgres import PostgresStore, redact
from lightnews.worker.jobs import (
    DEFER_TASK,
    DIGEST_TASK,
    EMBED_TASK,
    LISTEN_TASK,
    REFRESH_TASK,
    STUBS_TASK,
    TRAIN_TASK,
    JobOutcome,
    Worker,
)

__all__ = [
    "TRAIN_QUEUE",
    "QueueStatus",
    "build_app",
    "cron_every",
    "defer_refresh",
    "queue_refresh",
    "queue_status",
    "queue_training",
    "recover_once",
    "run_worker",
    "tick_period",
    "training_queue",
]


#: A listening job lasts this many worker ticks, then the next one resumes from its cursor.
LISTEN_TICKS = 10

#: Heartbeats a worker may miss before its jobs are looked at (handed back if no one holds them).
MISSED_BEATS = 3

#: Seconds of silence after which a worker's row is removed from the queue's tables: it
#: would be dead anyway. Removing a slow worker's row sooner would fail its next fetch.
FORGET_WORKER = 3600.0

log = logging.getLogger("lightnews.worker")


def source_lock(source_id: int) -> str:
    """The queue lock (and queueing lock) of a source's refresh jobs."""
    return f"source-{source_id}"


def cron_every(seconds: int) -> str:
    """The cron procrastinate fires every :func:`tick_period` of ``seconds`` by.

    procrastinate's croniter reads five fields (minute hour day month weekday)
    and an optional sixth, *seconds*, last: ``0 */1 * * * *`` is every second
    of minute 0 of each hour, not every minute.
    """
    period = tick_period(seconds)
    if period < 60:
        return "* * * * * *" if period == 1 else f"* * * * * */{period}"
    if period < 3600:
        return f"*/{period // 60} * * * *"
    if period < 86400:
        return f"0 */{period // 3600} * * *"
    return "0 0 * * *"


def build_app(url: str, worker: Worker | None = None, *, tick: int = 60) -> Any:
    """The procrastinate app of a library: its tasks, and with a ``worker``, their code.

    Without a worker the app can only defer jobs (tests, benchmarks, tools);
    a worker's app also runs them, and defers the periodic jobs.
    """
    from procrastinate import App, PsycopgConnector, RetryStrategy

    # A connection waited for 10 s at most: a lost database is noticed within a heartbeat or so.
    connector = PsycopgConnector(
        conninfo=url, timeout=10.0, kwargs={"application_name": "lightnews"}
    )
    app = App(connector=connector)
    if worker is None:
        return app
    # The database was unreachable or busy: not the source's fault, so try again.
    again = RetryStrategy(
        max_attempts=5, wait=5, exponential_wait=2, retry_exceptions={Unavailable}
    )

    def periodic_task(name: str) -> Callable[[Callable[..., str]], Any]:
        """A periodic job: one waits and one runs at a time in the cluster."""
        task: Callable[[Callable[..., str]], Any] = app.task(
            name=name, lock=name, queueing_lock=name, retry=again, pass_context=True
        )
        return task

    def held(context: Any) -> AbstractContextManager[None]:
        """The job's own lock, held while it runs (see :func:`job_turn`)."""
        return job_turn(worker.store, int(context.job.id))

    @app.task(name=REFRESH_TASK, retry=again, pass_context=True)
    def refresh_source(context: Any, source_id: int, force: bool = False) -> str:
        with held(context):
            return worker.refresh(source_id, force).summary

    @app.periodic(cron=cron_every(tick))
    @app.task(name=DEFER_TASK, lock=DEFER_TASK, queueing_lock=DEFER_TASK)
    async def defer_due(timestamp: int) -> str:
        rows = await asyncio.to_thread(worker.due_sources)
        deferred = set(await _defer_each(app, [row.id for row in rows]))
        worker.queued(row for row in rows if row.id in deferred)
        return f"{len(deferred)} of {len(rows)} due sources queued"

    @app.task(name=TRAIN_TASK, queue=TRAIN_QUEUE, retry=again, pass_context=True)
    def train_reader(context: Any, reader: int) -> str:
        with held(context):
            return worker.train(reader).summary

    @app.periodic(cron=cron_every(tick))
    @periodic_task(EMBED_TASK)
    def embed_new_papers(context: Any, timestamp: int) -> str:
        with held(context):
            return worker.embed().summary

    @app.periodic(cron=cron_every(tick))
    @periodic_task(STUBS_TASK)
    def resolve_stub_papers(context: Any, timestamp: int) -> str:
        with held(context):
            return worker.resolve().summary

    @app.periodic(cron=cron_every(tick))
    @periodic_task(LISTEN_TASK)
    def listen_to_network(context: Any, timestamp: int) -> str:
        with held(context):
            return worker.listen(float(tick * LISTEN_TICKS)).summary

    @app.periodic(cron=cron_every(tick))
    @periodic_task(DIGEST_TASK)
    def send_due_digest(context: Any, timestamp: int) -> str:
        with held(context):
            return worker.digest().summary

    return app


async def defer_refresh(app: Any, source_ids: Iterable[int], *, force: bool = False) -> int:
    """Queue a refresh job per source (one waiting per source at most); returns how many."""
    return len(await _defer_each(app, source_ids, force=force))


#: A waiting refresh job made forced: a forced refresh asked while a periodic look's job
#: waits would otherwise be refused, and that job find the source not due.
_FORCE_WAITING = """
    UPDATE procrastinate_jobs SET args = args || '{"force": true}'::jsonb
    WHERE queueing_lock = %(lock)s AND status = 'todo'
      AND NOT coalesce((args ->> 'force')::boolean, false)
    RETURNING id
"""


async def _defer_each(app: Any, source_ids: Iterable[int], *, force: bool = False) -> list[int]:
    """Queue a refresh job per source not already waiting; the ids queued.

    With ``force``, a source whose job waits unforced has that job made forced
    (and counts as queued): one job waits per source, and it does what was asked last.
    """
    from procrastinate.exceptions import AlreadyEnqueued

    deferred = []
    for source_id in source_ids:
        lock = source_lock(source_id)
        task = app.configure_task(REFRESH_TASK, lock=lock, queueing_lock=lock)
        try:
            await task.defer_async(source_id=source_id, force=force)
        except AlreadyEnqueued:
            if not force or not await app.connector.execute_query_all_async(
                _FORCE_WAITING, lock=lock
            ):
                continue  # already waiting in the queue, as asked
        deferred.append(source_id)
    return deferred


def queue_refresh(url: str, source_ids: Iterable[int], *, force: bool = False) -> int:
    """Queue refresh jobs from outside a worker (a tool, a test); returns how many were queued.

    ``force`` refreshes a source even if it is not due when its job runs.
    """
    app = build_app(url)
    wanted = list(source_ids)

    async def defer() -> int:
        async with app.open_async():
            return await defer_refresh(app, wanted, force=force)

    return asyncio.run(defer())


#: The queue of readers' trainings: apart from the refreshes, so that a reader's model is
#: not trained only after every due source was fetched (a worker takes from every queue).
TRAIN_QUEUE = "train"


def reader_lock(reader: int) -> str:
    """The queue lock (and queueing lock) of a reader's training jobs: one runs at a time,
    and one waits however many changes the reader makes meanwhile."""
    return f"train-{reader}"


async def defer_training(app: Any, readers: Iterable[int]) -> int:
    """Queue a training job per reader not already waiting; returns how many were queued."""
    from procrastinate.exceptions import AlreadyEnqueued

    queued = 0
    for reader in readers:
        lock = reader_lock(reader)
        task = app.configure_task(TRAIN_TASK, queue=TRAIN_QUEUE, lock=lock, queueing_lock=lock)
        try:
            await task.defer_async(reader=int(reader))
        except AlreadyEnqueued:
            continue  # one waits already: it trains on what the reader did by then
        queued += 1
    return queued


def queue_training(url: str, readers: Iterable[int]) -> int:
    """Queue training jobs from outside a worker (the web, a test); how many were queued."""
    app = build_app(url)
    wanted = list(readers)

    async def defer() -> int:
        async with app.open_async():
            return await defer_training(app, wanted)

    return asyncio.run(defer())


#: Seconds a look at whether workers run is trusted (:func:`training_queue`).
WORKERS_SEEN_FOR = 30.0
_workers_seen: dict[str, tuple[float, bool]] = {}


def training_queue(store: Any, reader: int) -> bool:
    """Queue the reader's training for the workers, when the library is on PostgreSQL and
    a worker beat its heart lately (else False: the caller trains, or nobody would).

    The web server's :data:`~lightnews.rank.trained.TRAINER` asks it from its own
    thread, never from a request."""
    if not isinstance(store, PostgresStore):
        return False
    now = time.monotonic()
    seen = _workers_seen.get(store.url)
    if seen is None or now - seen[0] > WORKERS_SEEN_FOR:
        heartbeat = float(Settings(store.saved_settings()).worker_heartbeat)
        seen = (now, store.workers_heard(MISSED_BEATS * heartbeat) > 0)
        _workers_seen[store.url] = seen
    if not seen[1]:
        return False
    queue_training(store.url, [reader])
    return True


async def _recover_stalled(app: Any, url: str, every: float) -> None:
    """Put the jobs of dead workers back in the queue, every ``every`` seconds."""
    failing = False
    while True:
        await asyncio.sleep(every)
        try:
            await recover_once(app, url, MISSED_BEATS * every)
            failing = False
        except Exception as error:  # the database restarting: try again at the next beat
            if not failing:  # said once, not at every beat
                log.warning("could not look for jobs of dead workers: %s", _said(error))
            failing = True


async def recover_once(app: Any, url: str, stalled_after: float) -> list[str]:
    """Hand back the jobs of workers silent for ``stalled_after`` seconds that no one holds.

    One worker at a time does it (:func:`~lightnews.store.cluster.recovery_turn`),
    so a job is never handed back twice. A job whose worker is silent but
    still holds it (:func:`~lightnews.store.cluster.job_alive`: a saturated
    machine, not a dead process) is left to that worker. Returns what was
    done, a line per job.
    """
    said: list[str] = []
    async with recovery_turn(url) as conn:
        if conn is None:
            return said
        await app.job_manager.prune_stalled_workers(max(FORGET_WORKER, stalled_after))
        for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stalled_after):
            if await job_alive(conn, int(job.id)):
                said.append(f"job {job.call_string} still runs on a worker slow to beat: left")
                continue
            said.append(await _hand_back(app, job))
    for line in said:
        log.warning("%s", line)
    return said


async def _hand_back(app: Any, job: Any) -> str:
    """Queue a dead worker's job again; or close it, if its like already waits in the queue.

    A due source is queued again by the periodic look while its job is still
    marked as running on the dead worker; two jobs may not wait with one
    queueing lock, and the one waiting does the same work.
    """
    from procrastinate.exceptions import UniqueViolation
    from procrastinate.jobs import Status

    try:
        await app.job_manager.retry_job(job)
    except UniqueViolation:
        await app.job_manager.finish_job(job, status=Status.FAILED, delete_job=False)
        return f"job {job.call_string} of a dead worker closed: the same job waits"
    return f"job {job.call_string} of a dead worker queued again"


@dataclass(frozen=True, slots=True)
class _Run:
    """How a worker runs: its name, its pace, and how long it waits for a lost database."""

    name: str
    concurrency: int
    heartbeat: float
    reconnect_for: float


async def _serve(app: Any, worker: Worker, run: _Run) -> None:
    """Run jobs until SIGINT or SIGTERM; through a lost database, for ``run.reconnect_for``.

    procrastinate ends its worker *quietly* when it loses the database (a side
    task fails, the worker stops as if asked to): the signals are ours, so an
    end that no signal asked for is a loss. It reconnects with a growing pause
    and, when the database stays away past the bound, raises
    :class:`~lightnews.errors.Unavailable` (an error exit for the supervisor).
    """
    loop = asyncio.get_running_loop()
    # Jobs run in the loop's default executor: one thread per job, a few to spare.
    loop.set_default_executor(
        ThreadPoolExecutor(max_workers=run.concurrency + 2, thread_name_prefix="lightnews-job")
    )
    stopping = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, stopping.set)
    try:
        while True:
            reason = await _run_until_lost(app, worker.url, run, stopping)
            if stopping.is_set():
                return
            log.warning(
                "lost the database (%s); trying to reach it again for up to %.0f s",
                reason,
                run.reconnect_for,
            )
            began = time.monotonic()
            if not await _reconnect(worker.url, run.reconnect_for, stopping):
                if stopping.is_set():
                    return
                raise Unavailable(
                    f"the database {redact(worker.url)} could not be reached for "
                    f"{run.reconnect_for:.0f} s (worker_reconnect_seconds): the worker stops"
                )
            # The pooled connections of the jobs went with the old server: new ones.
            await asyncio.to_thread(worker.store.renew_connections)
            log.warning(
                "the database is back after %.0f s: running jobs again", time.monotonic() - began
            )
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)


async def _run_until_lost(app: Any, url: str, run: _Run, stopping: asyncio.Event) -> str:
    """Run procrastinate's worker until asked to stop or until it ends by itself: why it ended."""
    reason = "the queue's worker stopped"
    try:
        async with app.open_async():
            recovery = asyncio.create_task(_recover_stalled(app, url, run.heartbeat))
            work = asyncio.create_task(
                app.run_worker_async(
                    concurrency=run.concurrency,
                    name=run.name,
                    update_heartbeat_interval=run.heartbeat,
                    stalled_worker_timeout=max(FORGET_WORKER, MISSED_BEATS * run.heartbeat),
                    fetch_job_polling_interval=max(1.0, run.heartbeat),
                    delete_jobs="successful",
                    install_signal_handlers=False,
                )
            )
            asked = asyncio.create_task(stopping.wait())
            try:
                await asyncio.wait({work, asked}, return_when=asyncio.FIRST_COMPLETED)
                if not work.done():  # asked to stop: running jobs finish first
                    work.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await work
                elif work.exception() is not None:
                    reason = _said(work.exception())
            finally:
                recovery.cancel()
                asked.cancel()
    except Exception as error:  # opening or closing the queue's connections failed
        reason = _said(error)
    return reason


async def _reconnect(url: str, bound: float, stopping: asyncio.Event) -> bool:
    """Whether the database answers again within ``bound`` seconds (pauses 1, 2, 4 ... 30 s)."""
    import psycopg

    deadline = time.monotonic() + bound
    pause = 1.0
    while not stopping.is_set():
        try:
            conn = await psycopg.AsyncConnection.connect(url, connect_timeout=10)
            async with conn:
                await conn.execute("SELECT 1")
            return True
        except psycopg.Error as error:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            log.warning(
                "the database does not answer (%s); again in %.0f s", _said(error), min(pause, left)
            )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), timeout=min(pause, max(0.0, left)))
        pause = min(30.0, pause * 2)
    return False


class _NotTheLoss(logging.Filter):
    """Leaves out the tracebacks of a lost database (the worker says the loss on one line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        import psycopg
        from procrastinate.exceptions import ConnectorException

        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, ConnectorException | psycopg.OperationalError)


def _say_on_stderr(logger: logging.Logger, *filters: logging.Filter) -> None:
    """``logger``'s records on stderr, one message a line, once however often it is asked."""
    if logger.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    for one in filters:
        handler.addFilter(one)
    logger.addHandler(handler)
    logger.propagate = False


def _said(error: BaseException | None) -> str:
    """An error on one line."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]


def run_worker(
    url: str,
    *,
    concurrency: int = 1,
    echo: Callable[[JobOutcome], None] | None = None,
    on_start: Callable[[str], None] | None = None,
) -> None:
    """Run jobs from the library's queue until SIGINT or SIGTERM (running jobs finish first).

    A database lost for longer than ``worker_reconnect_seconds`` raises
    :class:`~lightnews.errors.Unavailable`: the worker never stops quietly.
    """
    _say_on_stderr(log)  # what the recovery does, as the job lines are
    # procrastinate's warnings and failed jobs, without its tracebacks of a lost database.
    _say_on_stderr(logging.getLogger("procrastinate"), _NotTheLoss())
    logging.getLogger("procrastinate").setLevel(logging.WARNING)
    # Each failed reconnection of a pool, said again and again: the loss is said once.
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    worker = Worker(url, concurrency=concurrency, echo=echo)
    try:
        settings = worker.settings()
        tick = int(settings.worker_tick)
        run = _Run(
            name=f"{socket.gethostname()}-{os.getpid()}",
            concurrency=concurrency,
            heartbeat=float(settings.worker_heartbeat),
            reconnect_for=float(settings.worker_reconnect_seconds),
        )
        app = build_app(url, worker, tick=tick)
        if on_start:
            on_start(
                f"worker {run.name} on {redact(url)}: {concurrency} at a time, looking for due "
                f"sources every {tick_period(tick)} s"
            )
        asyncio.run(_serve(app, worker, run))
    finally:
        worker.close()


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """What the workers of a library are doing, read from the database (``worker --status``)."""

    workers: int
    last_beat: float | None  # seconds since the latest heartbeat of any worker
    waiting: dict[str, int]  # jobs by task
    running: dict[str, int]
    failed: int
    last_attempt: str | None  # the latest source fetched, and when
    due: int

    def lines(self) -> list[str]:
        def jobs(counts: dict[str, int]) -> str:
            total = sum(counts.values())
            parts = ", ".join(
                f"{n} {task.removeprefix('lightnews.')}" for task, n in sorted(counts.items())
            )
            return f"{total}" + (f" ({parts})" if parts else "")

        beat = "" if self.last_beat is None else f", last heartbeat {self.last_beat:.0f} s ago"
        return [
            f"workers: {self.workers} alive{beat}",
            f"queue: {jobs(self.waiting)} waiting, {jobs(self.running)} running, "
            f"{self.failed} failed kept",
            f"last fetch: {self.last_attempt or 'none yet'}",
            f"sources due now: {self.due}",
        ]


def queue_status(url: str, heartbeat: float = 10.0) -> QueueStatus:
    """The queue's state of the library at ``url`` (``worker --status``)."""
    with PostgresStore(url, pool_size=2) as store:
        status = read_status(store, heartbeat)
        store.close()
    return status


def read_status(store: PostgresStore, heartbeat: float = 10.0) -> QueueStatus:
    """The queue's state: live workers (a beat within three), jobs waiting and running, the
    last source fetched and how many are due (also shown on ``/admin``)."""
    db = store.db
    alive = db.execute(
        "SELECT count(*), EXTRACT(EPOCH FROM now() - max(last_heartbeat)) "
        "FROM procrastinate_workers WHERE last_heartbeat > now() - make_interval(secs => ?)",
        (MISSED_BEATS * heartbeat,),
    ).fetchone()
    by_status: dict[str, dict[str, int]] = {"todo": {}, "doing": {}, "failed": {}}
    for status, task, count in db.execute(
        "SELECT status::text, task_name, count(*) FROM procrastinate_jobs "
        "WHERE status IN ('todo', 'doing', 'failed') GROUP BY 1, 2"
    ).fetchall():
        by_status[str(status)][str(task)] = int(count)
    # A fetch is stamped when it starts (last_attempt) and when it ends (last_success, or
    # last_error_at: both at once when what it stored had problems); neither yet: under way.
    last = db.execute(
        "SELECT id, kind, address, last_attempt, "
        "CASE WHEN last_error_at >= last_attempt "
        "AND last_error_at >= coalesce(last_success, '') THEN 'failed' "
        "WHEN last_success >= last_attempt THEN 'ok' ELSE 'under way' END "
        "FROM sources WHERE last_attempt IS NOT NULL ORDER BY last_attempt DESC LIMIT 1"
    ).fetchone()
    due = len(due_for_refresh(store, iso(utc_now())))
    said = None
    if last is not None:
        said = f"#{last[0]} {last[1]} {last[2]} at {last[3]} ({last[4]})"
    return QueueStatus(
        workers=int(alive[0]) if alive else 0,
        last_beat=float(alive[1]) if alive and alive[1] is not None else None,
        waiting=by_status["todo"],
        running=by_status["doing"],
        failed=sum(by_status["failed"].values()),
        last_attempt=said,
        due=due,
    )
