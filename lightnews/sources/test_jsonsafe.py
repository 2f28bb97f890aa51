"""One lone surrogate in one string of a JSON page costs that character, not the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lightnews.model import SourceState
from lightnews.settings import Settings
from lightnews.sources import get_source_class
from lightnews.sources.jsonsafe import loads

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


def test_lone_surrogate_escapes_become_replacement_characters() -> None:
    assert loads(b'{"a":"x\\ud83d y"}') == {"a": "x\ufffd y"}
    assert loads(b'{"a":"\\ude00"}') == {"a": "\ufffd"}
    assert loads(b'{"a":"\\ud83d\\ude00"}') == {"a": "\U0001f600"}  # a pair is kept
    assert loads(b'{"a":"\\\\ud83d"}') == {"a": "\\ud83d"}  # an escaped backslash, not an escape
    assert loads(b'{"a":"\xed\xa0\x80b"}') == {"a": "\ufffd\ufffd\ufffdb"}  # as UTF-8 bytes


def _broken(path: Path, where: list[str | int]) -> bytes:
    """The recording at ``path`` with a lone ``\\ud83d`` put in the string at ``where``."""
    document = json.loads(path.read_text())
    parent = document
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] += "\ud83d"
    return json.dumps(document).encode()  # json writes it escaped: "\ud83d"


@pytest.mark.parametrize(
    ("kind", "address", "recording", "where"),
    [
        (
            "bluesky",
            "someone.bsky.social",
            "bluesky/getAuthorFeed.embeds.json",
            ["feed", 0, "post", "record", "text"],
        ),
        ("hf-daily", "", "hf/daily_papers.2025-10-02.json", [0, "paper", "title"]),
        ("hf-papers-feed", "https://example.org/x", "hf/papers-feed.json", ["items", 0, "title"]),
    ],
)
def test_a_page_with_one_lone_surrogate_keeps_every_item(
    kind: str, address: str, recording: str, where: list[str | int]
) -> None:
    source = get_source_class(kind)(address, {}, Settings(environ={}))
    path = DATA / recording
    whole = source.read(path.read_bytes(), SourceState(), url=address or None)
    broken = source.read(_broken(path, where), SourceState(), url=address or None)
    assert [i.key for i in broken.items] == [i.key for i in whole.items]
    assert any("\ufffd" in i.title or "\ufffd" in i.text for i in broken.items)


def test_a_json_feed_with_one_lone_surrogate_keeps_every_item() -> None:
    body = (
        b'{"version":"https://jsonfeed.org/version/1.1","items":['
        b'{"id":"1","title":"cut \\ud83d"},{"id":"2","title":"whole"}]}'
    )
    source = get_source_class("feed")("https://e.org/f", {}, Settings(environ={}))
    batch = source.read(body, SourceState(), url="https://e.org/f")
    assert [(i.key, i.title) for i in batch.items] == [("1", "cut \ufffd"), ("2", "whole")]
