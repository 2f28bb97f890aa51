"""Workers: refresh, embedding, stubs, listening, digests, trainings as jobs on a PostgreSQL queue.

A group's library lives in PostgreSQL, and so does its work queue
(procrastinate: PostgreSQL stays the only server). ``lightnews worker`` runs
anywhere that reaches the database, as many times as wanted. Every
``worker_tick`` seconds one of the workers (whichever the queue picks, once for
the whole cluster) runs the periodic jobs: it defers one refresh job per due
source, embeds new papers, resolves stubs and sends the digest when one is due
(the ``digest_schedule`` setting; each period's digest goes out once, see
:func:`~lightnews.deliver.digest.deliver_due_digest`). Readers' learned models
are trained by a job per reader, queued by the web when the reader's signals
change, on a queue of its own (:mod:`lightnews.rank.trained`).

What holds however many workers run:

* **a source is fetched by at most one worker at a time**: its jobs share a
  queue ``lock`` (the queue starts one of them only when no other runs) and a
  ``queueing_lock`` (a due source waits in the queue once, however many ticks
  pass); the job also holds the source's advisory lock in the database
  (:func:`~lightnews.store.cluster.source_turn`), which covers a worker taken
  for dead while it still fetches;
* **per-host politeness is the cluster's**: every worker's HTTP client asks
  the database for its turns at a host (:class:`~lightnews.store.cluster.HostSlots`),
  so arXiv's 3-second interval is one interval for all of them;
* **a worker killed mid-job loses nothing**: each worker beats its heart
  into the queue's tables every ``worker_heartbeat`` seconds; the others look
  for jobs of workers silent for three beats and put them back in the queue
  (one worker at a time, under an advisory lock). The job runs again from the
  state saved with the last stored page, and storing is idempotent (papers by
  arXiv id, items by source and key, vectors replaced), so the library ends as
  one clean run leaves it;
* **a slow worker is not a dead one**: a running job holds a lock of its own
  on its worker's connection (:func:`~lightnews.store.cluster.job_turn`), so
  a worker that missed its beats on a saturated machine but is still running
  the job keeps it; only a job whose lock went with its worker's connection
  is handed back.

With an SQLite library there are no workers: ``lightnews refresh`` runs in
the process that calls it, as before.

The jobs are in :mod:`lightnews.worker.jobs`, the queue and the worker's
process in :mod:`lightnews.worker.queue`. The worker sits above what it runs
(ingestion, delivery of digests), beside the web server.
"""
