"""Never replace stored data with a worse copy of it.

A feed cut off in transit, a ``.abs`` record truncated on disk, or a
document feedparser had to repair can carry the same records as before with
their text cut short. Writing them would replace a 652-character abstract by
its first 448 characters. These pure rules decide, before any write, whether
a fresh copy may replace the stored one; they know nothing of SQL, so every
storage backend applies the same ones (the paper merge of
:mod:`lightnews.store.merge` and the save of items, which SQLite and
PostgreSQL share).

* A text that is a strict prefix of the stored text (blanks at its end
  aside) is the stored text cut short: the stored one stays. So is one whose
  cut is marked ("…", "[...]", "Read more", a link saying so) where the part
  before the mark is such a prefix: feeds that publish excerpts say so.
* Items read from a document that was not well-formed never replace stored
  items (new ones are still added): what was repaired may be what was cut.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lightnews.model import Item

__all__ = ["PAPER_TEXT_FIELDS", "cut_short", "item_kept_reason", "without_cut_mark"]

#: Paper fields a cut record would shorten; the stored value stays when the fresh one is cut.
PAPER_TEXT_FIELDS = ("title", "abstract", "comments", "journal_ref")


def cut_short(fresh: str | None, stored: str | None) -> bool:
    """Whether ``fresh`` is ``stored`` cut short: a strict prefix of it, end blanks aside,
    or such a prefix followed by a mark of the cut ("…", "[...]", "Read more").

    >>> cut_short("Deep nets are", "Deep nets are shallow.")
    True
    >>> cut_short("Deep nets are shallow.", "Deep nets are")
    False
    >>> cut_short("Deep nets are…", "Deep nets are…")  # the same, however it ends
    False
    """
    if not stored:
        return False
    whole = stored.rstrip()
    head = (fresh or "").rstrip()
    if head == whole:
        return False
    if len(head) < len(whole) and stored.startswith(head):
        return True
    before = without_cut_mark(head)
    return before != head and len(before) < len(whole) and stored.startswith(before)


#: Blanks and tags at the end of a text (``</p>``, the ``<a>`` a "Read more" link opens).
_TAIL = re.compile(r"(?:\s|<[^<>]*>)+$")
#: A mark saying the text was cut: "…", "...", "[...]", "(…)", "Read more", "Continue reading".
_CUT_MARK = re.compile(
    r"(?:\[\s*(?:…|\.{3})\s*\]|\(\s*(?:…|\.{3})\s*\)|…|\.{3}"
    r"|\b(?:read more|continue reading|read the rest|see more|keep reading)"
    r"(?:\s*(?:…|\.{3}|»|›|→|>>))?|»|→)$",
    re.IGNORECASE,
)


def without_cut_mark(text: str) -> str:
    """``text`` without the marks of a cut at its end (and the blanks and tags around them).

    >>> without_cut_mark("We write down a toy [...]</p>")
    'We write down a toy'
    >>> without_cut_mark('A toy. <a href="/post">Read more »</a>')
    'A toy.'
    >>> without_cut_mark("A toy model.")
    'A toy model.'
    """
    head, marked = text, False
    while True:
        bare = _TAIL.sub("", head)
        mark = _CUT_MARK.search(bare)
        if mark is None:
            return bare if marked else text
        head, marked = bare[: mark.start()], True


def item_kept_reason(stored: Mapping[str, Any], fresh: Item, *, well_formed: bool) -> str | None:
    """Why the stored item (its ``title`` and ``text``) must stay instead of ``fresh``; or None."""
    if not well_formed:
        return "stored copy kept: this copy comes from a document that is not well-formed"
    for name, value in (("text", fresh.text), ("title", fresh.title)):
        if cut_short(value, stored.get(name)):
            return f"stored copy kept: the new {name} is the stored one cut short"
    return None
