"""Changes between stored versions: named the same with or without the abstract's word diff."""

from __future__ import annotations

from lightnews.store.revisions import Revision, changes_between


def revision(
    version: int, abstract: str, title: str = "A title", withdrawn: bool = False
) -> Revision:
    return Revision(
        version,
        f"2025-11-0{version}T00:00:00Z",
        title,
        abstract,
        "A. Author",
        None,
        "cs.LG",
        None,
        withdrawn,
    )


def test_changes_without_the_diff_name_the_same_fields() -> None:
    history = [
        revision(1, "we study cats and dogs"),
        revision(2, "we study small dogs", title="A new title"),
        revision(3, "we study small dogs", title="A new title", withdrawn=True),
    ]
    full = changes_between(history)
    named = changes_between(history, with_diff=False)
    assert [c.note for c in full] == ["v2: title and abstract changed", "v3: withdrawn"]
    assert [c.note for c in named] == [c.note for c in full]
    assert [(c.fields, c.before, c.after) for c in full] == [
        (c.fields, c.before, c.after) for c in named
    ]
    # Only the word diff is left out.
    assert full[0].abstract == (("=", "we study"), ("-", "cats and"), ("+", "small"), ("=", "dogs"))
    assert named[0].abstract == ()
