"""What changed between two versions of a paper, decided without a database.

A paper's stored row is always its newest text; when a new version (or a
corrected record) changes it, the store keeps the text before and after in
``paper_revisions`` (:meth:`~lightnews.store.writes.WriteQueries.save_prepared`). These pure rules
compare two such texts field by field, write the abstract's change as a word
diff, and name the change the way the feed says it ("v3: abstract changed",
"v2: title and authors changed"), so every backend and every page agree.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TRACKED",
    "Revision",
    "RevisionChange",
    "change_note",
    "changes_between",
    "word_diff",
]

#: The fields a reader cares about, in the order a change names them.
TRACKED = ("title", "abstract", "authors", "comments", "categories", "journal_ref", "withdrawn")


@dataclass(frozen=True, slots=True)
class Revision:
    """A paper's text as it was at one version (``seen_at``: when Lightnews stored it)."""

    version: int
    seen_at: str
    title: str
    abstract: str
    authors: str
    comments: str | None
    categories: str
    journal_ref: str | None
    withdrawn: bool

    @classmethod
    def from_row(cls, row: Any) -> Revision:
        """A ``paper_revisions`` row (read by column name, on either backend)."""
        return cls(
            row["version"],
            row["seen_at"],
            row["title"],
            row["abstract"],
            row["authors"],
            row["comments"],
            row["categories"],
            row["journal_ref"],
            bool(row["withdrawn"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": f"v{self.version}",
            "seen_at": self.seen_at,
            "title": self.title,
            "authors": self.authors,
            "comments": self.comments,
            "categories": self.categories.split(),
            "journal_ref": self.journal_ref,
            "withdrawn": self.withdrawn,
        }


@dataclass(frozen=True, slots=True)
class RevisionChange:
    """What changed from one stored version to the next.

    ``fields`` names the changed fields (:data:`TRACKED` order); ``abstract``
    is the word diff of the abstract as ``(op, words)`` pairs, ``op`` one of
    ``=`` (kept), ``-`` (removed) and ``+`` (added); ``before`` and ``after``
    hold the other changed fields' old and new values. ``seen_at`` is when
    Lightnews stored the new text; ``dated`` when arXiv posted that version,
    when the paper's record says (what a reader wants to know: a library
    built today from an old snapshot stores last month's versions today).
    """

    version: int
    previous: int
    seen_at: str
    fields: tuple[str, ...]
    abstract: tuple[tuple[str, str], ...] = ()
    before: tuple[tuple[str, str], ...] = ()
    after: tuple[tuple[str, str], ...] = ()
    dated: str | None = None

    @property
    def note(self) -> str:
        """ "v3: abstract changed", "v2: title and authors changed", "v4: withdrawn"."""
        return change_note(self.version, self.fields)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": f"v{self.version}",
            "previous": f"v{self.previous}",
            "seen_at": self.seen_at,
            "dated": self.dated,
            "fields": list(self.fields),
            "note": self.note,
            "abstract_diff": [[op, words] for op, words in self.abstract],
            "before": dict(self.before),
            "after": dict(self.after),
        }


_NAMES = {"journal_ref": "journal reference", "withdrawn": "withdrawn"}


def change_note(version: int, fields: Sequence[str]) -> str:
    """How the feed names a change: "v3: abstract changed"; a withdrawal is said alone."""
    if "withdrawn" in fields:
        return f"v{version}: withdrawn"
    names = [_NAMES.get(f, f) for f in fields]
    if not names:
        return f"v{version}: new version"
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"v{version}: {listed} changed"


def _words(text: str) -> list[str]:
    return re.findall(r"\S+", text or "")


def word_diff(old: str, new: str) -> tuple[tuple[str, str], ...]:
    """The change from ``old`` to ``new`` word by word: ``(op, words)``, ops ``=``, ``-``, ``+``.

    >>> word_diff("we study cats", "we study small dogs")
    (('=', 'we study'), ('-', 'cats'), ('+', 'small dogs'))
    """
    a, b = _words(old), _words(new)
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", " ".join(b[j1:j2])))
    return tuple(out)


def _same(field: str, a: Any, b: Any) -> bool:
    if field in ("title", "abstract", "comments", "journal_ref"):
        return " ".join(str(a or "").split()) == " ".join(str(b or "").split())
    if field == "categories":
        return str(a or "").split() == str(b or "").split()
    return bool(a == b)


def changes_between(
    revisions: Sequence[Revision], *, with_diff: bool = True
) -> list[RevisionChange]:
    """Each stored version against the one before it (oldest first), where anything changed.

    ``with_diff`` False leaves ``abstract`` empty (the field is still named as
    changed): the feed only names a change, and the word diff of two unrelated
    abstracts costs a few milliseconds each; after a snapshot merge the feed
    asked for two hundred of them on every request and threw them away.
    """
    ordered = sorted(revisions, key=lambda r: r.version)
    found = []
    for old, new in itertools.pairwise(ordered):
        fields = tuple(f for f in TRACKED if not _same(f, getattr(old, f), getattr(new, f)))
        if not fields and new.version == old.version:
            continue
        before = tuple((f, str(getattr(old, f) or "")) for f in fields if f != "abstract")
        after = tuple((f, str(getattr(new, f) or "")) for f in fields if f != "abstract")
        diff = word_diff(old.abstract, new.abstract) if with_diff and "abstract" in fields else ()
        found.append(
            RevisionChange(new.version, old.version, new.seen_at, fields, diff, before, after)
        )
    return found
