"""Name matching and attribution: the hard cases."""

from __future__ import annotations

import pytest

from lightnews.link.attribution import (
    Candidate,
    given_name_score,
    parse_name,
    score_candidates,
)

SEPP = parse_name("Sepp Hochreiter")


@pytest.mark.parametrize(
    ("written", "low", "high"),
    [
        ("Sepp Hochreiter", 0.85, 1.0),
        ("S. Hochreiter", 0.6, 0.7),
        ("Hochreiter, S.", 0.6, 0.7),
        ("Hochreiter, Sepp", 0.85, 1.0),
        ("SEPP HOCHREITER", 0.85, 1.0),
        ("Stefan Hochreiter", 0.0, 0.0),
        ("T. Hochreiter", 0.0, 0.0),
        ("Hochreiter", 0.4, 0.5),
    ],
)
def test_given_names(written: str, low: float, high: float) -> None:
    assert low <= given_name_score(SEPP, parse_name(written)) <= high


@pytest.mark.parametrize(
    ("scholar", "written", "same"),
    [
        ("Jürgen Schmidhuber", "Jurgen Schmidhuber", True),
        ("Jürgen Schmidhuber", "J\u0308urgen Schmidhuber", True),  # decomposed umlaut
        ("Jean-Pierre Dupont", "J.-P. Dupont", True),
        ("Jean-Pierre Dupont", "Jean Pierre Dupont", True),
        ("Jean-Pierre Dupont", "Jean-Paul Dupont", False),
        ("Alexander Smola", "Alex Smola", True),
        ("Alexander J. Smola", "Alexander K. Smola", False),
        ("Laurens van der Maaten", "L. van der Maaten", True),
        ("Yee Whye Teh", "Y. W. Teh", True),
        ("Yee Whye Teh", "Y. Teh", True),
        ("Ilya Sutskever", "Ilia Sutskever", False),
    ],
)
def test_name_variants(scholar: str, written: str, same: bool) -> None:
    score = given_name_score(parse_name(scholar), parse_name(written))
    assert (score > 0) is same


def test_structured_names() -> None:
    parts = parse_name("ignored", keyname="Schölkopf", forenames="Bernhard")
    assert parts == parse_name("Bernhard Schölkopf")
    assert parse_name("Carlos de la Torre").surname == "de la torre"


def candidate(
    paper: int, name: str, coauthors: str = "", cats: str = "cs.LG", year: int = 2020
) -> Candidate:
    return Candidate(
        paper, 0, f"2001.{paper:05d}", parse_name(name), cats.split(), year, coauthors.split()
    )


def test_context_lifts_initials_and_sinks_strangers() -> None:
    candidates = [
        candidate(1, "Sepp Hochreiter", "klambauer unterthiner", "cs.LG stat.ML"),
        candidate(2, "Sepp Hochreiter", "klambauer", "cs.LG"),
        candidate(3, "Sepp Hochreiter", "brandstetter", "cs.LG"),
        candidate(4, "S. Hochreiter", "klambauer", "cs.LG"),  # co-author and subject
        candidate(5, "S. Hochreiter", "nobody", "nucl-th", 1975),  # other field, other era
        candidate(6, "Stefan Hochreiter", "klambauer", "cs.LG"),  # a different person
    ]
    scores = score_candidates([SEPP], candidates)
    by_paper = {p: v for (p, _), v in scores.items()}
    assert by_paper[1] >= 0.95 and by_paper[4] >= 0.85
    assert by_paper[5] < 0.5 and 6 not in by_paper


def test_decisions_override() -> None:
    candidates = [candidate(1, "Sepp Hochreiter"), candidate(2, "S. Hochreiter", cats="hep-th")]
    scores = score_candidates([SEPP], candidates, {"2001.00001": "reject", "2001.00002": "confirm"})
    assert scores == {(2, 0): 1.0}


def test_common_surnames_need_more_than_an_initial() -> None:
    wang = parse_name("Yizhou Wang")
    others = [
        candidate(10 + i, f"{first} Wang", cats="cs.CV")
        for i, first in enumerate(["Wei", "Jun", "Lei", "Xin", "Hao", "Yu"])
    ]
    lone_initial = candidate(1, "Y. Wang", cats="cs.CV")
    scores = score_candidates([wang], [*others, lone_initial])
    assert scores.get((1, 0), 0.0) < 0.6
    assert all(scores.get((c.paper_id, 0), 0.0) == 0.0 for c in others)
