"""The conversation on a story, shaped from rows: paging, and replies under what they answer.

Shaping is pure (:func:`~lightnews.rank.conversation.conversation_of`); the
real posts replayed onto every surface are ``serve/test_conversation.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from lightnews.rank.conversation import conversation_of
from lightnews.sources.jetstream import POST
from lightnews.store.network import ConversationPost

PAPER = "2505.20295"


def _when(minutes_ago: float) -> tuple[str, int]:
    moment = datetime.now(UTC) - timedelta(minutes=minutes_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z"), int(moment.timestamp() * 1_000_000)


def _said(uri: str, did: str, minutes_ago: int, **fields: Any) -> ConversationPost:
    created, time_us = _when(minutes_ago)
    values: dict[str, Any] = {
        "uri": uri,
        "did": did,
        "kind": "post",
        "text": uri,
        "created_at": created,
        "time_us": time_us,
        "handle": "",
        "name": "",
        "bot": False,
        "method": "arxiv-url",
        "confidence": 1.0,
        **fields,
    }
    return ConversationPost(**values)


def test_a_popular_paper_pages_its_posts() -> None:
    posts = [_said(f"at://did:plc:p{n:04d}/{POST}/r", f"did:plc:p{n:04d}", n) for n in range(45)]
    now = datetime.now(UTC)
    first = conversation_of(PAPER, posts, followed={}, now=now, page_size=20)
    last = conversation_of(PAPER, posts, followed={}, now=now, page=3, page_size=20)
    assert (first.pages, first.total_units, len(first.units), len(last.units)) == (3, 45, 20, 5)
    assert first.units[0].first.did == "did:plc:p0000"  # newest first
    assert last.units[-1].first.did == "did:plc:p0044"
    assert conversation_of(PAPER, posts, followed={}, now=now, page=99).page == 3


def test_a_reply_to_a_reply_sits_under_the_thread_it_answers() -> None:
    root = f"at://did:plc:a/{POST}/root"
    reply = _said(f"at://did:plc:b/{POST}/r1", "did:plc:b", 5, reply_root=root, reply_parent=root)
    deeper = _said(
        f"at://did:plc:c/{POST}/r2", "did:plc:c", 4, reply_root=root, reply_parent=reply.uri
    )
    quote_of_reply = _said(
        f"at://did:plc:d/{POST}/q", "did:plc:d", 3, kind="quote", subject=reply.uri
    )
    talk = conversation_of(
        PAPER,
        [quote_of_reply, deeper, reply, _said(root, "did:plc:a", 9)],
        followed={},
        now=datetime.now(UTC),
    )
    [unit] = talk.units
    assert unit.first.uri == root
    assert [p.uri for p in unit.replies] == [reply.uri, deeper.uri]
    assert [p.answers for p in unit.replies] == [root, reply.uri]
    assert [p.uri for p in unit.quotes] == [quote_of_reply.uri]
