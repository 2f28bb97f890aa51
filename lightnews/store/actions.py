"""Changes made of several store calls that belong together, for every front end.

A reader's marks on several stories or papers are all checked before any is
written (one unknown key changes nothing), and a setting is saved where it
belongs: a reader's own (:data:`~lightnews.store.readers.READER_SETTINGS`) for
that reader, any other for the whole instance, with a line in the audit log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lightnews.errors import NotFound
from lightnews.store.readers import READER_SETTINGS, ReaderId

if TYPE_CHECKING:
    from lightnews.store.base import Store

__all__ = ["mark_stories", "record_paper_feedback", "save_setting"]


def mark_stories(
    store: Store,
    reader: ReaderId,
    keys: Sequence[str],
    now: str,
    *,
    read: bool,
    saved: bool | None = None,
) -> list[str]:
    """Mark stories (arXiv ids, or ``item:ID``) read or unread (``saved``: saved too), once
    each; raises :class:`NotFound`, marking nothing, when one of them is not stored."""
    for key in keys:  # all of them known before any is marked
        if key.startswith("item:"):
            store.get_item(int(key.removeprefix("item:")))
        else:
            store.get_paper(key)
    marked = list(dict.fromkeys(keys))
    for key in marked:
        store.mark_story(reader, key, now, read=read, saved=saved)
    return marked


def record_paper_feedback(
    store: Store, reader: ReaderId, keys: Sequence[str], decision: str | None, now: str
) -> list[str]:
    """The reader's word on papers ("more-like-this", "not-interested", None: forgotten),
    once each; raises :class:`NotFound`, recording nothing, when one is not a stored paper."""
    rows: dict[str, int] = {}
    for key in dict.fromkeys(keys):
        row = None if key.startswith("item:") else store.paper_row_id(key)
        if row is None:
            raise NotFound(f"{key} is not a stored paper (only papers take this)")
        rows[key] = row
    for row in rows.values():
        store.set_paper_feedback(reader, row, decision, now)
    return list(rows)


def save_setting(
    store: Store, reader: ReaderId, name: str, value: str | None, *, by: str, now: str
) -> None:
    """Save a setting (``None``: forget it): the reader's own for ``reader``, the instance's
    for everyone, recorded in the audit log as changed ``by`` whom."""
    if name in READER_SETTINGS:  # the reader's own (see store/readers.py)
        store.save_reader_setting(reader, name, value)
        return
    store.save_setting(name, value)  # the instance's: audited
    if value is None:
        store.audit(by, "settings.unset", name, now)
    else:
        store.audit(by, "settings.set", f"{name} = {value}", now)
