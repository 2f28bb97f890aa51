"""Finding a scholar by what a person remembers: part of a name, a surname, a handle, an ORCID."""

from __future__ import annotations

import pytest

from lightnews.errors import Ambiguous, NotFound, UsageError
from lightnews.store import LOCAL_READER, Store

NOW = "2025-11-28T00:00:00Z"


@pytest.fixture
def people(store: Store) -> dict[str, int]:
    found = {}
    for name, handle, orcid in (
        ("Mara Lindqvist", "maralindqvist.bsky.social", "0000-0002-1825-0097"),
        ("Tobias Achterberg-Reyes", None, None),
        ("Mara Olsen", None, None),
        ("Tamara Ivanova", "tamara.bsky.social", None),
        ("Jürgen Schmidhuber", None, None),
    ):
        scholar = store.create_scholar(name, NOW)
        store.add_identity(scholar, "arxiv-name", name)
        if handle:
            store.add_identity(scholar, "bluesky-handle", handle)
        if orcid:
            store.add_identity(scholar, "orcid", orcid)
        found[name] = scholar
    store.set_followed(LOCAL_READER, found["Mara Lindqvist"], True, "2025-01-01T00:00:00Z")
    return found


@pytest.mark.parametrize(
    ("asked", "who"),
    [
        ("Lindqvist", "Mara Lindqvist"),
        ("lindq", "Mara Lindqvist"),
        ("mara l", "Mara Lindqvist"),
        ("M. Lindqvist", "Mara Lindqvist"),
        ("@maralindqvist.bsky.social", "Mara Lindqvist"),
        ("maralind", "Mara Lindqvist"),
        ("0000-0002-1825-0097", "Mara Lindqvist"),
        ("https://orcid.org/0000000218250097", "Mara Lindqvist"),
        ("achterberg", "Tobias Achterberg-Reyes"),
        ("Reyes", "Tobias Achterberg-Reyes"),
        ("tobias achterberg-reyes", "Tobias Achterberg-Reyes"),
        ("schmidhuber", "Jürgen Schmidhuber"),
        ("jurgen", "Jürgen Schmidhuber"),
        ("Tamara", "Tamara Ivanova"),
    ],
)
def test_one_scholar_by_part_of_what_names_them(
    store: Store, people: dict[str, int], asked: str, who: str
) -> None:
    assert store.find_scholar(asked) == people[who]


def test_an_id_and_a_whole_name_win_over_parts(store: Store, people: dict[str, int]) -> None:
    assert store.find_scholar(str(people["Mara Olsen"])) == people["Mara Olsen"]
    assert store.find_scholar("Mara Olsen") == people["Mara Olsen"]


def test_several_matches_are_listed_followed_first(store: Store, people: dict[str, int]) -> None:
    with pytest.raises(Ambiguous) as caught:
        store.find_scholar("mara")
    keys = [key for key, _ in caught.value.choices]
    assert keys == [str(people["Mara Lindqvist"]), str(people["Mara Olsen"])]  # not Tamara
    labels = [label for _, label in caught.value.choices]
    assert labels[0] == "Mara Lindqvist (@maralindqvist.bsky.social)"
    message = str(caught.value)
    assert "2 scholars match 'mara'" in message and "Give the id" in message
    assert isinstance(caught.value, UsageError)  # exit status 2 on the command line


def test_nobody(store: Store, people: dict[str, int]) -> None:
    with pytest.raises(NotFound, match="no scholar matches 'Hinton'"):
        store.find_scholar("Hinton")
    with pytest.raises(UsageError, match="give a scholar"):
        store.find_scholar("   ")
