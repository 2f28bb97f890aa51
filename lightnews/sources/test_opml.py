"""A reader's OPML file read for ``sources add --opml`` (:func:`read_subscriptions`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lightnews.errors import UsageError
from lightnews.sources.opml import OpmlFeed, Subscription, read_subscriptions, write_opml


def test_each_address_is_checked_and_each_title_cut(tmp_path: Path) -> None:
    path = tmp_path / "subs.opml"
    path.write_bytes(
        write_opml(
            [
                OpmlFeed("https://example.org/feed.xml", "A blog with a long title", "Labs"),
                OpmlFeed("javascript:alert(1)", "Not a feed"),
            ]
        )
    )
    found = read_subscriptions(path, None, 6)
    assert found.feeds == (Subscription("https://example.org/feed.xml", "A blog", "Labs"),)
    assert [url for url, _ in found.refused] == ["javascript:alert(1)"]
    assert not found.none_followable
    filed = read_subscriptions(path, "Mine", 100)
    assert filed.feeds[0].folder == "Mine"


def test_a_file_that_is_no_list_of_subscriptions_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "not.opml"
    path.write_bytes(b"<html><body>hello</body></html>")
    with pytest.raises(UsageError, match=r"not\.opml"):
        read_subscriptions(path, None, 100)
    only_bad = tmp_path / "bad.opml"
    only_bad.write_bytes(write_opml([OpmlFeed("ftp://example.org/feed")]))
    assert read_subscriptions(only_bad, None, 100).none_followable
