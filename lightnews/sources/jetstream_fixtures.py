"""Jetstream events for tests and benchmarks, made from real post records.

No recording of Jetstream itself was available under a clear licence, so the
events are built in its published schema (``did``, ``time_us``, ``kind``,
``commit.{rev, operation, collection, rkey, record, cid}``; ``identity`` and
``account`` events) around the real post records of
``../shared/fixtures/seed-pages/bluesky/getAuthorFeed.mkirchhof.json`` (facets,
link cards, quotes, emoji that shift the UTF-8 byte offsets) and
``bluesky/atproto-recorded/`` (records without papers). Filler posts, reposts,
follows, deletes and identity changes make the mix the network sends: most
events name no paper. Everything is generated when asked, from a seed, so no
large file is kept in the repository.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from lightnews.sources.jetstream import FOLLOW, POST, REPOST

__all__ = [
    "EventMaker",
    "SeedRecord",
    "account_event",
    "commit_event",
    "identity_event",
    "listing_record",
    "seed_records",
    "text_record",
]

_WORDS = (
    "the a of to and in is it you that for on was with this my be at so have are not just "
    "but like what all about can they more one love time good people new day today now "
    "music art photo night coffee game weekend friends news city cat dog book movie vote "
    "sky blue morning thread update post really think know would could make way life"
).split()
_START_US = 1_733_200_000_000_000  # 2024-12-03, in microseconds


@dataclass(frozen=True, slots=True)
class SeedRecord:
    """A real post record and who wrote it."""

    did: str
    rkey: str
    record: dict[str, Any]


def seed_records(shared: Path) -> list[SeedRecord]:
    """The real post records of the shared fixtures (the seed author feed and atproto's)."""
    feed = orjson.loads((shared / "seed-pages/bluesky/getAuthorFeed.mkirchhof.json").read_bytes())
    found = []
    for entry in feed["feed"]:
        post = entry["post"]
        did, _, rkey = post["uri"][5:].split("/")
        found.append(SeedRecord(did, rkey, post["record"]))
    for name in ("post_record.json", "extended_post_record.json"):
        data = orjson.loads((shared / "bluesky/atproto-recorded" / name).read_bytes())
        did, _, rkey = data["uri"][5:].split("/")
        found.append(SeedRecord(did, rkey, data["value"]))
    return found


def commit_event(
    did: str,
    time_us: int,
    collection: str,
    rkey: str,
    record: dict[str, Any] | None,
    *,
    operation: str = "create",
) -> dict[str, Any]:
    """A commit event as Jetstream sends it (a delete carries no record and no cid)."""
    commit: dict[str, Any] = {
        "rev": f"3l{time_us % 10**11:011d}",
        "operation": operation,
        "collection": collection,
        "rkey": rkey,
    }
    if record is not None:
        commit["record"] = record
        commit["cid"] = "bafyrei" + f"{abs(hash((did, rkey))) % 10**40:040d}"[:52]
    return {"did": did, "time_us": time_us, "kind": "commit", "commit": commit}


def identity_event(did: str, time_us: int, handle: str) -> dict[str, Any]:
    return {
        "did": did,
        "time_us": time_us,
        "kind": "identity",
        "identity": {
            "did": did,
            "handle": handle,
            "seq": time_us // 1000,
            "time": "2024-12-03T10:00:00.000Z",
        },
    }


def account_event(did: str, time_us: int, active: bool = True) -> dict[str, Any]:
    account: dict[str, Any] = {
        "active": active,
        "did": did,
        "seq": time_us // 1000,
        "time": "2024-12-03T10:00:00.000Z",
    }
    if not active:
        account["status"] = "deactivated"
    return {"did": did, "time_us": time_us, "kind": "account", "account": account}


def text_record(text: str, created: str = "2024-12-03T10:00:00.000Z") -> dict[str, Any]:
    return {"$type": POST, "text": text, "langs": ["en"], "createdAt": created}


def listing_record(arxiv_id: str, title: str, category: str = "cs.LG") -> dict[str, Any]:
    """A post as arXiv-listing bots write them: the category, the title, the link."""
    text = f"[{category}] {title} arxiv.org/abs/{arxiv_id}"
    start = len(text.encode()) - len(f"arxiv.org/abs/{arxiv_id}")
    return {
        **text_record(text),
        "facets": [
            {
                "$type": "app.bsky.richtext.facet",
                "index": {"byteStart": start, "byteEnd": len(text.encode())},
                "features": [
                    {
                        "$type": "app.bsky.richtext.facet#link",
                        "uri": f"https://arxiv.org/abs/{arxiv_id}",
                    }
                ],
            }
        ],
    }


class EventMaker:
    """A reproducible stream of events in the mix the network sends.

    ``paper_share`` of the posts are real seed records that name papers (each
    under a new author and key, so each is a distinct post); the rest are
    filler posts, reposts, follows, deletes, identity and account events.
    """

    def __init__(self, seeds: list[SeedRecord], *, seed: int = 7, paper_share: float = 0.01):
        self.random = random.Random(seed)
        self.papers = [s for s in seeds if "arxiv" in orjson.dumps(s.record).decode().lower()]
        self.plain = [s for s in seeds if s not in self.papers]
        self.paper_share = paper_share
        self.time_us = _START_US
        self.serial = 0

    def _did(self) -> str:
        return f"did:plc:{self.random.getrandbits(100):025x}"[:32]

    def _rkey(self) -> str:
        self.serial += 1
        return f"3l{self.serial:011d}"

    def _filler(self) -> dict[str, Any]:
        words = self.random.choices(_WORDS, k=self.random.randint(5, 45))
        record = text_record(" ".join(words))
        if self.random.random() < 0.15:
            record["embed"] = {
                "$type": "app.bsky.embed.external",
                "external": {
                    "uri": f"https://example.com/{self.random.getrandbits(32):x}",
                    "title": " ".join(self.random.choices(_WORDS, k=6)),
                    "description": "",
                },
            }
        return record

    def events(self, count: int) -> Iterator[dict[str, Any]]:
        """``count`` events, in time order."""
        for _ in range(count):
            self.time_us += self.random.randint(200, 4000)
            roll = self.random.random()
            did = self._did()
            if roll < 0.70:
                if self.papers and self.random.random() < self.paper_share:
                    record = self.random.choice(self.papers).record
                elif self.plain and self.random.random() < 0.02:
                    record = self.random.choice(self.plain).record
                else:
                    record = self._filler()
                yield commit_event(did, self.time_us, POST, self._rkey(), record)
            elif roll < 0.85:
                subject = {
                    "uri": f"at://{self._did()}/{POST}/{self._rkey()}",
                    "cid": "bafyreisubject",
                }
                record = {
                    "$type": REPOST,
                    "subject": subject,
                    "createdAt": "2024-12-03T10:00:00.000Z",
                }
                yield commit_event(did, self.time_us, REPOST, self._rkey(), record)
            elif roll < 0.93:
                record = {
                    "$type": FOLLOW,
                    "subject": self._did(),
                    "createdAt": "2024-12-03T10:00:00.000Z",
                }
                yield commit_event(did, self.time_us, FOLLOW, self._rkey(), record)
            elif roll < 0.97:
                yield commit_event(did, self.time_us, POST, self._rkey(), None, operation="delete")
            elif roll < 0.99:
                yield identity_event(did, self.time_us, f"user{self.serial}.bsky.social")
            else:
                yield account_event(did, self.time_us, active=self.random.random() < 0.8)

    def lines(self, count: int) -> Iterator[bytes]:
        """The same events as the raw bytes of websocket messages."""
        for event in self.events(count):
            yield orjson.dumps(event)
