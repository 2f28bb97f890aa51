"""The seed pages' papers: recall and precision of the links ``resolve`` and ingestion find.

Issue 30 asks that the machine-paraphrased lab article and the conference notes each
reach recall >= 0.85 of the papers they name, at precision >= 0.97, in ``resolve`` and in
ingestion alike. ``lightnews/ingest/test_resolve.py`` checks it on both backends as a
test (pass or fail); this script prints the figures themselves.

The library is what that test builds: the 11k real Hugging Face papers and the papers
the two pages name (``tests/data/arxiv/iclr2025-lab-papers.xml``, 13 papers, and
``iclr2025-noted-papers.xml``, 12, checked by hand against the pages), so every named
paper can be found and every other paper is a wrong link. Offline: no look-up online.

Run::

    PYTHONPATH=$PWD .venv/bin/python bench/seed_pages.py          # SQLite
    PYTHONPATH=$PWD .venv/bin/python bench/seed_pages.py --pg     # PostgreSQL (pgserver)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from conftest import DATA, SHARED, hf_corpus
from lightnews.ingest.replay import ingest_bytes
from lightnews.ingest.resolve import resolve_bytes
from lightnews.settings import Settings
from lightnews.sources.arxiv_api import parse_api_feed
from lightnews.store import CommonStore, open_store

#: Page (under the shared seed pages), its kind, the papers it names.
PAGES = (
    ("blog/apple-ml-research.rss.xml", "feed", "iclr2025-lab-papers.xml"),
    ("notes/iclr2025-notes.html", "notes", "iclr2025-noted-papers.xml"),
)
SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)


def _ingested(store: CommonStore, source_id: int) -> set[str]:
    rows = store.db.execute(
        "SELECT DISTINCT p.arxiv_id FROM mentions m JOIN papers p ON p.id = m.paper_id "
        "JOIN items i ON i.id = m.item_id WHERE i.source_id = ?",
        (source_id,),
    )
    return {str(r[0]) for r in rows}


def measure(store: CommonStore, backend: str) -> None:
    store.save_papers(hf_corpus(SHARED), "2026-01-01T00:00:00Z")
    for _, _, name in PAGES:
        body = (DATA / "arxiv" / name).read_bytes()
        assert ingest_bytes(store, "arxiv-api", f"test:{name}", body, SETTINGS).ok
    print("| backend | page | path | papers named | linked | right | precision | recall | missed |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    truths, resolved, ingested = {}, {}, {}
    for page, _, truth_file in PAGES:  # resolve every page first, as the test does
        truths[page] = {
            p.arxiv_id for p in parse_api_feed((DATA / "arxiv" / truth_file).read_bytes())[0]
        }
        body = (SHARED / "seed-pages" / page).read_bytes()
        resolved[page] = {m.arxiv_id for m in resolve_bytes(store, body, SETTINGS).mentions}
    for page, kind, _ in PAGES:
        body = (SHARED / "seed-pages" / page).read_bytes()
        report = ingest_bytes(store, kind, f"https://seed.example/{page}", body, SETTINGS)
        assert report.ok, report.error
        ingested[page] = _ingested(store, report.source_id)
    for page, _, _ in PAGES:
        truth = truths[page]
        for path, found in (("resolve", resolved[page]), ("ingestion", ingested[page])):
            right = found & truth
            print(
                f"| {backend} | {page} | {path} | {len(truth)} | {len(found)} | {len(right)} | "
                f"{len(right) / max(len(found), 1):.3f} | {len(right) / len(truth):.3f} | "
                f"{', '.join(sorted(truth - found)) or '-'} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", action="store_true", help="on PostgreSQL (pgserver)")
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"SKIP: {SHARED} is not present")
        return
    with tempfile.TemporaryDirectory(prefix="lightnews-seed-") as folder:
        if args.pg:
            from lightnews.store.postgres import PostgresStore, test_server

            with test_server(folder) as url, PostgresStore(url, pool_size=4) as pg:
                measure(pg, "postgresql")
            return
        store = open_store(Path(folder) / "seed.db")
        assert isinstance(store, CommonStore)
        try:
            measure(store, "sqlite")
        finally:
            store.close()


if __name__ == "__main__":
    main()
