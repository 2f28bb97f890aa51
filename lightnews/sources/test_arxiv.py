"""arXiv parsers against real recordings (API 2016/2026, OAI-PMH, .abs) and our own files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from lightnews.errors import ParseError
from lightnews.model import SourceState
from lightnews.settings import Settings
from lightnews.sources.arxiv_abs import parse_abs
from lightnews.sources.arxiv_api import ArxivApiSource, parse_api_feed
from lightnews.sources.arxiv_oai import ArxivOaiSource, parse_oai
from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot


def _recorded(path: Path) -> tuple[int, bytes]:
    record = json.loads(path.read_text())
    return record["status_code"], record["body"].encode("latin-1")


def test_every_2026_api_response(shared: Path) -> None:
    files = sorted((shared / "arxiv/api-2026").glob("*.json"))
    assert len(files) == 20
    entries = 0
    for path in files:
        status, body = _recorded(path)
        if status != 200:
            with pytest.raises(ParseError, match="incorrect id format"):
                parse_api_feed(body)
            continue
        papers, items, counts, warnings = parse_api_feed(body)
        assert not warnings
        assert len(papers) == len(items) <= counts["itemsPerPage"]
        entries += len(papers)
        for paper in papers:
            assert paper.title and paper.abstract and paper.authors and paper.categories
            assert paper.published and paper.updated and paper.versions
            assert "\n" not in paper.title and "  " not in paper.abstract
    assert entries == 222 - 1  # 222 entries, one of them the "Error" entry


def test_api_old_style_id_and_version(shared: Path) -> None:
    _, body = _recorded(next((shared / "arxiv/api-2026").glob("id_quant-ph_0201082v1*")))
    (paper,), _, _, _ = parse_api_feed(body)
    assert paper.arxiv_id == "quant-ph/0201082"
    assert paper.primary_category == "quant-ph"


def test_every_2016_api_response(shared: Path) -> None:
    total = 0
    for path in sorted((shared / "arxiv/api-2016").glob("*.xml")):
        papers, _, counts, _ = parse_api_feed(path.read_bytes())
        assert counts["totalResults"] >= len(papers) > 0
        total += len(papers)
    assert total == 24
    papers, *_ = parse_api_feed((shared / "arxiv/api-2016/id_list_1111.2011v2.xml").read_bytes())
    assert papers[0].arxiv_id == "1111.2011"
    assert [v.number for v in papers[0].versions] == [1, 2]
    assert papers[0].categories[0] == "cond-mat.str-el"


def test_api_paging_and_cursor(shared: Path) -> None:
    source = ArxivApiSource(
        "all:testing",
        settings=Settings(environ={}).with_overrides(arxiv_page_size=10, arxiv_max_results=40),
    )
    first = source.first_request(SourceState())
    assert first.params["start"] == 0 and first.params["max_results"] == 10
    _, body = _recorded(next((shared / "arxiv/api-2026").glob("q_testing_s0_m10_*")))
    batch = source.parse(body, SourceState())
    assert batch.next is not None and batch.next.params["start"] == 10
    assert batch.state is not None and batch.state.cursor is None  # not before the end
    _, body = _recorded(next((shared / "arxiv/api-2026").glob("q_testing_s30_m10_*")))
    last = source.parse(body, batch.state)
    assert last.next is None  # arxiv_max_results reached
    assert last.state is not None and last.state.cursor  # harvest done: cursor moves


def test_demo_api_file_is_read_like_the_real_thing(demo_dir: Path) -> None:
    papers, items, counts, warnings = parse_api_feed(
        (demo_dir / "arxiv-api-cs.LG.xml").read_bytes()
    )
    assert len(papers) == counts["totalResults"] == 14 and not warnings
    tex = next(p for p in papers if p.arxiv_id == "2511.07731")
    assert "$\\ell_1$" in tex.title
    assert all(i.paper_id == i.key for i in items)
    assert any(p.doi for p in papers) and any(p.journal_ref for p in papers)


def test_oai_arxiv_raw_list_records(shared: Path) -> None:
    batch, token, newest, error = parse_oai(
        (shared / "arxiv/oai-pmh/ListRecordsResponse.xml").read_bytes()
    )
    assert error is None and token == "726959|1001" and newest
    assert len(batch.papers) == 6
    paper = next(p for p in batch.papers if p.arxiv_id == "0704.0716")
    assert [v.number for v in paper.versions] == [1, 2, 3, 4]
    assert paper.published == "2007-04-05T12:45:03Z" and paper.updated == "2008-11-14T09:07:25Z"
    assert paper.submitter == "Christoph Richard"
    first = next(p for p in batch.papers if p.arxiv_id == "0704.0471")
    assert [a.name for a in first.authors] == ["D.V. Shetty", "S.J. Yennello", "G.A. Souliotis"]
    assert first.categories == ["nucl-ex", "nucl-th"]


def test_oai_get_record(shared: Path) -> None:
    batch, token, _, error = parse_oai(
        (shared / "arxiv/oai-pmh/GetRecordResponse.xml").read_bytes()
    )
    assert error is None and token is None and len(batch.papers) == 1


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("ErrorResponseBadArgument.xml", "badArgument"),
        ("ErrorResponseBadResumptionToken.xml", "badResumptionToken"),
        ("ErrorResponseBadVerb.xml", "badVerb"),
        ("ErrorResponseIdDoesNotExist.xml", "idDoesNotExist"),
    ],
)
def test_oai_error_responses(shared: Path, name: str, code: str) -> None:
    body = (shared / "arxiv/oai-pmh" / name).read_bytes()
    batch, token, _, error = parse_oai(body)
    assert error == code and not batch.papers and token is None
    source = ArxivOaiSource("cs")
    state = SourceState(cursor="2025-01-01", resumption_token="stale|1")
    if code == "badResumptionToken":
        result = source.parse(body, state)  # forget the token, start again from the date
        assert result.state is not None and result.state.resumption_token is None
        assert result.state.cursor == "2025-01-01" and result.warnings
    else:
        with pytest.raises(ParseError, match=code):
            source.parse(body, state)


def test_oai_no_records_match_is_success(shared: Path) -> None:
    body = (shared / "arxiv/oai-pmh/ErrorResponseNoRecordsMatch.xml").read_bytes()
    batch = ArxivOaiSource("cs").parse(body, SourceState(cursor="2025-01-01"))
    assert batch.next is None and not batch.papers and not batch.warnings
    assert batch.state is not None and batch.state.cursor == "2025-01-01"


def test_oai_resumption_is_saved_and_resumed(shared: Path) -> None:
    source = ArxivOaiSource("physics", {"metadataPrefix": "arXivRaw"})
    first = source.first_request(SourceState(cursor="2014-10-01"))
    assert first.params == {
        "verb": "ListRecords",
        "metadataPrefix": "arXivRaw",
        "set": "physics",
        "from": "2014-10-01",
    }
    batch = source.parse(
        (shared / "arxiv/oai-pmh/ListRecordsResponse.xml").read_bytes(),
        SourceState(cursor="2014-10-01"),
    )
    assert batch.state is not None and batch.state.resumption_token == "726959|1001"
    assert batch.next is not None and batch.next.params["resumptionToken"] == "726959|1001"
    resumed = source.first_request(batch.state)
    assert resumed.params == {"verb": "ListRecords", "resumptionToken": "726959|1001"}


def test_demo_oai_files(demo_dir: Path) -> None:
    batch, token, _, _ = parse_oai((demo_dir / "arxiv-oai-cs.xml").read_bytes())
    assert token is None and batch.deleted == ["2510.19977"]
    old = next(p for p in batch.papers if p.arxiv_id == "cs/0112017")
    assert any("ü" in a.name for a in old.authors) and all(a.keyname for a in old.authors)
    assert any(p.withdrawn for p in batch.papers)
    raw, token, _, _ = parse_oai((demo_dir / "arxiv-oai-cs-raw.xml").read_bytes())
    assert token == "demo|1001" and all(len(p.versions) >= 2 for p in raw.papers)


def test_abs_records(shared: Path) -> None:
    files = sorted((shared / "arxiv/abs").rglob("*.abs"))
    assert len(files) > 1000
    parsed = errors = 0
    for path in files[::7]:  # a sample of one in seven
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            paper = parse_abs(text)
        except ParseError:
            errors += 1
            assert not text.strip()  # only empty files are unreadable
            continue
        parsed += 1
        assert paper.title and paper.versions and paper.categories
    assert parsed > 150


def test_abs_old_style_versions_and_accents(shared: Path) -> None:
    paper = parse_abs((shared / "arxiv/abs/ftp/cs/papers/0011/0011004.abs").read_text())
    assert paper.arxiv_id == "cs/0011004"
    assert [v.number for v in paper.versions] == [1, 2]
    assert paper.abstract.startswith("In this short note we want to introduce anonymous")
    accented = [
        p
        for p in (
            parse_abs(f.read_text(errors="replace"))
            for f in (shared / "arxiv/abs").rglob("*.abs")
            if f.stat().st_size
        )
        if any(ch in "".join(a.name for a in p.authors) for ch in "äöüéèçø")
    ]
    assert accented, "some .abs records have TeX accents in author names"
    assert not any("\\" in a.name for p in accented for a in p.authors)


def test_abs_own_fixture(data: Path) -> None:
    paper = parse_abs((data / "arxiv/hep-th-9901001.abs").read_text())
    assert paper.arxiv_id == "hep-th/9901001"
    assert paper.title == r"A toy model of strings on a circle with $\mathbb{Z}_2$ twists"
    assert [a.name for a in paper.authors] == ["Jörg Müller", "François Lévy", "A. Writer"]
    assert [(v.number, v.size) for v in paper.versions] == [(1, "12kb"), (2, "14kb")]
    assert paper.updated == "1999-03-15T09:30:00Z" and paper.categories == ["hep-th", "math-ph"]
    assert paper.journal_ref == "Toy Phys. Lett. 1 (1999) 1-12"
    assert paper.abstract.startswith("We write down a toy model") and "{" not in paper.abstract


def test_snapshot_lines(data: Path) -> None:
    errors = SnapshotErrors()
    with (data / "arxiv/snapshot-small.jsonl").open("rb") as stream:
        papers = list(iter_snapshot(stream, errors))
    assert [p.arxiv_id for p in papers] == ["0704.0001", "hep-th/9901001", "2510.02375"]
    assert errors.count == 3
    assert any("not valid JSON" in e for e in errors.examples)
    assert any("no valid arXiv id" in e for e in errors.examples)
    first, old, new = papers
    assert first.authors[0].name == "C. Balázs" and first.authors[0].keyname == "Balázs"
    assert [v.number for v in first.versions] == [1, 2]
    assert first.published == "2007-04-02T19:18:42Z"
    assert old.withdrawn and new.categories == ["cs.LG", "stat.ML"]


def test_snapshot_stream_garbage() -> None:
    errors = SnapshotErrors()
    stream = io.BytesIO(b'\xff\xfe\n[1,2]\n{"id": 5}\n\n{"id": "2510.02375", "versions": "x"}\n')
    papers = list(iter_snapshot(stream, errors))
    assert [p.arxiv_id for p in papers] == ["2510.02375"] and errors.count == 3
