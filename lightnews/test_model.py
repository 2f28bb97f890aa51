"""The common model: an item's kind-specific fields survive storage as they were."""

from __future__ import annotations

import orjson

from lightnews.demo import SNAPSHOT_FILES, snapshot_path
from lightnews.model import Item, SourceState, item_extra, read_extra
from lightnews.sources import get_source_class


def _demo_items() -> list[Item]:
    items: list[Item] = []
    for name, kind in SNAPSHOT_FILES:
        source = get_source_class(kind)(f"demo:{name}")
        items += source.parse(snapshot_path(name).read_bytes(), SourceState()).items
    return items


def test_kind_fields_round_trip_through_their_stored_json() -> None:
    items = _demo_items()
    kinds = {i.kind for i in items if i.post or i.daily or i.note or i.record}
    assert {"post", "repost", "daily", "note", "paper"} <= kinds
    for item in items:
        stored = orjson.loads(orjson.dumps(item_extra(item)))
        post, daily, note, record = read_extra(item.kind, stored)
        assert (post, daily, note, record) == (item.post, item.daily, item.note, item.record)


def test_empty_values_are_left_out_and_unknown_shapes_read_as_nothing() -> None:
    assert item_extra(Item(key="k", kind="article")) == {}
    assert item_extra(Item(key="k", kind="article", code_links=["https://github.com/a/b"])) == {
        "code_links": ["https://github.com/a/b"]
    }
    assert read_extra("article", {"anything": 1}) == (None, None, None, None)
    post, *_ = read_extra("post", {"uri": "at://x", "card": "not a card", "langs": [1, "en"]})
    assert post is not None and post.card is None and post.langs == ("en",)
