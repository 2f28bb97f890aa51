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
        (
            "Accepted at the ICML 2024 Workshop on Foundation Models",
            "ICML 2024 Workshop on Foundation Models",
            "conference",
            True,
            "",
        ),
        ("12 pages, accepted by Phys. Rev. Lett.", "Phys. Rev. Lett", "journal", False, ""),
        ("A&A accepted - figure 6 is online", "A&A", "journal", False, ""),
        ("Published in TMLR (2024)", "TMLR", "journal", False, ""),
    ],
)
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
        "J. Phys.: Condens. Matter",
        2008,
        "published",
    )
    # The publication reference wins over what the comments promised earlier.
    venue = venue_of("Phys.Rev.D76:013009,2007", "to appear in PRL")
    assert venue is not None and venue.name == "Phys.Rev.D" and venue.source == "journal-ref"


def test_proceedings_dois() -> None:
    found = [
        venue_from_doi(d)
        for d in (
            "10.18653/v1/2020.acl-main.1",
            "10.18653/v1/2021.findings-emnlp.3",
            "10.1109/CVPR.2016.90",
            "10.24963/ijcai.2020/12",
            "10.1103/PhysRevD.76.013009",
        )
    ]
    assert [v.label if v else None for v in found] == [
        "ACL 2020",
        "Findings of EMNLP 2021",
        "CVPR 2016",
        "IJCAI 2020",
        None,
    ]


def test_openreview_post() -> None:
    venue = venue_from_text("Our paper got accepted at ICLR 2025! openreview.net/forum?id=abc")
    assert venue is not None and venue.label == "ICLR 2025" and venue.source == "openreview"


@pytest.mark.parametrize(
    ("comments", "name"),
    [
        # A list inside a name goes on past its commas.
        (
            "4 pages, to appear in Proceedings of the 2007 International Conference on Acoustics, "
            "Speech, and Signal Processing in Honolulu, HI",
            "Proceedings of the 2007 International Conference on Acoustics, Speech, and Signal "
            "Processing",
        ),
        (
            "To appear at the IEEE International Conference on Software Testing, Verification, and "
            "Validation (ICST 2022)",
            "IEEE International Conference on Software Testing, Verification, and Validation",
        ),
        # "Proc." goes on; a month with a day ends the name.
        (
            "To appear in the Proc. of the IEEE Conference on Software Testing (ICST) 2021",
            "Proc. of the IEEE Conference on Software Testing",
        ),
        (
            "In Proceedings of the 30th ACM SIGSOFT Symposium on Testing July 11 to 17, 2021",
            "Proceedings of the 30th ACM SIGSOFT Symposium on Testing",
        ),
        # A quoted title keeps its "in ...,".
        (
            "to appear in the proceedings of the conference `Traces in Geometry, Number Theory and "
            "Quantum Fields' held in MPI (Bonn), 2005.",
            "proceedings of the conference Traces in Geometry, Number Theory and Quantum Fields",
        ),
        # A track is its conference's; a venue standing alone is the venue.
        (
            "This paper is accepted on the Industry Track of the 18th IEEE International "
            "Conference on Software Testing (ICST 2025)",
            "18th IEEE International Conference on Software Testing",
        ),
        (
            "8 pages, First IEEE International Conference On Artificial Intelligence Testing",
            "First IEEE International Conference On Artificial Intelligence Testing",
        ),
        (
            "MET'24: 9th ACM International Workshop on Metamorphic Testing",
            "9th ACM International Workshop on Metamorphic Testing",
        ),
        (
            "Journal of Software: Testing, Verification and Reliability (2022)",
            "Journal of Software: Testing, Verification and Reliability",
        ),
        # ML phrasings: the Findings volume is not the main conference.
        ("Findings of EMNLP 2023", "Findings of EMNLP 2023"),
        ("Published as a conference paper at ICLR 2024", "ICLR 2024"),
        ("Accepted to ACL 2024 main conference. 9 pages", "ACL 2024"),
        (
            "Accepted at the Workshop on Efficient Systems at ICML 2023",
            "Workshop on Efficient Systems at ICML 2023",
        ),
    ],
)
def test_names_read_whole(comments: str, name: str) -> None:
    venue = venue_from_comments(comments)
    assert venue is not None and venue.name == name


@pytest.mark.parametrize(
    "comments",
    [
        "44 pages, editors for the proceedings: Yanling Chen and A. J. Han Vinck",
        "Extended version of our ICLR 2024 paper",
        "Full version of the conference paper appearing in proceedings of the 47th Allerton "
        "Conference on Communication, Control, and Computing, 2009",
        "UCSC-NASA Ames Research Center Workshop on Stellar and Planets Formation March 29, 2007",
        "Software Testing, Petri Net, UML, High Level Petri Nets, Test Cases",
        "Conference was held in Kobe, JAPAN 29th of May to 2nd of June 2005",
    ],
)
def test_no_venue_of_another_version_or_a_meeting(comments: str) -> None:
    assert venue_from_comments(comments) is None


@pytest.mark.parametrize(
    ("journal_ref", "name"),
    [
        ("JHEP0707:002,2007", "JHEP"),
        (
            "2023 IEEE International Conference on Software Testing, Verification and Validation "
            "Workshops (ICSTW)",
            "2023 IEEE International Conference on Software Testing, Verification and Validation "
            "Workshops",
        ),
        (
            "Proceedings of 34th Symposium on Transformation Groups, Edited by T. Kawakami, "
            "Wing Co., Ltd., 2007 (p.31 - 55).",
            "Proceedings of 34th Symposium on Transformation Groups",
        ),
    ],
)
def test_journal_ref_names(journal_ref: str, name: str) -> None:
    venue = venue_from_journal_ref(journal_ref)
    assert venue is not None and venue.name == name
