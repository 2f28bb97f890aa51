"""Hard cases of id, TeX, name, HTML and time normalization."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lightnews.normalize import clean_text, html_to_text, iso_utc, parse_arxiv_id, sanitize_html
from lightnews.normalize.names import author_from_parts, fold, name_key, split_author_list
from lightnews.normalize.tex import tex_to_text, tex_to_unicode


@pytest.mark.parametrize(
    ("raw", "base", "version"),
    [
        ("2510.02375", "2510.02375", None),
        ("2510.02375v3", "2510.02375", 3),
        ("arXiv:2505.20295v1", "2505.20295", 1),
        ("ARXIV:0704.0001", "0704.0001", None),
        ("hep-th/9901001", "hep-th/9901001", None),
        ("hep-th/9901001v2", "hep-th/9901001", 2),
        ("math.GT/0309136", "math/0309136", None),
        ("cond-mat/0011004", "cond-mat/0011004", None),
        ("1412.3456", "1412.3456", None),
    ],
)
def test_arxiv_ids_parse(raw: str, base: str, version: int | None) -> None:
    parsed = parse_arxiv_id(raw)
    assert parsed is not None
    assert (parsed.base, parsed.version) == (base, version)


@pytest.mark.parametrize(
    "raw", ["abc", "0000.0000", "2513.12345", "1412.12345", "1501.1234", "foo/9901001", "2510.0237"]
)
def test_not_arxiv_ids(raw: str) -> None:
    assert parse_arxiv_id(raw) is None


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"J\"urgen Schmidhuber", "Jürgen Schmidhuber"),
        (r"M{\"u}ller", "Müller"),
        (r"{\"O}zt{\"u}rk", "Öztürk"),
        (r"Andr\'e", "André"),
        (r"Fran\c{c}ois", "François"),
        (r"\c Celik", "Çelik"),
        (r"Erd\H{o}s", "Erdős"),
        (r"Du\v{s}an", "Dušan"),
        (r"{\L}ukasz", "Łukasz"),
        (r"Bj\o rn", "Bjørn"),
        (r"\AA ngstr\"om", "Ångström"),
        (r"Stra\ss e", "Straße"),
        (r"Na\"{\i}ve", "Naïve"),
        (r"Sparse $\ell_1$ {Recovery}", r"Sparse $\ell_1$ Recovery"),
        (r"{\em Anonymous} transfer", "Anonymous transfer"),
        ("Density dependence of\n  the symmetry", "Density dependence of the symmetry"),
        (r"R\&D at 50\% ", "R&D at 50%"),
        (r"H. Smith\, Jr", "H. Smith Jr"),
        (r"Mc\-Donald~and co", "McDonald and co"),
    ],
)
def test_tex_to_unicode(tex: str, text: str) -> None:
    assert tex_to_unicode(tex) == text


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"Beyond $\ell_1$: Sparse Recovery", "Beyond ℓ₁: Sparse Recovery"),
        (r"$O(n \log n)$ attention", "O(n log n) attention"),
        (r"$\alpha$-divergence and $x^{2}$", "α-divergence and x²"),
        (r"$k$-NN with $x_{ij}$", "k-NN with xᵢⱼ"),
        (r"J\"urgen's 100% result", "Jürgen's 100% result"),  # a percent sign is not a comment
        ("No markup at all", "No markup at all"),
    ],
)
def test_tex_to_text_renders_math_for_people(tex: str, text: str) -> None:
    assert tex_to_text(tex) == text


def test_split_flat_author_list() -> None:
    names = [a.name for a in split_author_list("D.V. Shetty, S.J. Yennello, and G.A. Souliotis")]
    assert names == ["D.V. Shetty", "S.J. Yennello", "G.A. Souliotis"]
    authors = split_author_list(r"A. Smith (MIT), B. Jones ((1) Harvard, (2) MIT) and J\"org Ko")
    assert [a.name for a in authors] == ["A. Smith", "B. Jones", "Jörg Ko"]
    assert [a.name for a in split_author_list("J. Mueller-Quade and H. Imai")] == [
        "J. Mueller-Quade",
        "H. Imai",
    ]


def test_structured_author_and_keys() -> None:
    author = author_from_parts(r"Sch\"olkopf", "Bernhard")
    assert author.name == "Bernhard Schölkopf"
    assert name_key(author.name, author.keyname) == "scholkopf"
    assert name_key("Hochreiter, S.") == name_key("Sepp Hochreiter") == "hochreiter"
    assert fold("Łukasz Müller-Lé") == "lukasz muller le"


def test_sanitize_removes_script_and_handlers() -> None:
    dirty = (
        '<p onclick="x()">Hi<script>alert(1)</script><img src="a.png" onerror="alert(2)">'
        '<a href="javascript:alert(3)">bad</a><a href="https://arxiv.org/abs/2510.02375">ok</a>'
        "<style>p{}</style><iframe src=//evil></iframe></p>"
    )
    clean = sanitize_html(dirty)
    for bad in ("script", "onclick", "onerror", "javascript:", "style", "iframe", "alert"):
        assert bad not in clean
    assert 'href="https://arxiv.org/abs/2510.02375"' in clean
    assert 'rel="noopener noreferrer nofollow"' in clean


def test_html_to_text_keeps_blocks_apart() -> None:
    assert html_to_text("<h2>Title</h2><p>One <b>two</b></p><ul><li>a</li><li>b</li></ul>") == (
        "Title\nOne two\na\nb"
    )
    assert html_to_text("plain &amp; simple") == "plain & simple"
    assert html_to_text("<p>unclosed <b>bold") == "unclosed bold"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Tue, 3 Apr 2007 22:04:11 GMT", "2007-04-03T22:04:11Z"),
        ("2017-07-27T08:18:33Z", "2017-07-27T08:18:33Z"),
        ("2016-10-09T00:00:00-04:00", "2016-10-09T04:00:00Z"),
        ("2025-10-03", "2025-10-03T00:00:00Z"),
        (time.struct_time((2025, 1, 2, 3, 4, 5, 0, 0, 0)), "2025-01-02T03:04:05Z"),
        ("not a date", None),
        ("", None),
        (None, None),
    ],
)
def test_iso_utc(value: object, expected: str | None) -> None:
    assert iso_utc(value) == expected


# -- total over their input type (issue 14: out-of-range dates, huge numbers, controls) ------


@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:59:59-05:00",  # past the last moment a datetime holds, once in UTC
        "0001-01-01T00:00:00+05:00",  # before the first
        "Fri, 31 Dec 9999 23:59:59 -0500",
        time.struct_time((10000, 1, 1, 0, 0, 0, 0, 0, 0)),
        time.struct_time((2025, 13, 1, 0, 0, 0, 0, 0, 0)),
        "2025-01-01" + "0" * 5000,
        12345,
    ],
)
def test_iso_utc_drops_times_it_cannot_write(value: object) -> None:
    assert iso_utc(value) is None


def test_iso_utc_writes_early_years_with_four_digits() -> None:
    assert iso_utc("0099-01-02T03:04:05Z") == "0099-01-02T03:04:05Z"  # sorts as text


def test_a_4301_digit_version_is_not_an_id() -> None:
    assert parse_arxiv_id("2501.00001v" + "9" * 4301) is None
    assert parse_arxiv_id("2501.00001v12") == parse_arxiv_id("arXiv:2501.00001v12")


def test_html_to_text_with_a_control_character_reference() -> None:
    assert html_to_text("<p>a</p>&#1;b<br>&#x1f;c") == "a\nb\nc"


_TEXT = st.text(st.characters(codec="utf-8"), max_size=300) | st.sampled_from(
    ["9999-12-31T23:59:59-05:00", "2501.00001v" + "9" * 4301, "&#1;<p>x</p>", r"\"{\i}"]
)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_normalizers_are_total(text: str) -> None:
    assert iso_utc(text) is None or len(iso_utc(text) or "") == 20
    parse_arxiv_id(text)
    assert isinstance(tex_to_unicode(text), str)
    assert all(a.name for a in split_author_list(text))
    assert "\n" not in clean_text(text) if text else True
    assert "<script" not in sanitize_html(text).lower()
    assert isinstance(html_to_text(text), str)
