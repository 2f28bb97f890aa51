"""The worker's jobs: what a refresh, embedding, stub, listening, digest or training job does.

Each job runs in a thread of a worker process (:mod:`lightnews.worker.queue`
runs them from the PostgreSQL queue) and reads the settings anew, so a
setting saved while workers run applies from their next job. A refresh job
holds the source's advisory lock while it fetches
(:func:`~lightnews.store.cluster.source_turn`); every job says what it did as
a :class:`JobOutcome`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lightnews.embed import embed_new
from lightnews.errors import FetchError, NotFound, UsageError
from lightnews.ingest.page import reattribute
from lightnews.ingest.refresh import due_for_refresh, refresh_one
from lightnews.ingest.report import RunReport
from lightnews.ingest.stubs import resolve_stubs
from lightnews.normalize.times import iso, utc_now
from lightnews.rank.trained import train_and_store
from lightnews.settings import Settings
from lightnews.sources.http import HttpClient
from lightnews.store import SourceRow
from lightnews.store.cluster import HostSlots, source_turn
from lightnews.store.postgres import PostgresStore
from lightnews.store.readers import ReaderId

__all__ = [
    "DEFER_TASK",
    "DIGEST_TASK",
    "EMBED_TASK",
    "LISTEN_TASK",
    "REFRESH_TASK",
    "STUBS_TASK",
    "TRAIN_TASK",
    "JobOutcome",
    "Worker",
    "due_for_refresh_row",
]


REFRESH_TASK = "lightnews.refresh_source"

DEFER_TASK = "lightnews.defer_due"

EMBED_TASK = "lightnews.embed_new"

STUBS_TASK = "lightnews.resolve_stubs"

LISTEN_TASK = "lightnews.ingest.listen"

DIGEST_TASK = "lightnews.send_digest"

TRAIN_TASK = "lightnews.train_reader"

#: The settings an HTTP client is made from (see ``HttpClient.__init__``).
_CLIENT_SETTINGS = (
    "http_timeout",
    "http_max_bytes",
    "http_retries",
    "http_backoff",
    "http_max_wait",
    "allow_private_addresses",
    "arxiv_interval",
    "contact",
)


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """What one job did, as a worker reports it."""

    task: str
    summary: str
    ok: bool = True


class Worker:
    """One worker process's share of a library: its store, its pacer, its jobs.

    The jobs run in threads (``concurrency`` of them); each thread has its own
    pooled connection, and each job reads the settings anew, so a setting
    saved while workers run applies from their next job.
    """

    def __init__(
        self, url: str, *, concurrency: int = 1, echo: Callable[[JobOutcome], None] | None = None
    ) -> None:
        self.url = url
        self.concurrency = concurrency
        self.echo = echo
        # A connection per job thread, plus the host turns and the queue's own reads.
        self.store = PostgresStore(url, pool_size=2 * concurrency + 4)
        self.pacer = HostSlots(self.store.pool)
        self._clients: dict[tuple[object, ...], HttpClient] = {}
        self._guard = threading.Lock()

    def settings(self) -> Settings:
        return Settings(self.store.saved_settings())

    def client(self, settings: Settings) -> HttpClient:
        """The worker's HTTP client for these settings, shared by its jobs.

        Making one costs a tenth of a second (its TLS context) and its open
        connections are worth keeping; a setting it reads that changed gets
        a new one (the old stays open for the jobs still using it).
        """
        key = tuple(settings.get(name) for name in _CLIENT_SETTINGS)
        with self._guard:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = HttpClient(settings, pacer=self.pacer)
            return client

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self.store.close()

    def _report(self, outcome: JobOutcome) -> JobOutcome:
        if self.echo:
            self.echo(outcome)
        return outcome

    # -- the jobs (each in a thread of its own) -------------------------------------------

    def refresh(self, source_id: int, force: bool = False) -> JobOutcome:
        """Refresh one source, unless it is gone, disabled, not due, or being fetched."""
        store = self.store
        try:
            row = store.get_source(source_id)
        except NotFound:
            return self._report(JobOutcome(REFRESH_TASK, f"#{source_id}: no such source now"))
        if not due_for_refresh_row(row, force=force):
            return self._report(JobOutcome(REFRESH_TASK, f"#{source_id}: not due"))
        with source_turn(store, source_id) as mine:
            if not mine:
                summary = f"#{source_id}: another worker is fetching it"
                return self._report(JobOutcome(REFRESH_TASK, summary))
            settings = self.settings()
            report = refresh_one(store, row, self.client(settings), settings)
            reattribute(store, [report])
        return self._report(JobOutcome(REFRESH_TASK, _describe(report), report.ok))

    def due_sources(self) -> list[SourceRow]:
        """The sources due now."""
        return list(due_for_refresh(self.store, iso(utc_now())))

    def queued(self, rows: Iterable[SourceRow]) -> None:
        """Say which refresh jobs this worker's look queued (their end is said by the job)."""
        for row in rows:
            self._report(JobOutcome(DEFER_TASK, f"queued #{row.id} {row.kind} {row.address}"))

    def embed(self) -> JobOutcome:
        result = embed_new(self.store, self.settings())
        if isinstance(result, str):
            return JobOutcome(EMBED_TASK, f"nothing embedded: {result}")
        summary = f"{result.embedded} papers embedded ({result.remaining} left)"
        if result.embedded:
            self._report(JobOutcome(EMBED_TASK, summary))
        return JobOutcome(EMBED_TASK, summary)

    def resolve(self) -> JobOutcome:
        settings = self.settings()
        if not settings.resolve_online:
            return JobOutcome(STUBS_TASK, "resolve_online is off")
        reports = resolve_stubs(self.store, settings, self.client(settings))
        reattribute(self.store, reports)
        found = sum(r.saved.papers_new + r.saved.papers_updated for r in reports)
        outcome = JobOutcome(STUBS_TASK, f"{found} stubs resolved", all(r.ok for r in reports))
        return self._report(outcome) if reports else outcome

    def listen(self, seconds: float) -> JobOutcome:
        """Listen to the Jetstream for ``seconds``, from the saved cursor (``listen_in_worker``).

        One worker of the cluster at a time (the job's queue lock); the next
        job resumes where this one stopped, so the cluster hears every event.
        """
        from lightnews.ingest.listen import Listener, listen_websocket

        settings = self.settings()
        if not settings.listen_in_worker:
            return JobOutcome(LISTEN_TASK, "listen_in_worker is off")
        address = str(settings.jetstream_url)
        listener = Listener(self.store, settings, address)

        async def run() -> None:
            stop = asyncio.Event()
            asyncio.get_running_loop().call_later(seconds, stop.set)
            await listen_websocket(
                listener, address, stop=stop, max_backoff=float(settings.listen_max_backoff)
            )

        asyncio.run(run())
        report = listener.report
        summary = (
            f"{report.counts.events} events heard, {report.stored} new posts about "
            f"papers (cursor {report.cursor})"
        )
        return self._report(
            JobOutcome(LISTEN_TASK, summary, not report.errors or bool(report.counts.events))
        )

    def digest(self) -> JobOutcome:
        """Send every reader's digest that is due and not sent yet (once per period each)."""
        from lightnews.deliver.digest import deliver_due_digest, scheduled_recipients

        settings = self.settings()
        recipients = scheduled_recipients(self.store, settings)
        if not recipients:
            return JobOutcome(DIGEST_TASK, "no digest scheduled (digest_schedule, digest_to)")
        said: list[str] = []
        failed = delivered = False
        for recipient in recipients:
            try:
                outcome = deliver_due_digest(self.store, settings, recipient, utc_now())
            except (FetchError, UsageError) as error:  # stays due: the next look retries
                said.append(f"{recipient.key}: {error}")
                failed = True
                continue
            said.append(str(outcome))
            delivered = delivered or outcome.status == "delivered"
        result = JobOutcome(DIGEST_TASK, "; ".join(said), ok=not failed)
        return self._report(result) if delivered or failed else result

    def train(self, reader: int) -> JobOutcome:
        """Train the reader's learned model and keep it, if what it learns from changed
        since the stored one (:func:`~lightnews.rank.trained.train_and_store`)."""
        if train_and_store(self.store, ReaderId(reader), self.settings()):
            return self._report(JobOutcome(TRAIN_TASK, f"reader {reader}: model trained"))
        return JobOutcome(TRAIN_TASK, f"reader {reader}: model current")


def due_for_refresh_row(row: SourceRow, *, force: bool) -> bool:
    """Whether a job for ``row`` should fetch it now (it may have run since it was queued)."""
    if force:
        return bool(row.enabled)
    return bool(row.enabled) and (row.next_attempt is None or row.next_attempt <= iso(utc_now()))


def _describe(report: RunReport) -> str:
    where = f"#{report.source_id} {report.kind} {report.address}"
    if not report.ok:
        return f"{where}: {report.error} (next attempt {report.next_attempt})"
    if report.not_modified:
        return f"{where}: not modified"
    s = report.saved
    return (
        f"{where}: {s.papers_new} new papers, {s.items_new} new items, "
        f"{s.papers_updated + s.items_updated} updated"
    )
