"""Bad input on the command line, one case at a time: a clear message and the right exit code.

Exit status 2 is a usage error (what was typed is wrong, and the message says
what would be right); 1 is something typed well that is not stored. Nothing
is written when the input is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lightnews.cli import cli


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    db = tmp_path_factory.mktemp("cli-input") / "demo.db"
    result = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"}).invoke(cli, ["--db", str(db), "demo"])
    assert result.exit_code == 0, result.output
    yield db


def run(db: Path, *args: str) -> Result:
    return CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"}).invoke(cli, ["--db", str(db), *args])


def scholars(db: Path) -> list[str]:
    return [s["name"] for s in json.loads(run(db, "scholars", "list", "--json").stdout)]


def sources(db: Path) -> list[str]:
    return [s["url"] for s in json.loads(run(db, "sources", "list", "--json").stdout)]


BAD_INPUT = [
    # (arguments, words the message must have)
    (["follow", "Sepp Hochreiter"], ["not a Bluesky handle", '--arxiv-author "Sepp Hochreiter"']),
    (["follow", "@not_valid..handle"], ["not a Bluesky handle", "'_'"]),
    (["follow", "--orcid", "1234"], ["not an ORCID iD", "0000-0002-1825-0097"]),
    (["follow", "--orcid", "0000-0001-7751-4000"], ["check digit", "end in 8"]),
    (["follow", "--arxiv-author", "@mara.bsky.social"], ["follow it as a handle"]),
    (["follow", "--starter-pack", "https://example.org/x"], ["not a starter pack"]),
    (["sources", "add", "--category", "cs.XX"], ["not an arXiv category", "cs.LG"]),
    (["sources", "add", "--category", "cs.ML"], ["cs.LG (Machine Learning)", "stat.ML"]),
    (["sources", "add", "--category", "cs"], ["whole archive", "--oai-set cs"]),
    (["sources", "add", "--oai-set", "maths"], ["not an arXiv OAI-PMH set", "math"]),
    (["sources", "add", "--ids", "2510.03172,nonsense"], ["not an arXiv paper"]),
    (["search", "  "], ["give words to search for"]),
    (["search", '""'], ["give words to search for"]),
    (["search", "--", "-attention"], ["give words to search for", "only leaves out"]),
    (["search", "*"], ["give words to search for"]),
    (["search", "attention", "--since", "2025-13-45"], ["not a date", "month must be in 1..12"]),
    (["search", "attention", "--since", "2025-02-30"], ["day is out of range"]),
    (["search", "attention", "--until", "someday"], ["12h, 1d, 2w, today, yesterday"]),
    (["search", "attention", "--since", "2025-12-01", "--until", "2025-01-01"], ["is after"]),
    (["search", "attention", "--subject", "cs.XX"], ["not an arXiv category or archive"]),
    (["search", "attention", "--source-kind", "twitter"], ["not a kind of source", "bluesky"]),
    (["search", "attention", "--page", "0"], ["0 is not in the range"]),
    (["search", "attention", "--page", "50"], ["page 50 is past the last page"]),
    (["digest", "--since", "2025-13-45"], ["not a date"]),
    (["digest", "--since", "soon"], ["not a date or a time ago"]),
    (["digest", "--limit", "0"], ["0 is not in the range"]),
    (["feed", "--limit", "0"], ["0 is not in the range"]),
    (["feed", "--limit", "-3"], ["is not in the range"]),
    (["scholar", "Mara Lindqvist", "--page", "5"], ["page 5 is past the end", "only 1 page"]),
    (["scholar", "Mara Lindqvist", "--per-page", "0"], ["0 is not in the range"]),
    (["show", "https://example.org/abs/2511.18342"], ["not an arXiv paper", "arxiv.org/abs"]),
    (["show", "not-a-paper"], ["not an arXiv paper"]),
    (["related", "not-a-paper"], ["not an arXiv paper"]),
    (["read", "nonsense"], ["not a story", "item:ID"]),
    (["read", "item:zero"], ["whole number"]),
    (["scholars", "confirm", "Mara Lindqvist", "nonsense"], ["not an arXiv paper"]),
    (["mute", "--keyword", "   "], ["give a word to mute"]),
    (["serve", "--port", "70000"], ["70000 is not in the range"]),
    (["embed", "--limit", "0"], ["0 is not in the range"]),
]


@pytest.mark.parametrize(
    ("args", "words"), BAD_INPUT, ids=[" ".join(args) for args, _ in BAD_INPUT]
)
def test_bad_input_is_a_usage_error_saying_what_is_wrong(
    demo_db: Path, args: list[str], words: list[str]
) -> None:
    before = (scholars(demo_db), sources(demo_db))
    result = run(demo_db, *args)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())  # the terminal wraps long messages
    for word in words:
        assert word in message, message
    assert "Traceback" not in result.output
    assert (scholars(demo_db), sources(demo_db)) == before  # nothing written


def test_a_name_typed_as_a_handle_creates_no_scholar(demo_db: Path) -> None:
    run(demo_db, "follow", "Sepp Hochreiter")
    assert not any(" " in n and n.startswith("@") for n in scholars(demo_db))


def test_read_save_of_an_unknown_paper_is_not_found(demo_db: Path) -> None:
    result = run(demo_db, "read", "2512.99999", "--save")
    assert result.exit_code == 1 and "not found" in result.output
    assert "saved" not in result.stdout
    states = run(demo_db, "export", "--bibtex").stdout
    assert "2512.99999" not in states


def test_read_of_an_unknown_item_marks_nothing(demo_db: Path) -> None:
    result = run(demo_db, "read", "2511.18342", "item:999999")
    assert result.exit_code == 1 and "no item with id 999999" in result.output
    entry = next(
        e
        for e in json.loads(run(demo_db, "feed", "--json").stdout)
        if e.get("arxiv_id") == "2511.18342"
    )
    assert "read" not in entry["why"]  # all or nothing


def test_read_accepts_a_papers_address(demo_db: Path) -> None:
    result = run(demo_db, "read", "https://arxiv.org/abs/2511.17015v2", "--unread")
    assert result.exit_code == 0 and "2511.17015: unread" in result.stdout


@pytest.mark.parametrize(
    "address",
    [
        "https://arxiv.org/abs/2511.18342",
        "https://arxiv.org/abs/2511.18342v2",
        "arxiv.org/pdf/2511.18342v1.pdf",
        "https://huggingface.co/papers/2511.18342",
        "https://doi.org/10.48550/arXiv.2511.18342",
        "arXiv:2511.18342",
    ],
)
def test_show_accepts_a_papers_address(demo_db: Path, address: str) -> None:
    result = run(demo_db, "show", address, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["arxiv_id"] == "2511.18342"


def test_show_of_an_unknown_paper_is_not_found(demo_db: Path) -> None:
    result = run(demo_db, "show", "https://arxiv.org/abs/2512.99999")
    assert result.exit_code == 1 and "not found" in result.output


@pytest.mark.parametrize("since", ["1d", "2w", "today", "yesterday", "2025-01-01"])
def test_dates_that_are_accepted(demo_db: Path, since: str) -> None:
    assert run(demo_db, "search", "attention", "--since", since).exit_code == 0
    assert run(demo_db, "digest", "--since", since, "--dry-run").exit_code == 0


def test_search_since_a_date_filters(demo_db: Path) -> None:
    everything = json.loads(run(demo_db, "search", "attention", "--json").stdout)
    recent = json.loads(
        run(demo_db, "search", "attention", "--since", "2025-11-20", "--json").stdout
    )
    assert recent and len(recent) < len(everything)
    assert all(h["published"] >= "2025-11-20" for h in recent)


def test_relative_dates_count_from_the_librarys_clock(demo_db: Path) -> None:
    """The demo's clock stands at its snapshot: "2w" is two weeks before it, not before today."""
    week = json.loads(run(demo_db, "search", "attention", "--since", "2w", "--json").stdout)
    assert week and all(h["published"] >= "2025-11" for h in week)
    discussed = run(demo_db, "discussed", "--since", "24h", "--json")
    assert discussed.exit_code == 0, discussed.output
    assert json.loads(discussed.stdout)["since"].startswith("2025-")


