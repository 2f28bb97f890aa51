"""arXiv ``.abs`` metadata files, arXiv's own internal record format.

A ``.abs`` file is what arxiv.org's abstract pages are built from: a header
(``arXiv:ID``, ``From:``, one ``Date:`` line per version), ``Key: value``
fields (``Title``, ``Authors``, ``Categories``, ``Comments``, ``Journal-ref``,
``DOI``, ``License``...) with continuation lines, and the abstract between
``\\\\`` separators. Replay kind ``arxiv-abs``; also useful to load mirrors.
"""

from __future__ import annotations

import re

from lightnews.errors import ParseError
from lightnews.model import Batch, Paper, Problem, SourceState, Version
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.names import split_author_list
from lightnews.normalize.tex import tex_to_unicode
from lightnews.sources import Source
from lightnews.sources.arxiv_api import paper_item
from lightnews.sources.arxiv_common import is_withdrawn, rfc2822_utc, small_int, split_categories

__all__ = ["ArxivAbsSource", "parse_abs"]

_ID_RE = re.compile(r"^(?:arXiv|Paper):(\S+)", re.M)
_DATE_RE = re.compile(r"^Date(?: \(revised (v\d+)\))?:\s*(.+?)(?:\s+\((\S+)\))?\s*$", re.M)
_FIELD_RE = re.compile(r"^([A-Z][\w-]*):\s?(.*)$")


def parse_abs(text: str, problems: list[Problem] | None = None) -> Paper:
    """One ``.abs`` record as a paper; fields it had to drop are noted in ``problems``."""
    problems = [] if problems is None else problems
    sections = text.split("\\\\")
    if len(sections) < 3:
        raise ParseError("not an arXiv .abs record (missing \\\\ separators)")
    header, abstract = sections[1], sections[2]
    found = _ID_RE.search(header)
    parsed = parse_arxiv_id(found[1]) if found else None
    if parsed is None:
        raise ParseError("no arXiv id in .abs header")
    versions: list[Version] = []
    for match in _DATE_RE.finditer(header):
        number = small_int(match[1][1:]) if match[1] else 1
        if number is None:
            problems.append(
                Problem(
                    f"version {match[1][:20]!r}… is not a number; dropped", parsed.base, "versions"
                )
            )
            continue
        versions.append(Version(number, rfc2822_utc(match[2]), match[3]))
    fields: dict[str, str] = {}
    current = None
    for line in header.splitlines():
        field_match = _FIELD_RE.match(line)
        if field_match and not line.startswith(("Date", "From")):
            current = field_match[1].lower()
            fields[current] = field_match[2]
        elif line.startswith((" ", "\t")) and current:
            fields[current] += " " + line.strip()
        else:
            current = None
    comments = " ".join(fields.get("comments", "").split()) or None
    dates = [v.date for v in versions if v.date]
    return Paper(
        arxiv_id=parsed.base,
        title=tex_to_unicode(fields.get("title", "")),
        abstract=tex_to_unicode(abstract),
        authors=split_author_list(fields.get("authors", "")),
        # Early records have no Categories line: their archive is the category.
        categories=split_categories(fields.get("categories"))
        or ([parsed.base.split("/")[0]] if parsed.old_style else []),
        published=dates[0] if dates else None,
        updated=dates[-1] if dates else None,
        versions=versions,
        doi=" ".join(fields.get("doi", "").split()) or None,
        journal_ref=" ".join(fields.get("journal-ref", "").split()) or None,
        comments=comments,
        license=fields.get("license", "").strip() or None,
        withdrawn=is_withdrawn(comments),
    )


class ArxivAbsSource(Source):
    """A saved ``.abs`` record (replay only: arXiv serves these to mirrors, not to us)."""

    kind = "arxiv-abs"
    summary = "an arXiv .abs metadata record (replay from a file)"
    fetchable = False

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        text = body.decode("utf-8", errors="replace")
        batch = Batch(state=state)
        paper = parse_abs(text, batch.problems)
        batch.papers.append(paper)
        batch.items.append(paper_item(paper, text))
        if len(text.split("\\\\")) < 4:
            # No closing \\ after the abstract: the record may be cut short, so it
            # never replaces a stored copy (see lightnews.store.downgrade).
            batch.well_formed = False
            batch.warnings.append(
                f"{paper.arxiv_id}: the record ends before its closing \\\\ (cut short?)"
            )
        return batch
