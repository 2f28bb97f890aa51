"""A new reader starts from the library they keep elsewhere: a Zotero export (BibTeX or
CSL JSON) becomes their saves, in a list of its own when asked; bad files are refused.

The exports in tests/data/libraries are written as Zotero and Google Scholar write them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lightnews.cli import cli
from lightnews.settings import Settings
from lightnews.sources.libraries import LibraryEntry, parse_library
from lightnews.store import LOCAL_READER, open_store

SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)


def test_bibtex_and_csl_entries_name_their_papers(data: Path) -> None:
    bib = parse_library((data / "libraries/zotero.bib").read_bytes())
    assert [(e.key, e.arxiv_id, e.doi) for e in bib] == [
        ("lindqvist_sparse_2025", "2511.18342", None),
        ("vaswani2017attention", "1706.03762", None),
        ("he2016deep", None, "10.1109/cvpr.2016.90"),
        ("brennan2025reward", "2511.15577", None),
    ]
    assert bib[0].title.startswith("Sparse Ring Attention: Sub-quadratic")
    csl = parse_library((data / "libraries/zotero-csl.json").read_bytes())
    assert [(e.arxiv_id, e.doi) for e in csl] == [
        ("2511.17015", None),
        (None, "10.1000/example.2020.1"),
        (None, None),
    ]
    assert isinstance(csl[2], LibraryEntry) and csl[2].title == "A book with no identifier"


@pytest.fixture
def library(fresh_demo: str) -> str:
    return fresh_demo


def test_import_library_saves_its_papers_once(library: str, data: Path, tmp_path: Path) -> None:
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"})

    def run(*args: str, code: int = 0) -> str:
        done = runner.invoke(cli, ["--db", library, "import", "library", *args])
        assert done.exit_code == code, done.output
        return done.output

    bib = str(data / "libraries/zotero.bib")
    first = json.loads(run(bib, "--list", "attention", "--json"))
    assert first == {"entries": 4, "saved": 3, "new_stubs": 1, "unmatched": ["he2016deep"]}
    again = json.loads(run(bib, "--list", "attention", "--json"))
    assert again == {**first, "new_stubs": 0}  # re-running is safe
    said = run(str(data / "libraries/zotero-csl.json"))
    assert "saved 1 of 3 entries" in said and "2 without an arXiv id or a known DOI" in said
    with open_store(library) as store:
        saved = {k for k, (_, at) in store.story_states(LOCAL_READER).items() if at}
        assert saved == {"2511.18342", "1706.03762", "2511.15577", "2511.17015"}
        lists = store.saved_lists(LOCAL_READER)
        assert list(lists) == ["attention"]
        assert sorted(lists["attention"]) == ["1706.03762", "2511.15577", "2511.18342"]
        assert "1706.03762" in store.stub_ids(100)  # fetched by the next refresh
    broken = tmp_path / "broken.json"
    broken.write_text("[{not json")
    assert "not CSL JSON" in run(str(broken), code=2)
    empty = tmp_path / "empty.bib"
    empty.write_text("")
    assert "empty" in run(str(empty), code=2)
    prose = tmp_path / "notes.txt"
    prose.write_text("@@@ just some { words")
    assert "neither BibTeX nor CSL JSON" in run(str(prose), code=2)