@pytest.mark.parametrize("who", ["mara", "Lindqvist", "maralind", "@maralindqvist.bsky.social"])
def test_scholar_by_part_of_a_name_or_handle(demo_db: Path, who: str) -> None:
    result = run(demo_db, "scholar", who, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scholar"]["name"] == "Mara Lindqvist"


def test_several_scholars_matching_are_listed(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    assert run(db, "demo").exit_code == 0
    assert run(db, "follow", "--arxiv-author", "Mara Olsen").exit_code == 0
    result = run(db, "scholar", "mara")
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "2 scholars match 'mara'" in message
    assert "Mara Lindqvist (@maralindqvist.bsky.social)" in message and "Mara Olsen" in message
    assert run(db, "scholar", "mara o").exit_code == 0  # more of the name: one
    muted = run(db, "mute", "--scholar", "mara")  # every command that takes WHO
    assert muted.exit_code == 2 and "Mara Olsen" in muted.output


def test_a_proxy_that_is_not_an_address_is_refused(demo_db: Path) -> None:
    wrong = run(demo_db, "settings", "set", "trusted_proxies", "proxy.local")
    assert wrong.exit_code == 2 and "addresses or networks" in wrong.output
    assert run(demo_db, "settings", "set", "trusted_proxies", "10.0.0.0/8,::1").exit_code == 0


def test_opml_entries_are_checked_as_sources_add_checks_them(tmp_path: Path) -> None:
    """Before, OPML import skipped the URL and size checks of `sources add URL`, and stored
    a 2 MB title whole."""
    db = tmp_path / "opml.db"
    opml = tmp_path / "subscriptions.opml"
    huge = "T" * 2_000_000
    opml.write_text(
        '<?xml version="1.0"?><opml version="2.0"><head><title>mine</title></head><body>'
        f'<outline text="Labs"><outline type="rss" title="{huge}" '
        'xmlUrl="https://lab.example/feed.xml"/>'
        '<outline type="rss" title="Local" xmlUrl="file:///etc/passwd"/>'
        '<outline type="rss" title="Odd" xmlUrl="javascript:alert(1)"/></outline>'
        "</body></opml>"
    )
    added = run(db, "sources", "add", "--opml", str(opml), "--json")
    assert added.exit_code == 0, added.output
    assert "skipped file:///etc/passwd" in added.stderr
    assert "skipped javascript:alert(1)" in added.stderr
    (row,) = json.loads(added.stdout)
    assert row["url"] == "https://lab.example/feed.xml" and len(row["title"]) == 1000
    only_bad = tmp_path / "bad.opml"
    only_bad.write_text(
        '<opml version="2.0"><body><outline type="rss" xmlUrl="ftp://x.example/f"/></body></opml>'
    )
    refused = run(db, "sources", "add", "--opml", str(only_bad))
    assert refused.exit_code == 2 and "no feed of" in refused.output
    prose = tmp_path / "notes.opml"
    prose.write_text("not xml at all <<<")
    broken = run(db, "sources", "add", "--opml", str(prose))
    assert broken.exit_code == 2 and "notes.opml" in broken.output
