"""Safe URLs: only http(s), written one way, whatever a hostile source sends."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lightnews.normalize.urls import safe_url, safe_urls


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("https://example.org/a?b=1#c", "https://example.org/a?b=1#c"),
        ("HTTP://EXAMPLE.org/Path", "http://EXAMPLE.org/Path"),
        ("HtTpS://example.org", "https://example.org"),
        ("  https://example.org/x  \n", "https://example.org/x"),
        ("https://exa\tmple.org/a\nb", "https://example.org/ab"),
        ('https://example.org/a b"<c>', "https://example.org/a%20b%22%3Cc%3E"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("https://example.org:443/", "https://example.org:443/"),
        ("https://example.org?q", "https://example.org/?q"),
    ],
)
def test_http_urls_are_kept_in_one_form(raw: str, safe: str) -> None:
    assert safe_url(raw) == safe


@pytest.mark.parametrize(
    "raw",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " java\tscript:alert(1)",
        "\x01javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "ftp://example.org/",
        "mailto:someone@example.org",
        "//example.org/no-scheme",
        "/relative/path",
        "https:\\\\evil.example",
        "https://trusted.example@evil.example/",
        "https://user:pass@example.org/",
        "https:///no-host",
        "https://exa mple.org/",
        "https://example.org:99999/",
        "http://[::1/",
        "https://example.org/a\x00b",
        "https://xn--/",
        "",
        None,
        42,
    ],
)
def test_anything_else_is_refused(raw: object) -> None:
    assert safe_url(raw) is None


def test_safe_urls_keeps_order_and_drops_the_rest() -> None:
    assert safe_urls(["https://a.example/", "javascript:x", None, "HTTPS://a.example/"]) == [
        "https://a.example/"
    ]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.from_regex(r"\A(?i:https?|javascript|data):[^\n]{0,40}\Z")))
@example("java\tscript:alert(1)")
@example("https://\u0080")
def test_safe_url_is_total_and_stable(raw: str) -> None:
    safe = safe_url(raw)
    if safe is not None:
        assert safe.startswith(("http://", "https://"))
        assert not any(c in safe for c in ' \t\r\n"<>`\x00')
        assert safe_url(safe) == safe  # already in its one form
