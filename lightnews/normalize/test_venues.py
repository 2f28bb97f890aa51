"""Venues read from comments, journal-refs and DOIs (the labelled sample is in bench/)."""

from __future__ import annotations

import pytest

from lightnews.normalize.venues import (
    venue_from_comments,
    venue_from_doi,
    venue_from_journal_ref,
    venue_from_text,
    venue_of,
)


@pytest.mark.parametrize(
    ("comments", "label", "kind", "workshop", "note"),
    [
        ("Accepted at ICLR 2025", "ICLR 2025", "conference", False, ""),
        ("NeurIPS 2024 (spotlight)", "NeurIPS 2024 (spotlight)", "conference", False, "spotlight"),
        ("9 pages, 4 figures; to appear in J. Fluid Mech.", "J. Fluid Mech", "journal", False, ""),
        ("Camera-ready. Accepted to CVPR'24 as an oral", "CVPR 2024", "conference", False, ""),
        ("Accepted at the ICML 2024 Workshop on Foundation Models",
         "ICML 2024 Workshop on Foundation Models", "conference", True, ""),
        ("12 pages, accepted by Phys. Rev. Lett.", "Phys. Rev. Lett", "journal", False, ""),
        ("A&A accepted - figure 6 is online", "A&A", "journal", False, ""),
        ("Published in TMLR (2024)", "TMLR", "journal", False, ""),
    ],
)  # fmt: skip
def test_acceptance_in_comments(
    comments: str, label: str, kind: str, workshop: bool, note: str
) -> None:
    venue = venue_from_comments(comments)
    assert venue is not None
    assert (venue.label, venue.kind, venue.workshop, venue.note) == (label, kind, workshop, note)


@pytest.mark.parametrize(
    "comments",
    [
        "Submitted to NeurIPS 2024",
        "Under review at ICLR 2025",
        "Invited talk at the XXII Max Born Symposium, 2006",
        "37 pages, 15 figures; published version",
        "Final version, matching the published paper",
        "14 pages, 3 figures",
        "to be published by Springer",
    ],
)
def test_no_acceptance(comments: str) -> None:
    assert venue_from_comments(comments) is None


def test_journal_ref_and_order() -> None:
    venue = venue_from_journal_ref("J. Phys.: Condens. Matter 20 (2008) 055214")
    assert venue is not None and (venue.name, venue.year, venue.status) == (
        "J. Phys.: Condens. Matter", 2008, "published")  # fmt: skip
    # The publication reference wins over what the comments promised earlier.
    venue = venue_of("Phys.Rev.D76:013009,2007", "to appear in PRL")
    assert venue is not None and venue.name == "Phys.Rev.D" and venue.source == "journal-ref"


def test_proceedings_dois() -> None:
    found = [venue_from_doi(d) for d in ("10.18653/v1/2020.acl-main.1",
                                          "10.18653/v1/2021.findings-emnlp.3",
                                          "10.1109/CVPR.2016.90", "10.24963/ijcai.2020/12",
                                          "10.1103/PhysRevD.76.013009")]  # fmt: skip
    assert [v.label if v else None for v in found] == [
        "ACL 2020", "Findings of EMNLP 2021", "CVPR 2016", "IJCAI 2020", None]  # fmt: skip


def test_openreview_post() -> None:
    venue = venue_from_text("Our paper got accepted at ICLR 2025! openreview.net/forum?id=abc")
    assert venue is not None and venue.label == "ICLR 2025" and venue.source == "openreview"
