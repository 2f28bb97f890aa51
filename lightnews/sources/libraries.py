"""Sources: a reader's own reference library, read for the papers it holds.

A new reader's feed knows nothing of them. Most researchers already keep a
library (Zotero, Mendeley, Paperpile, JabRef, a ``.bib`` beside their papers),
and every one of those exports BibTeX or CSL JSON. Read here, its arXiv
entries and DOIs become the reader's saves, which is where the learned ranker
(:mod:`lightnews.rank.learn`) starts from.

An entry names an arXiv paper by its ``eprint`` (with ``archivePrefix =
arXiv``), an arXiv address or DOI (``10.48550/arXiv.…``) in ``url``/``doi``/
``note``/``journal`` ("arXiv preprint arXiv:2401.00001"), or CSL's ``number``
and ``URL``; any other DOI is kept for a lookup in the library. Like every
source, this module only parses: it never touches the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from lightnews.errors import ParseError, UsageError
from lightnews.normalize.arxiv_ids import parse_arxiv_id, parse_arxiv_reference

__all__ = ["LibraryEntry", "parse_library", "read_library"]

#: A library bigger than this is not one person's (and would take long to look up).
MAX_ENTRIES = 50_000
#: A library file larger than this is not one person's either.
MAX_LIBRARY_BYTES = 50 * 1024 * 1024
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}]+)", re.I)
_ARXIV_WORDS = re.compile(r"arxiv[:\s/.]*(?:abs/)?([a-z.-]*/?\d{4}\.?\d{3,5}(?:v\d+)?)", re.I)


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    """One entry of a reference library: its key, title, and what names its paper."""

    key: str
    title: str
    arxiv_id: str | None
    doi: str | None


def parse_library(data: bytes) -> list[LibraryEntry]:
    """The entries of a BibTeX or CSL JSON export (told apart by their first character)."""
    text = data.decode("utf-8-sig", errors="replace").lstrip()
    if not text:
        raise ParseError("the file is empty: export your library as BibTeX or CSL JSON")
    entries = _csl(text) if text[0] in "[{" else _bibtex(text)
    if len(entries) > MAX_ENTRIES:
        raise ParseError(f"{len(entries):,} entries: more than {MAX_ENTRIES:,} in one library")
    return entries


def read_library(path: Path) -> list[LibraryEntry]:
    """The entries of a reader's library file (``lightnews import library``); a file too large
    or unreadable is a usage error: the reader's file, not a failed fetch."""
    if path.stat().st_size > MAX_LIBRARY_BYTES:
        raise UsageError(f"{path} is over 50 MB: not one person's library")
    try:
        return parse_library(path.read_bytes())
    except ParseError as error:
        raise UsageError(str(error)) from None


def _arxiv(*fields: str) -> str | None:
    for value in fields:
        value = value.strip()
        if not value:
            continue
        found = parse_arxiv_reference(value)
        if found is None:
            words = _ARXIV_WORDS.search(value)
            found = parse_arxiv_id(words[1]) if words else None
        if found is not None:
            return found.base
    return None


def _doi(value: str) -> str | None:
    found = _DOI.search(value or "")
    return found[1].rstrip(".,;").lower() if found else None


def _entry(key: str, title: str, arxiv: str | None, doi: str | None) -> LibraryEntry:
    if arxiv is None and doi and doi.startswith("10.48550/arxiv."):
        arxiv = _arxiv(doi)
    return LibraryEntry(
        key,
        " ".join(title.replace("{", "").replace("}", "").split())[:500],
        arxiv,
        None if arxiv else doi,
    )


def _bibtex(text: str) -> list[LibraryEntry]:
    from bibtexparser.entrypoint import parse_string

    library = parse_string(text)
    if not library.entries:
        raise ParseError("this is neither BibTeX nor CSL JSON (no entry could be read)")
    found = []
    for entry in library.entries:
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        prefix = fields.get("archiveprefix", fields.get("eprinttype", "")).lower()
        eprint = fields.get("eprint", "") if prefix in ("", "arxiv") else ""
        arxiv = _arxiv(
            eprint,
            fields.get("url", ""),
            fields.get("doi", ""),
            fields.get("journal", ""),
            fields.get("note", ""),
            fields.get("howpublished", ""),
        )
        found.append(_entry(entry.key, fields.get("title", ""), arxiv, _doi(fields.get("doi", ""))))
    return found


def _csl(text: str) -> list[LibraryEntry]:
    try:
        document: Any = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise ParseError(f"this is not CSL JSON: {error}") from None
    items = document.get("items", [document]) if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise ParseError("CSL JSON is a list of items")
    found = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            continue

        def field(name: str, item: dict[str, Any] = item) -> str:
            value = item.get(name)
            return value if isinstance(value, str) else ""

        arxiv = _arxiv(
            field("number"), field("URL"), field("DOI"), field("note"), field("container-title")
        )
        key = field("id") or field("citation-key") or f"item {n + 1}"
        found.append(_entry(key, field("title"), arxiv, _doi(field("DOI"))))
    return found
