"""arXiv OAI-PMH harvesting: ``ListRecords`` in the ``arXiv`` and ``arXivRaw`` formats.

The bulk path for a whole set (``cs``, ``math``, ``physics:hep-th``). Each
response holds a page of records and a resumption token; the token is saved
after every page, so an interrupted harvest resumes where it stopped. When a
harvest completes, the newest datestamp becomes the ``from`` of the next one
(datestamps are last-modified dates, so updated papers come back too).

``arXiv`` gives structured authors (keyname, forenames, suffix, affiliation);
``arXivRaw`` gives the submitter and the full version history with dates,
which nothing else gives. The source's address is the OAI set; the
``metadataPrefix`` param picks the format (default ``arXiv``).

OAI-PMH reports errors in the body with HTTP 200. ``noRecordsMatch`` means
"nothing new" and is a success; ``badResumptionToken`` (tokens expire daily)
drops the token so the next run restarts from the saved ``from`` date; the
others are errors recorded on the source.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

from lightnews.errors import ParseError
from lightnews.model import (
    Author,
    Batch,
    Item,
    Paper,
    Problem,
    RecordDetails,
    Request,
    SourceState,
    Version,
)
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.names import author_from_parts, split_author_list
from lightnews.normalize.tex import tex_to_unicode
from lightnews.normalize.text import clean_text, iso_utc
from lightnews.settings import Settings
from lightnews.sources import Source
from lightnews.sources.arxiv_api import paper_item
from lightnews.sources.arxiv_common import (
    ARXIV_HOSTS,
    is_withdrawn,
    rfc2822_utc,
    small_int,
    split_categories,
)
from lightnews.sources.xmlsafe import parse_xml

__all__ = ["ArxivOaiSource", "parse_oai"]

OAI = "http://www.openarchives.org/OAI/2.0/"
FORMATS = {
    "arXiv": "http://arxiv.org/OAI/arXiv/",
    "arXivRaw": "http://arxiv.org/OAI/arXivRaw/",
}


def _child(element: etree._Element, ns: str, name: str) -> str:
    found = element.find(f"{{{ns}}}{name}")
    return found.text or "" if found is not None and found.text else ""


def _common(meta: etree._Element, ns: str, arxiv_id: str) -> dict[str, Any]:
    comments = clean_text(_child(meta, ns, "comments")) or None
    return {
        "arxiv_id": arxiv_id,
        "title": tex_to_unicode(_child(meta, ns, "title")),
        "abstract": tex_to_unicode(_child(meta, ns, "abstract")),
        "categories": split_categories(_child(meta, ns, "categories")),
        "doi": clean_text(_child(meta, ns, "doi")) or None,
        "journal_ref": clean_text(_child(meta, ns, "journal-ref")) or None,
        "comments": comments,
        "license": clean_text(_child(meta, ns, "license")) or None,
        "withdrawn": is_withdrawn(comments),
    }


def _arxiv_format(meta: etree._Element, arxiv_id: str) -> Paper:
    ns = FORMATS["arXiv"]
    authors: list[Author] = []
    for node in meta.iter(f"{{{ns}}}author"):
        author = author_from_parts(
            _child(node, ns, "keyname"),
            _child(node, ns, "forenames") or None,
            _child(node, ns, "suffix") or None,
        )
        author.affiliations = [
            clean_text(a.text) for a in node.findall(f"{{{ns}}}affiliation") if a.text
        ]
        authors.append(author)
    created = iso_utc(_child(meta, ns, "created"))
    updated = iso_utc(_child(meta, ns, "updated")) or created
    return Paper(
        **_common(meta, ns, arxiv_id),
        authors=authors,
        published=created,
        updated=updated,
        versions=[Version(1, created)] if created else [],
    )


def _arxiv_raw_format(meta: etree._Element, arxiv_id: str) -> Paper:
    ns = FORMATS["arXivRaw"]
    versions = []
    for node in meta.findall(f"{{{ns}}}version"):
        number = small_int(node.get("version", "")[1:])
        if number is not None:
            versions.append(
                Version(
                    number,
                    rfc2822_utc(_child(node, ns, "date")),
                    clean_text(_child(node, ns, "size")) or None,
                )
            )
    dates = [v.date for v in sorted(versions, key=lambda v: v.number) if v.date]
    return Paper(
        **_common(meta, ns, arxiv_id),
        authors=split_author_list(_child(meta, ns, "authors")),
        submitter=clean_text(_child(meta, ns, "submitter")) or None,
        published=dates[0] if dates else None,
        updated=dates[-1] if dates else None,
        versions=versions,
    )


def _record_paper(record: etree._Element, arxiv_id: str) -> Paper | None:
    """The paper of one record, in whichever supported format it is (None: none of them)."""
    for prefix, ns in FORMATS.items():
        meta = record.find(f"{{{OAI}}}metadata/{{{ns}}}{prefix}")
        if meta is not None:
            return (_arxiv_format if prefix == "arXiv" else _arxiv_raw_format)(meta, arxiv_id)
    return None


def parse_oai(body: bytes) -> tuple[Batch, str | None, str | None, str | None]:
    """Parse one OAI-PMH response.

    Returns the batch, the resumption token (None at the end of the list), the
    newest datestamp seen, and the OAI error code if the response is an error
    that is not ``noRecordsMatch``.
    """
    root = parse_xml(body, "an OAI-PMH response")
    if root.tag != f"{{{OAI}}}OAI-PMH":
        raise ParseError(f"expected <OAI-PMH>, got <{etree.QName(root).localname}>")
    batch = Batch()
    error = root.find(f"{{{OAI}}}error")
    if error is not None:
        code = error.get("code", "unknown")
        if code == "noRecordsMatch":
            return batch, None, None, None
        message = clean_text(error.text) or "no message"
        batch.warnings.append(f"OAI-PMH error {code}: {message}")
        return batch, None, None, code
    newest: str | None = None
    for record in root.iter(f"{{{OAI}}}record"):
        header = record.find(f"{{{OAI}}}header")
        if header is None:
            batch.warnings.append("record without a header skipped")
            continue
        identifier = _child(header, OAI, "identifier").strip()
        datestamp = _child(header, OAI, "datestamp").strip()
        if datestamp and (newest is None or datestamp > newest):
            newest = datestamp
        parsed = parse_arxiv_id(identifier.removeprefix("oai:arXiv.org:"))
        if parsed is None:
            batch.warnings.append(f"record {identifier!r} has no arXiv id")
            continue
        if header.get("status") == "deleted":
            batch.deleted.append(parsed.base)
            continue
        try:
            paper = _record_paper(record, parsed.base)
        except Exception as error:  # one record must not stop the harvest
            batch.problems.append(
                Problem(f"record skipped: {type(error).__name__}: {error}", parsed.base)
            )
            continue
        if paper is None:
            batch.warnings.append(f"record {identifier} is in an unsupported metadata format")
            continue
        batch.papers.append(paper)
        item: Item = paper_item(paper, etree.tostring(record, encoding="unicode"))
        item.record = RecordDetails(datestamp)
        batch.items.append(item)
    token_node = root.find(f".//{{{OAI}}}resumptionToken")
    token = (token_node.text or "").strip() if token_node is not None else ""
    return batch, token or None, newest, None


class ArxivOaiSource(Source):
    """Bulk harvest of an arXiv OAI-PMH set, resumable page by page."""

    kind = "arxiv-oai"
    summary = "arXiv OAI-PMH harvest of a set (cs, math, physics:hep-th), arXiv or arXivRaw"

    @property
    def metadata_prefix(self) -> str:
        return str(self.params.get("metadataPrefix", "arXiv"))

    def first_request(self, state: SourceState) -> Request:
        url = str(self.params.get("url") or self.settings.arxiv_oai_url)
        if state.resumption_token:
            return Request(url, {"verb": "ListRecords", "resumptionToken": state.resumption_token})
        params: dict[str, str | int] = {
            "verb": "ListRecords",
            "metadataPrefix": self.metadata_prefix,
        }
        if self.address and self.address != "*":
            params["set"] = self.address
        if state.cursor:
            params["from"] = state.cursor
        return Request(url, params)

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        batch, token, newest, error = parse_oai(body)
        new_state = SourceState(
            state.etag, state.last_modified, state.cursor, token, dict(state.extra)
        )
        pending = max(new_state.extra.get("pending_cursor") or "", newest or "") or None
        if error == "badResumptionToken":
            # Expired token: forget it; the next run restarts from the saved date.
            new_state.resumption_token = None
            new_state.extra.pop("pending_cursor", None)
        elif error is not None:
            raise ParseError(batch.warnings[-1])
        else:
            # How many records the list holds (completeListSize) against how many arrived.
            size = re.search(rb'completeListSize="(\d{1,12})"', body[-4096:])
            harvested = int(new_state.extra.get("harvested") or 0)
            harvested += len(batch.papers) + len(batch.deleted)
            new_state.extra["harvested"] = harvested
            if size is not None:
                new_state.extra["list_size"] = int(size[1])
            if token:
                new_state.extra["pending_cursor"] = pending
                base = str(self.params.get("url") or self.settings.arxiv_oai_url)
                batch.next = Request(base, {"verb": "ListRecords", "resumptionToken": token})
            else:
                expected = int(new_state.extra.pop("list_size", 0) or 0)
                new_state.extra.pop("harvested", None)
                new_state.extra.pop("pending_cursor", None)
                if expected and harvested < expected:
                    # The range is harvested again next run: the "from" date stays.
                    message = (
                        f"incomplete: the OAI-PMH list of {self.address} holds {expected} "
                        f"records but {harvested} arrived; it is harvested again on the next "
                        "refresh"
                    )
                    new_state.extra["incomplete"] = message
                    batch.warnings.append(message)
                else:
                    new_state.extra.pop("incomplete", None)
                    if pending and pending > (state.cursor or ""):
                        new_state.cursor = pending
        batch.state = new_state
        return batch

    @classmethod
    def host_interval(cls, settings: Settings) -> dict[str, Any]:
        host = urlsplit(settings.arxiv_oai_url).hostname or "oaipmh.arxiv.org"
        return {h: settings.arxiv_interval for h in (*ARXIV_HOSTS, host)}
