"""Reading JSON responses (Bluesky, Daily Papers, JSON Feed): a bad string costs only itself.

orjson refuses a whole document for one lone surrogate escape (``"\\ud83d"``,
an emoji cut in half by whoever wrote it) or one surrogate encoded as UTF-8
bytes: a whole page of posts would be lost for one broken character. Such a
document is read again with each broken character replaced by U+FFFD, so the
field that held it keeps the rest of its text and every other item is read.

Decoding runs with the cycle collector paused: a 15 MB body of small nested
arrays makes millions of containers, and the collections their allocation
triggers made decoding it take seven times as long (2.8 s instead of 0.4 s).
Decoded JSON holds no reference cycles, so nothing is left for it to collect.
Even so, every later collection walks all the containers a document made,
so a body of more than a million arrays and objects (no real response comes
near: a page of 100 Bluesky posts makes about 5,000) is refused before it is
decoded, at the cost of counting two bytes.
"""

from __future__ import annotations

import gc
import re
from typing import Any

import orjson

__all__ = ["loads"]

#: A ``\uD800``-``\uDFFF`` escape that is not half of a pair (after an even run of backslashes).
_LONE_SURROGATE = re.compile(
    rb"(?<!\\)((?:\\\\)*)(?:\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)


def _decode(body: bytes | str) -> Any:
    paused = gc.isenabled()
    gc.disable()
    try:
        return orjson.loads(body)
    finally:
        if paused:
            gc.enable()


def _repaired(body: bytes) -> bytes:
    """``body`` with every lone surrogate escape, and every invalid UTF-8 byte, as U+FFFD."""
    text = _LONE_SURROGATE.sub(rb"\1\\ufffd", body)
    return text.decode("utf-8", "replace").encode("utf-8")


#: Most arrays and objects (counted as ``[`` and ``{`` bytes, strings included) decoded.
MAX_CONTAINERS = 1_000_000


def loads(body: bytes) -> Any:
    """``body`` decoded as JSON, broken characters replaced; raises orjson.JSONDecodeError."""
    containers = body.count(b"[") + body.count(b"{")
    if containers > MAX_CONTAINERS:
        raise orjson.JSONDecodeError(
            f"{containers:,} arrays and objects, more than a response may hold "
            f"({MAX_CONTAINERS:,})",
            "",
            0,
        )
    try:
        return _decode(body)
    except orjson.JSONDecodeError as error:
        repaired = _repaired(body)
        if repaired == body:
            raise
        try:
            return _decode(repaired)
        except orjson.JSONDecodeError:
            raise error from None
