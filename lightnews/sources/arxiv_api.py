"""arXiv query API (Atom): papers by category, author, any query, or id list.

``GET export.arxiv.org/api/query?search_query=...&start=&max_results=`` returns
an Atom feed with OpenSearch paging counts. arXiv asks for one request every
three seconds and slices of at most 2,000; a query cannot page past 30,000.
Errors come back as a feed whose one entry is titled ``Error``.

The source's address is the ``search_query`` (``cat:cs.LG``, ``au:"Sepp
Hochreiter"``) or ``id:ID,ID,...`` for an id list. A refresh reads newest
first and stops at the newest paper it saw last time (the cursor), at
``arxiv_max_results``, or at the end of the results.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

from lightnews.errors import ParseError
from lightnews.model import Author, Batch, Item, Paper, Request, SourceState, Version
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.tex import tex_to_unicode
from lightnews.normalize.text import clean_text, iso_utc
from lightnews.settings import Settings
from lightnews.sources import Source, SourceTraits
from lightnews.sources.arxiv_common import (
    ARXIV_HOSTS,
    announcement_day,
    batch_fingerprint,
    is_withdrawn,
    small_int,
    split_categories,
)
from lightnews.sources.xmlsafe import parse_xml

__all__ = ["ArxivApiSource", "parse_api_entry", "parse_api_feed"]

NS = {
    "a": "http://www.w3.org/2005/Atom",
    "os": "http://a9.com/-/spec/opensearch/1.1/",
    "arxiv": "http://arxiv.org/schemas/atom",
}
MAX_SLICE = 2000
MAX_RESULTS = 30000


def _text(element: etree._Element, path: str) -> str:
    found = element.find(path, NS)
    return found.text or "" if found is not None and found.text else ""


def parse_api_entry(entry: etree._Element) -> Paper:
    """One Atom ``<entry>`` of the arXiv API as a paper (raises ParseError if it has no id)."""
    raw_id = _text(entry, "a:id").strip()
    parsed = parse_arxiv_id(raw_id.rsplit("/abs/", 1)[-1])
    if parsed is None:
        raise ParseError(f"entry id {raw_id!r} is not an arXiv abstract URL")
    published = iso_utc(_text(entry, "a:published"))
    updated = iso_utc(_text(entry, "a:updated"))
    authors = [
        Author(
            name=tex_to_unicode(_text(author, "a:name")),
            affiliations=[
                clean_text(a.text) for a in author.findall("arxiv:affiliation", NS) if a.text
            ],
        )
        for author in entry.findall("a:author", NS)
    ]
    primary = entry.find("arxiv:primary_category", NS)
    categories = split_categories(
        " ".join(c.get("term", "") for c in entry.findall("a:category", NS)),
        primary.get("term") if primary is not None else None,
    )
    versions = [Version(1, published)]
    if parsed.version and parsed.version > 1:
        versions.append(Version(parsed.version, updated))
    doi = _text(entry, "arxiv:doi").strip() or None
    if doi is None:
        for link in entry.findall("a:link", NS):
            if link.get("title") == "doi":
                doi = link.get("href", "").split("doi.org/")[-1] or None
    comments = clean_text(_text(entry, "arxiv:comment")) or None
    return Paper(
        arxiv_id=parsed.base,
        title=tex_to_unicode(_text(entry, "a:title")),
        abstract=tex_to_unicode(_text(entry, "a:summary")),
        authors=[a for a in authors if a.name],
        categories=[c for c in categories if c],
        published=published,
        updated=updated,
        versions=versions,
        doi=doi,
        journal_ref=clean_text(_text(entry, "arxiv:journal_ref")) or None,
        comments=comments,
        withdrawn=is_withdrawn(comments),
    )


def paper_item(paper: Paper, payload: str) -> Item:
    """The item recording that a source listed ``paper`` (kept with its original bytes)."""
    names = [a.name for a in paper.authors]
    return Item(
        key=paper.arxiv_id,
        kind="paper",
        title=paper.title,
        url=f"https://arxiv.org/abs/{paper.arxiv_id}",
        author=", ".join(names[:3]) + (" et al." if len(names) > 3 else ""),
        text=paper.abstract,
        published=paper.published,
        updated=paper.updated,
        links=[f"https://arxiv.org/abs/{paper.arxiv_id}"],
        tags=paper.categories,
        payload=payload,
        paper_id=paper.arxiv_id,
    )


def parse_api_feed(body: bytes) -> tuple[list[Paper], list[Item], dict[str, int], list[str]]:
    """Papers, items, OpenSearch counts and warnings of one API response."""
    root = parse_xml(body, "an arXiv API Atom feed")
    if root.tag != f"{{{NS['a']}}}feed":
        raise ParseError(f"expected an Atom <feed>, got <{etree.QName(root).localname}>")
    counts = {}
    for name in ("totalResults", "startIndex", "itemsPerPage"):
        value = _text(root, f"os:{name}").strip()
        counts[name] = small_int(value) or 0
    entries = root.findall("a:entry", NS)
    if len(entries) == 1 and _text(entries[0], "a:title").strip() == "Error":
        message = clean_text(_text(entries[0], "a:summary")) or "unspecified error"
        raise ParseError(f"arXiv API error: {message}")
    papers: list[Paper] = []
    items: list[Item] = []
    warnings: list[str] = []
    for entry in entries:
        try:
            paper = parse_api_entry(entry)
        except ParseError as error:
            warnings.append(str(error))
            continue
        except Exception as error:  # a programmer's error on one entry must not lose the page
            warnings.append(f"entry {_text(entry, 'a:id').strip()[:80]!r} skipped: {error!r}")
            continue
        papers.append(paper)
        items.append(paper_item(paper, etree.tostring(entry, encoding="unicode")))
    return papers, items, counts, warnings


class ArxivApiSource(Source):
    """Papers from an arXiv API query, newest first, paged politely."""

    kind = "arxiv-api"
    traits = SourceTraits(topic_prefix="cat:", filter_label="arXiv", filter_order=5)
    summary = "arXiv API query: a category (cat:cs.LG), an author (au:...) or id:ID,ID"

    def _query_params(self) -> dict[str, str | int]:
        if self.address.startswith("id:"):
            return {"id_list": self.address[3:], "max_results": MAX_SLICE}
        return {
            "search_query": self.address,
            "sortBy": "submittedDate",
            "sortOrder": "descending",
            "max_results": min(self.settings.arxiv_page_size, MAX_SLICE),
        }

    def _limit(self) -> int:
        return min(
            int(self.params.get("max_results", self.settings.arxiv_max_results)), MAX_RESULTS
        )

    def first_request(self, state: SourceState) -> Request:
        params = self._query_params()
        params["start"] = 0
        return Request(self.settings.arxiv_api_url, params)

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        papers, items, counts, warnings = parse_api_feed(body)
        new_state = SourceState(
            state.etag, state.last_modified, state.cursor, None, dict(state.extra)
        )
        newest = max((p.published or "" for p in papers), default="")
        pending = max(new_state.extra.get("pending_cursor") or "", newest) or None
        start = counts["startIndex"]
        following = start + len(papers)
        reached_known = bool(state.cursor) and any(
            (p.published or "") <= (state.cursor or "") for p in papers
        )
        more = (
            bool(papers)
            and not self.address.startswith("id:")
            and following < counts["totalResults"]
            and following < self._limit()
            and not reached_known
        )
        next_request = None
        incomplete = self._incomplete(body, state, new_state, papers, counts, reached_known)
        if incomplete:
            # What is missing is read again next run: the cursor stays where it was.
            warnings.append(incomplete)
            new_state.extra["incomplete"] = incomplete
            new_state.extra.pop("pending_cursor", None)
        elif more:
            params = self._query_params()
            params["start"] = following
            next_request = Request(self.settings.arxiv_api_url, params)
            new_state.extra["pending_cursor"] = pending
        else:
            new_state.extra.pop("pending_cursor", None)
            new_state.extra.pop("incomplete", None)
            if pending and pending > (state.cursor or ""):
                new_state.cursor = pending
        return Batch(
            items=items, papers=papers, next=next_request, state=new_state, warnings=warnings
        )

    def _incomplete(
        self,
        body: bytes,
        state: SourceState,
        new_state: SourceState,
        papers: list[Paper],
        counts: dict[str, int],
        reached_known: bool,
    ) -> str | None:
        """Why this listing cannot be trusted to be whole, or None.

        Two ways arXiv loses papers silently: a page comes back short (or
        empty) before the total it reported, and a category listing serves
        the previous day's batch again on an announcement day. Each source
        remembers the first page's ids and day (``batch_day``, ``batch_ids``).
        """
        if self.address.startswith(("id:", "file://", "demo:")):
            return None  # an id list, or one saved page replayed: not a whole listing
        start, total = counts["startIndex"], counts["totalResults"]
        expected = min(total, self._limit())
        requested = int(self._query_params()["max_results"])
        following = start + len(papers)
        if not reached_known and len(papers) < requested and following < expected:
            return (
                f"incomplete: arXiv reported {total} results for {self.address} but its listing "
                f"stopped after {following}; results {following + 1}-{expected} are read again "
                "on the next refresh"
            )
        found = re.search(rb"<updated>(\d{4}-\d\d-\d\d)", body[:4096])
        if start != 0 or found is None or not papers:
            return None
        day, fingerprint = found[1].decode(), batch_fingerprint(p.arxiv_id for p in papers)
        before_day = state.extra.get("batch_day")
        before = state.extra.get("batch_ids")
        if isinstance(before_day, str) and day > before_day:
            new_state.extra["batch_day"], new_state.extra["batch_ids"] = day, fingerprint
            if fingerprint == before and announcement_day(day):
                return (
                    f"incomplete: arXiv served {self.address} on {day} exactly as on "
                    f"{before_day} (a stale listing); it is read again on the next refresh"
                )
        elif not isinstance(before_day, str):
            new_state.extra["batch_day"], new_state.extra["batch_ids"] = day, fingerprint
        return None

    def describe_error(self, body: bytes) -> str | None:
        try:
            parse_api_feed(body)
        except ParseError as error:
            return str(error) if str(error).startswith("arXiv API error") else None
        return None

    @classmethod
    def host_interval(cls, settings: Settings) -> dict[str, Any]:
        host = urlsplit(settings.arxiv_api_url).hostname or "export.arxiv.org"
        return {h: settings.arxiv_interval for h in (*ARXIV_HOSTS, host)}
