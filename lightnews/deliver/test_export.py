"""BibTeX out: real arXiv records written by bibtexparser and read back by it, unchanged."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from bibtexparser.entrypoint import parse_string
from bibtexparser.middlewares import SeparateCoAuthors
from pylatexenc.latex2text import LatexNodes2Text

from lightnews.deliver.export import bibtex, tex_escape
from lightnews.model import Paper
from lightnews.sources.arxiv_abs import parse_abs
from lightnews.store.views import PaperAuthorship, PaperPage, VersionView


def page(paper: Paper, **changes: object) -> PaperPage:
    """The story page of a parsed paper, as the store would give it (no database needed)."""
    fields: dict[str, object] = dict(
        arxiv_id=paper.arxiv_id,
        stub=False,
        title=paper.title,
        authorships=tuple(PaperAuthorship(0, i, a.name) for i, a in enumerate(paper.authors)),
        abstract=paper.abstract,
        primary_category=paper.primary_category,
        categories=tuple(paper.categories),
        published=paper.published,
        updated=paper.updated,
        versions=tuple(VersionView(f"v{v.number}", v.date, v.size) for v in paper.versions),
        latest_version=paper.latest_version,
        doi=paper.doi,
        journal_ref=paper.journal_ref,
        comments=paper.comments,
        license=paper.license,
        withdrawn=paper.withdrawn,
        code=(),
        records=(),
        mentions=(),
    )
    fields.update(changes)
    return PaperPage(**fields)  # type: ignore[arg-type]


_DECODE = LatexNodes2Text(math_mode="verbatim")


def _plain(tex: str) -> str:
    """A BibTeX value read back as text (TeX decoded, the braces that protect it dropped)."""
    text = _DECODE.latex_to_text(tex)
    # pylatexenc reads \textasciicircum and \textasciitilde as the accents; TeX prints ^ and ~.
    text = text.replace("\u02c6", "^").replace("\u02dc", "~")
    return unicodedata.normalize("NFC", " ".join(text.split()))


def _same(name: str) -> str:
    """How TeX reads text arXiv gives (its metadata is TeX: ``--`` is an en dash there too)."""
    for tex, char in (("---", "—"), ("--", "–"), ("``", "“"), ("''", "”"), ('"', "”")):
        name = name.replace(tex, char)
    return unicodedata.normalize("NFC", " ".join(name.split()))


def _records(shared: Path) -> list[Paper]:
    papers = []
    for path in sorted((shared / "arxiv/abs").rglob("*.abs")):
        try:
            papers.append(parse_abs(path.read_text(encoding="utf-8", errors="replace")))
        except Exception:  # one record in the set is deliberately broken
            continue
    return papers


@pytest.mark.shared
def test_real_records_round_trip_with_authors_in_order(shared: Path) -> None:
    papers = [p for p in _records(shared) if p.authors]
    assert len(papers) >= 200
    special = [p for p in papers if any(not a.name.isascii() for a in p.authors)]
    assert len(special) >= 20, "the sample must include names with accents"
    text = bibtex(page(p) for p in papers)
    library = parse_string(text, append_middleware=[SeparateCoAuthors()])
    assert not library.failed_blocks
    assert len(library.entries) == len(papers)
    for paper, entry in zip(papers, library.entries, strict=True):
        assert entry["eprint"] == paper.arxiv_id
        assert entry["archivePrefix"] == "arXiv"
        names = [_plain(n) for n in entry["author"]]
        assert names == [_same(a.name) for a in paper.authors], paper.arxiv_id
        if "$" not in paper.title and "\\" not in paper.title:
            assert _plain(entry["title"]) == _same(paper.title), paper.arxiv_id


def test_tex_specials_are_escaped_and_math_kept() -> None:
    assert tex_escape("R&D: 50% of #1 a_b {x}") == (
        "R{\\&}D: 50{\\%} of {\\#}1 a{\\_}b {\\{}x{\\}}"
    )
    assert tex_escape("the $\\ell_1$ norm") == "the $\\ell_1$ norm"
    paper = Paper(
        "2401.00001",
        title="Ünïcode & 100% $x_1$",
        published="2024-01-02T00:00:00Z",
        categories=["cs.LG"],
    )
    names = ["Jörg Müller", "ATLAS Collaboration, and others", "Zoë O'Neil"]
    text = bibtex(
        [page(paper, authorships=tuple(PaperAuthorship(0, i, n) for i, n in enumerate(names)))]
    )
    assert text.startswith("@misc{muller2024unicode,")
    entry = parse_string(text, append_middleware=[SeparateCoAuthors()]).entries[0]
    assert [_plain(n) for n in entry["author"]] == names
    assert entry["title"] == '{{\\"U}n{\\"\\i}code {\\&} 100{\\%} $x_1$}'


def test_withdrawn_says_so() -> None:
    paper = Paper("2401.00002", title="Gone", published="2024-01-02T00:00:00Z", withdrawn=True)
    entry = parse_string(bibtex([page(paper)])).entries[0]
    assert "Withdrawn" in entry["note"]


def test_venue_makes_inproceedings_or_article_and_keeps_eprint() -> None:
    base = Paper(
        "2401.00003", title="Sparse Things", published="2024-01-02T00:00:00Z", categories=["cs.LG"]
    )
    accepted = page(base, comments="10 pages; accepted at ICLR 2025 (spotlight)")
    entry = parse_string(bibtex([accepted])).entries[0]
    assert entry.entry_type == "inproceedings" and entry["booktitle"] == "ICLR 2025"
    assert entry["year"] == "2025" and entry["eprint"] == "2401.00003"
    published = page(base, journal_ref="Phys.Rev.D76:013009,2007")
    entry = parse_string(bibtex([published])).entries[0]
    assert entry.entry_type == "article" and entry["journal"] == "Phys.Rev.D"
    assert entry["archivePrefix"] == "arXiv"
    entry = parse_string(bibtex([page(base, comments="submitted to NeurIPS 2024")])).entries[0]
    assert entry.entry_type == "misc" and "booktitle" not in entry.fields_dict
