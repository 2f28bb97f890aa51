"""Checks of typed input: each bad form refused with what is wrong and what would be right."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lightnews.errors import UsageError
from lightnews.normalize import validate
from lightnews.normalize.arxiv_categories import ARCHIVES, CATEGORIES, LEGACY, OAI_SETS

NOW = datetime(2025, 11, 28, 15, 30, tzinfo=UTC)


def refused(check: object, text: str, *words: str) -> str:
    """``check(text)`` raises a UsageError whose message has every one of ``words``."""
    with pytest.raises(UsageError) as caught:
        check(text)  # type: ignore[operator]
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


# -- web addresses ---------------------------------------------------------------------


def test_web_addresses_in_the_form_the_store_keeps() -> None:
    assert validate.feed_address(" HTTP://Blog.Example/feed.xml ") == "http://Blog.Example/feed.xml"
    assert validate.notes_address("https://notes.example/a b") == "https://notes.example/a%20b"
    refused(validate.feed_address, "javascript:alert(1)", "a feed address", "http(s)")
    refused(validate.feed_address, "ftp://example.org/feed", "'ftp://example.org/feed'")
    refused(validate.notes_address, "https://trusted.example@evil.example/", "a notes page")


# -- handles ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "handle"),
    [
        ("@mkirchhof.bsky.social", "mkirchhof.bsky.social"),
        ("MaraLindqvist.bsky.social", "maralindqvist.bsky.social"),
        ("  @jay.bsky.team ", "jay.bsky.team"),
        ("xn--ls8h.test", "xn--ls8h.test"),
        ("did:plc:6ymetiuasdaglkxuz2xqfqlf", "did:plc:6ymetiuasdaglkxuz2xqfqlf"),
        ("did:web:example.org", "did:web:example.org"),
        ("https://bsky.app/profile/MaraLindqvist.bsky.social", "maralindqvist.bsky.social"),
        ("bsky.app/profile/did:plc:6ymetiuasdaglkxuz2xqfqlf/", "did:plc:6ymetiuasdaglkxuz2xqfqlf"),
    ],
)
def test_handles_and_dids_that_are_valid(typed: str, handle: str) -> None:
    assert validate.bluesky_handle(typed) == handle


def test_a_name_is_not_a_handle_and_the_message_says_to_follow_the_author() -> None:
    message = refused(validate.bluesky_handle, "Sepp Hochreiter", "no spaces")
    assert '--arxiv-author "Sepp Hochreiter"' in message
    web = refused(
        lambda t: validate.bluesky_handle(t, by_name="the arXiv author box:"), "Yann LeCun"
    )
    assert 'the arXiv author box: "Yann LeCun"' in web


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("@not_valid..handle", "not '_'"),
        ("two..dots.example", "no empty parts"),
        ("nodot", "at least one dot"),
        ("-start.bsky.social", "does not start or end with a hyphen"),
        ("name.bsky.123", "does not start with a digit"),
        ("a" * 64 + ".bsky.social", "1 to 63 characters"),
        ("@", "empty"),
        ("did:plc:", "not a DID"),
        ("https://bsky.app/profile/not_valid..handle", "not '_'"),
    ],
)
def test_bad_handles_say_what_is_wrong(typed: str, why: str) -> None:
    refused(validate.bluesky_handle, typed, why)


# -- ORCID -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        "0000-0002-1825-0097",
        "0000000218250097",
        "https://orcid.org/0000-0002-1825-0097",
        "0000-0002-1694-233x",
    ],
)
def test_orcids_with_a_right_check_digit(typed: str) -> None:
    assert re.fullmatch(r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]", validate.orcid(typed))


def test_orcid_of_the_wrong_shape() -> None:
    refused(validate.orcid, "1234", "16 digits", "0000-0002-1825-0097")


def test_orcid_with_a_wrong_check_digit_says_which_it_would_be() -> None:
    refused(validate.orcid, "0000-0002-1825-0098", "check digit", "end in 7")


def test_an_author_name() -> None:
    assert validate.arxiv_author("  Sepp   Hochreiter ") == "Sepp Hochreiter"
    refused(validate.arxiv_author, "1234", "not a name")
    refused(validate.arxiv_author, "@mara.bsky.social", "follow it as a handle")


# -- categories ------------------------------------------------------------------------


def test_categories_in_canonical_case() -> None:
    assert validate.arxiv_category("cs.lg") == "cs.LG"
    assert validate.arxiv_category("COND-MAT.STAT-MECH") == "cond-mat.stat-mech"
    assert validate.arxiv_category("hep-th") == "hep-th"
    assert validate.arxiv_category("solv-int") == "solv-int"  # old records carry it
    assert validate.arxiv_category("cs", archives=True) == "cs"


def test_an_unknown_category_is_refused_with_the_closest() -> None:
    refused(validate.arxiv_category, "cs.XX", "not an arXiv category", "cs.LG", "cs.CV")
    refused(validate.arxiv_category, "cs.ML", "cs.LG (Machine Learning)", "stat.ML")
    refused(validate.arxiv_category, "cs.CVV", "cs.CV")
    refused(validate.arxiv_category, "quant-phy", "quant-ph")
    refused(validate.arxiv_category, "nonsense", "category_taxonomy")


def test_an_archive_is_not_a_category_to_follow() -> None:
    refused(validate.arxiv_category, "cs", "whole archive", "--oai-set cs")


def test_oai_sets() -> None:
    assert validate.oai_set("CS") == "cs"
    assert validate.oai_set("physics:hep-th") == "physics:hep-th"
    refused(validate.oai_set, "cs.LG", "is a category", "--category cs.LG")
    refused(validate.oai_set, "maths", "math")


def test_the_taxonomy_is_consistent() -> None:
    for code in CATEGORIES:
        archive = code.partition(".")[0]
        assert archive in ARCHIVES, code
    assert not set(CATEGORIES) & set(LEGACY)
    assert len(CATEGORIES) > 150 and {"cs.LG", "stat.ML", "eess.AS", "q-fin.TR"} <= set(CATEGORIES)
    assert all(s.partition(":")[2] in ARCHIVES for s in OAI_SETS if ":" in s)


def test_every_category_in_real_records_is_known(demo_dir: Path, shared: Path) -> None:
    """Categories as arXiv wrote them in the demo snapshot and the real recordings."""
    files = [
        *demo_dir.glob("arxiv-*.xml"),
        *sorted((shared / "arxiv").rglob("*.xml"))[:200],
        *sorted((shared / "arxiv").rglob("*.abs"))[:2000],
    ]
    seen: set[str] = set()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        seen.update(re.findall(r'<category term="([^"]+)"', text))
        seen.update(
            re.findall(r"<categories>([^<]+)</categories>", text)[0].split()
            if "<categories>" in text
            else []
        )
        seen.update(
            w for line in re.findall(r"^Categories: (.+)$", text, re.M) for w in line.split()
        )
    arxiv = {c for c in seen if re.fullmatch(r"[a-z-]+(\.[A-Za-z-]+)?", c)}
    assert len(arxiv) > 20, arxiv
    known = {k.lower() for k in (*CATEGORIES, *LEGACY)}
    # One 2007 record (math-ph/0702031v1) wrote its alias math.MP onto math-ph.
    unknown = sorted(c for c in arxiv - {"math-ph.MP"} if c.lower() not in known)
    assert not unknown


# -- papers and stories ----------------------------------------------------------------

ADDRESSES = [
    "2510.03172",
    "arXiv:2510.03172v2",
    "https://arxiv.org/abs/2510.03172",
    "https://arxiv.org/abs/2510.03172v2",
    "http://arxiv.org/pdf/2510.03172v1",
    "https://arxiv.org/pdf/2510.03172.pdf",
    "arxiv.org/html/2510.03172v1",
    "https://export.arxiv.org/abs/2510.03172",
    "https://www.alphaxiv.org/abs/2510.03172",
    "https://huggingface.co/papers/2510.03172",
    "https://doi.org/10.48550/arXiv.2510.03172",
    "https://arxiv.org/abs/2510.03172?context=cs.LG",
]


@pytest.mark.parametrize("typed", ADDRESSES)
def test_a_paper_by_any_address_resolve_accepts(typed: str) -> None:
    """Every form :mod:`lightnews.normalize.identifiers` finds in text is a paper here too."""
    from lightnews.normalize.identifiers import find_arxiv_mentions

    (found,) = find_arxiv_mentions([typed])
    assert validate.paper_id(typed).base == found.arxiv_id == "2510.03172"


def test_old_style_addresses() -> None:
    assert validate.paper_id("https://arxiv.org/abs/hep-th/9901001v2").base == "hep-th/9901001"


@pytest.mark.parametrize(
    "typed", ["https://example.org/abs/2510.03172", "2513.00001", "paper", "arxiv.org/abs/"]
)
def test_what_is_not_a_paper(typed: str) -> None:
    refused(validate.paper_id, typed, "not an arXiv paper", "https://arxiv.org/abs/")


def test_story_keys() -> None:
    assert validate.story_key("https://arxiv.org/abs/2510.03172v3") == "2510.03172"
    assert validate.story_key("item:42") == "item:42"
    refused(validate.story_key, "item:x", "whole number")
    refused(validate.story_key, "nothing", "not a story", "item:ID")


# -- numbers, pages, dates -------------------------------------------------------------


def test_pages_in_range() -> None:
    assert validate.page_in_range(1, 1) == 1
    refused(
        lambda p: validate.page_in_range(int(p), 1, "papers"),
        "5",
        "page 5 is past the end",
        "only 1 page of papers",
    )
    refused(lambda p: validate.page_in_range(int(p), 3), "0", "numbered from 1")


def test_whole_numbers() -> None:
    assert validate.whole_number(" 12 ", "a page") == 12
    refused(lambda t: validate.whole_number(t, "a page", 100), "101", "from 1 to 100")
    refused(lambda t: validate.whole_number(t, "a page"), "²", "whole number")


@pytest.mark.parametrize(
    ("typed", "moment"),
    [
        ("1d", datetime(2025, 11, 27, 15, 30, tzinfo=UTC)),
        ("12h", datetime(2025, 11, 28, 3, 30, tzinfo=UTC)),
        ("2w", datetime(2025, 11, 14, 15, 30, tzinfo=UTC)),
        ("today", datetime(2025, 11, 28, tzinfo=UTC)),
        ("Yesterday", datetime(2025, 11, 27, tzinfo=UTC)),
        ("2025-01-01", datetime(2025, 1, 1, tzinfo=UTC)),
        ("2025-01-01T12:00:00+02:00", datetime(2025, 1, 1, 10, tzinfo=UTC)),
        ("2025-01-01T12:00:00Z", datetime(2025, 1, 1, 12, tzinfo=UTC)),
    ],
)
def test_moments(typed: str, moment: datetime) -> None:
    assert validate.moment(typed, NOW) == moment


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("2025-13-45", "month must be in 1..12"),
        ("2025-02-30", "day is out of range"),
        ("soon", "12h, 1d, 2w, today, yesterday"),
        ("last week", "not a date"),
        ("1y", "not a date"),
    ],
)
def test_bad_moments(typed: str, why: str) -> None:
    refused(lambda t: validate.moment(t, NOW), typed, why)


def test_days_and_search_dates() -> None:
    assert validate.day("2025-11-27") == "2025-11-27"
    refused(validate.day, "2025-13-01", "not a day", "month must be in 1..12")
    refused(validate.day, "27.11.2025", "YYYY-MM-DD")
    assert validate.search_date("yesterday", NOW) == "2025-11-27"
    assert validate.search_date("2w", NOW) == "2025-11-14"
