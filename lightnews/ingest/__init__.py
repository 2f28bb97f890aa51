"""Ingest: what brings papers and what is said about them into the store, and when.

One module per job, each above the layers it drives (sources, store, link,
embed) and below what delivers and serves:

* :mod:`~lightnews.ingest.refresh` walks the due sources; each is read by
  :mod:`~lightnews.ingest.fetch`, page by page, and every page is stored by
  :mod:`~lightnews.ingest.page` (papers, links, items, accounts, state), which
  first relinks retitled papers (:mod:`~lightnews.ingest.relink`); how a run
  ended is recorded by :mod:`~lightnews.ingest.report`;
* :mod:`~lightnews.ingest.cited` looks up online the papers cited by
  reference that the library lacks, :mod:`~lightnews.ingest.stubs` gives
  stubs their metadata;
* :mod:`~lightnews.ingest.replay` stores a saved response (``lightnews
  ingest --from-file``), :mod:`~lightnews.ingest.resolve` finds the papers a
  page names without storing it (``lightnews resolve``);
* :mod:`~lightnews.ingest.follow` is a reader following a scholar or account;
* :mod:`~lightnews.ingest.bulk` imports arXiv's metadata snapshot,
  :mod:`~lightnews.ingest.listen` hears the whole Bluesky network through
  Jetstream, and :mod:`~lightnews.ingest.priority` lowers the priority of
  the processes that write in bulk.

Nothing is re-exported here: import from the module that does the job.
"""
