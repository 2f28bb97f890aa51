"""Store: papers and items as the pages, the feed and the command line read them.

Written once for both backends, against :class:`~lightnews.store.connection.Queries`:
a paper's page with everything known of it, the feed's candidates and the
cheap marks that tell when its window changed, items with the papers they
name, and the few lookups linking asks for. Reads return the frozen
dataclasses of :mod:`lightnews.store.views`; hot ones (the feed reads some
1,200 rows a request) read rows by position.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from lightnews.errors import NotFound, UsageError
from lightnews.model import read_extra
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.store.connection import Queries
from lightnews.store.revisions import Revision, changes_between
from lightnews.store.views import (
    CardPaper,
    CodeLink,
    FeedCandidate,
    ItemView,
    NamedPaper,
    PaperAuthorship,
    PaperChange,
    PaperMention,
    PaperPage,
    PaperRecord,
    PaperSummary,
    VersionView,
)

__all__ = ["ReadQueries"]

#: A paper's columns as :meth:`ReadQueries._summary` reads them, in its order.
_SUMMARY = (
    "arxiv_id, title, authors, primary_category, published, updated, latest_version, "
    "journal_ref, comments, doi, withdrawn"
)


class ReadQueries(Queries):
    """Papers, items and the feed's candidates, read."""

    # -- reads ---------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        tables = ("papers", "items", "mentions", "sources", "scholars", "authorships")
        counts = {t: self.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        counts["stubs"] = self.db.execute(
            "SELECT count(*) FROM papers WHERE content_hash IS NULL"
        ).fetchone()[0]
        return counts

    def get_paper(self, arxiv_id: str) -> PaperPage:
        """A paper with its authors, versions, links, records and mentions."""
        parsed = parse_arxiv_id(arxiv_id)
        if parsed is None:
            raise UsageError(f"{arxiv_id!r} is not an arXiv identifier")
        row = self.db.execute("SELECT * FROM papers WHERE arxiv_id = ?", (parsed.base,)).fetchone()
        if row is None:
            raise NotFound(f"paper {parsed.base} is not stored")
        authors = tuple(
            PaperAuthorship(**r)
            for r in self.db.execute(
                "SELECT paper_id, position, name, keyname, forenames, affiliations, scholar_id, "
                "confidence "
                "FROM authorships WHERE paper_id = ? ORDER BY position",
                (row["id"],),
            )
        )
        code_links = tuple(
            CodeLink(r[0], r[1], r[2])
            for r in self.db.execute(
                "SELECT url, first_seen, item_id FROM paper_links WHERE paper_id = ? "
                "AND kind = 'code' ORDER BY COALESCE(first_seen, ''), url",
                (row["id"],),
            )
        )
        code = tuple(sorted(c.url for c in code_links))
        mentions = tuple(
            PaperMention(**{**r, "engagement": orjson.loads(r["engagement"] or "{}")})
            for r in self.db.execute(
                "SELECT i.id AS item_id, i.kind, s.kind AS source_kind, "
                "COALESCE(s.title, s.address) AS source, i.url, i.author, i.account, "
                "(SELECT sc.name FROM identities d JOIN scholars sc ON sc.id = d.scholar_id "
                " WHERE d.kind LIKE '%-did' AND d.value = i.account "
                " UNION SELECT sc.name FROM scholars sc WHERE sc.id = s.scholar_id LIMIT 1) "
                "AS scholar, i.title, i.published, substr(i.text, 1, 500) AS text, "
                "m.method, m.confidence, m.evidence, COALESCE(i.thread_root, i.key) AS thread, "
                "i.engagement FROM mentions m "
                "JOIN items i ON i.id = m.item_id JOIN sources s ON s.id = i.source_id "
                "WHERE m.paper_id = ? ORDER BY i.published DESC",
                (row["id"],),
            )
        )
        records = tuple(
            PaperRecord(**{**r, "engagement": orjson.loads(r["engagement"] or "{}")})
            for r in self.db.execute(
                "SELECT s.kind AS source_kind, COALESCE(s.title, s.address) AS source, i.url, "
                "i.first_seen, i.id AS item_id, i.engagement "
                "FROM items i JOIN sources s ON s.id = i.source_id "
                "WHERE i.paper_id = ? ORDER BY i.first_seen",
                (row["id"],),
            )
        )
        revisions = tuple(
            Revision.from_row(r)
            for r in self.db.execute(
                "SELECT * FROM paper_revisions WHERE paper_id = ? ORDER BY version", (row["id"],)
            )
        )
        return PaperPage(
            arxiv_id=parsed.base,
            stub=row["content_hash"] is None,
            title=row["title"],
            authorships=authors,
            abstract=row["abstract"],
            primary_category=row["primary_category"],
            categories=tuple(row["categories"].split()),
            published=row["published"],
            updated=row["updated"],
            versions=tuple(VersionView(f"v{n}", d, s) for n, d, s in orjson.loads(row["versions"])),
            latest_version=row["latest_version"],
            doi=row["doi"],
            journal_ref=row["journal_ref"],
            comments=row["comments"],
            license=row["license"],
            withdrawn=bool(row["withdrawn"]),
            code=code,
            records=records,
            mentions=mentions,
            revisions=revisions,
            code_links=code_links,
        )

    def papers_by_doi(self, dois: Sequence[str]) -> dict[str, str]:
        """arXiv ids of stored papers by DOI (a paper's DOI field may list several)."""
        found: dict[str, str] = {}
        for doi in dois:
            row = self.db.execute(
                "SELECT arxiv_id FROM papers WHERE lower(doi) = ? OR lower(doi) LIKE ? "
                "OR lower(doi) LIKE ? LIMIT 1",
                (doi, f"{doi} %", f"% {doi}"),
            ).fetchone()
            if row:
                found[doi] = row[0]
        return found

    def stub_ids(self, limit: int, max_lookups: int = 5) -> list[str]:
        """Papers known only by their id, least asked for first."""
        rows = self.db.execute(
            "SELECT arxiv_id FROM papers WHERE content_hash IS NULL AND lookups < ? "
            "ORDER BY lookups, id LIMIT ?",
            (max_lookups, limit),
        )
        return [r[0] for r in rows]

    def count_lookups(self, arxiv_ids: Sequence[str]) -> None:
        with self.transaction():
            self.db.executemany(
                "UPDATE papers SET lookups = lookups + 1 WHERE arxiv_id = ?",
                [(a,) for a in arxiv_ids],
            )

    def recent_papers(self, limit: int, before: str | None = None) -> list[PaperSummary]:
        older = "AND published < ? " if before is not None else ""
        rows = self.db.execute(
            f"SELECT {_SUMMARY} FROM papers WHERE content_hash IS NOT NULL "
            f"AND published IS NOT NULL {older}ORDER BY published DESC LIMIT ?",
            (before, limit) if before is not None else (limit,),
        )
        return [self._summary(r) for r in rows]

    def category_papers(
        self, categories: Sequence[str], since: str, limit: int
    ) -> list[tuple[int, str, str]]:
        """Papers whose primary category is one of ``categories``, published since
        ``since``, newest first, as ``(row id, arXiv id, published)``: the pool each
        reader's slice of new papers in followed categories is chosen from."""
        if not categories:
            return []
        rows = self.db.execute(
            "SELECT id, arxiv_id, published FROM papers WHERE content_hash IS NOT NULL "
            f"AND published >= ? AND {self.sql.in_list('primary_category')} "
            "ORDER BY published DESC LIMIT ?",
            (since, self.sql.list_param(sorted(categories)), limit),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    @staticmethod
    def _summary(r: Any) -> PaperSummary:
        """A paper from the columns of :data:`_SUMMARY`, in that order (read by position:
        the feed reads some 1,200 a request)."""
        return PaperSummary(
            arxiv_id=r[0],
            title=r[1],
            authors=r[2],
            primary_category=r[3],
            published=r[4],
            updated=r[5],
            latest_version=r[6],
            journal_ref=r[7],
            comments=r[8],
            doi=r[9],
            withdrawn=bool(r[10]),
        )

    def feed_version(self, papers: int, items: int) -> tuple[Any, ...]:
        """The newest ids, the newest change among the window's rows, the newest revision:
        a few index reads (the window's rows by the indexes the feed reads them by)."""
        row = self.db.execute(
            "SELECT (SELECT max(id) FROM items), (SELECT max(id) FROM papers), "
            "(SELECT max(modified) FROM (SELECT modified FROM items "
            " ORDER BY COALESCE(published, first_seen) DESC LIMIT ?) w), "
            "(SELECT max(modified) FROM (SELECT modified FROM papers "
            " WHERE content_hash IS NOT NULL AND published IS NOT NULL "
            " ORDER BY published DESC LIMIT ?) w), "
            "(SELECT max(seen_at) FROM paper_revisions)",
            (items, papers),
        ).fetchone()
        return tuple(row)

    def recent_items(self, limit: int) -> list[FeedCandidate]:
        """Newest items with the papers they record or mention."""
        return self._feed_items("", (), limit)

    def items_by_accounts(
        self, accounts: Sequence[str], since: str, limit: int
    ) -> list[FeedCandidate]:
        """Items (posts, reposts, quotes) by these social accounts since ``since``, newest
        first: a reader's followed scholars' own words, however busy the library."""
        if not accounts:
            return []
        return self._feed_items(
            f"WHERE {self.sql.in_list('i.account')} AND i.published >= ?",
            (self.sql.list_param(sorted(accounts)), since),
            limit,
        )

    def items_about(self, arxiv_ids: Sequence[str], limit: int) -> list[FeedCandidate]:
        """Items that record or mention these papers, newest first (a story's items)."""
        if not arxiv_ids:
            return []
        ids = self.sql.list_param(sorted(arxiv_ids))
        return self._feed_items(
            "WHERE i.id IN (SELECT m.item_id FROM mentions m JOIN papers p ON p.id = m.paper_id "
            f"  WHERE {self.sql.in_list('p.arxiv_id')} "
            "  UNION SELECT i2.id FROM items i2 JOIN papers p ON p.id = i2.paper_id "
            f"  WHERE {self.sql.in_list('p.arxiv_id')})",
            (ids, ids),
            limit,
        )

    def _feed_items(self, where: str, args: Sequence[Any], limit: int) -> list[FeedCandidate]:
        rows = self.db.execute(
            "SELECT i.id, i.kind, i.title, i.url, i.author, i.account, i.engagement, "
            "i.key, i.reply_parent, i.thread_root, i.published, i.source_id, "
            "(SELECT bot FROM accounts a WHERE a.id = i.account) AS bot, "
            "COALESCE(i.published, i.first_seen) AS time, s.kind AS source_kind, "
            "COALESCE(s.title, s.address) AS source, "
            "(SELECT arxiv_id FROM papers WHERE id = i.paper_id) AS record_of, "
            f"(SELECT {self.sql.concat('p.arxiv_id')} FROM mentions m JOIN papers p "
            " ON p.id = m.paper_id WHERE m.item_id = i.id) AS mentioned "
            f"FROM items i JOIN sources s ON s.id = i.source_id {where} "
            "ORDER BY time DESC LIMIT ?",
            (*args, limit),
        )
        return [  # by position: 600 rows a feed request, through dict(row) it cost double
            FeedCandidate(
                id=r[0],
                kind=r[1],
                title=r[2],
                url=r[3],
                author=r[4],
                account=r[5],
                engagement=orjson.loads(r[6]),
                key=r[7],
                reply_parent=r[8],
                thread_root=r[9],
                published=r[10],
                source_id=r[11],
                bot=bool(r[12]),
                time=r[13],
                source_kind=r[14],
                source=r[15],
                record_of=r[16],
                mentioned=tuple((r[17] or "").split()),
            )
            for r in rows
        ]

    def _items(self, where: str, args: Sequence[Any], order: str = "i.id") -> list[ItemView]:
        rows = self.db.execute(
            "SELECT i.id, i.kind, i.title, i.url, i.author, i.text, i.html, i.published, "
            "i.engagement, i.extra, i.source_id, COALESCE(s.title, s.address) AS source, "
            "s.kind AS source_kind, (SELECT arxiv_id FROM papers WHERE id = i.paper_id) "
            "AS record_of FROM items i JOIN sources s ON s.id = i.source_id "
            f"WHERE {where} ORDER BY {order}",
            list(args),
        )
        items = []
        for row in rows.fetchall():
            papers = tuple(
                NamedPaper(**m)
                for m in self.db.execute(
                    "SELECT p.arxiv_id, p.title, m.method, m.confidence FROM mentions m "
                    "JOIN papers p ON p.id = m.paper_id WHERE m.item_id = ? "
                    "ORDER BY m.confidence DESC, p.arxiv_id",
                    (row["id"],),
                )
            )
            fields = dict(row)
            fields["engagement"] = orjson.loads(fields["engagement"])
            extra = orjson.loads(fields.pop("extra"))
            post, daily, note, record = read_extra(row["kind"], extra)
            items.append(
                ItemView(
                    **fields,
                    post=post,
                    daily=daily,
                    note=note,
                    record=record,
                    code_links=tuple(extra.get("code_links") or ()),
                    papers=papers,
                )
            )
        return items

    def get_item(self, item_id: int) -> ItemView:
        """One item (an article, a note, a post) with the papers it names."""
        found = self._items("i.id = ?", [item_id])
        if not found:
            raise NotFound(f"no item with id {item_id}")
        return found[0]

    def source_items(self, source_id: int, kind: str) -> list[ItemView]:
        """A source's items of one kind in the order the source gave them."""
        return self._items("i.source_id = ? AND i.kind = ?", [source_id, kind])

    def daily_days(self) -> list[str]:
        rows = self.db.execute(
            f"SELECT DISTINCT {self.sql.json_text('extra', 'featured_day')} AS day FROM items "
            f"WHERE kind = 'daily' AND {self.sql.json_text('extra', 'featured_day')} IS NOT NULL "
            "ORDER BY day DESC LIMIT 60"
        )
        return [r[0] for r in rows]

    def daily_items(self, day: str) -> list[ItemView]:
        """Daily-papers entries featured on ``day``, most upvoted first."""
        return self._items(
            f"i.kind = 'daily' AND {self.sql.json_text('i.extra', 'featured_day')} = ?",
            [day],
            f"{self.sql.json_number('i.engagement', 'upvotes')} DESC, i.id",
        )

    def scholar_names(self, scholar_ids: Iterable[int]) -> dict[int, str]:
        ids = sorted(set(scholar_ids))
        if not ids:
            return {}
        rows = self.db.execute(
            f"SELECT id, name FROM scholars WHERE id IN ({', '.join('?' * len(ids))})", ids
        )
        return {r[0]: r[1] for r in rows}

    def source_addresses(self, kinds: Sequence[str]) -> list[str]:
        """Addresses of the enabled sources of these kinds."""
        rows = self.db.execute(
            f"SELECT address FROM sources WHERE enabled = 1 AND {self.sql.in_list('kind')} "
            "ORDER BY id",
            (self.sql.list_param(kinds),),
        )
        return [r[0] for r in rows]

    def papers_by_ids(self, arxiv_ids: Sequence[str]) -> dict[str, PaperSummary]:
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            f"SELECT {_SUMMARY} FROM papers WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        )
        return {r[0]: self._summary(r) for r in rows}

    def card_papers(self, arxiv_ids: Sequence[str]) -> dict[str, CardPaper]:
        """What feed cards show of these stored papers (stubs too), in three queries."""
        if not arxiv_ids:
            return {}
        papers = self.db.execute(
            "SELECT id, arxiv_id, abstract, latest_version, versions, withdrawn, "
            "content_hash IS NULL AS stub FROM papers "
            f"WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        ).fetchall()
        if not papers:
            return {}
        ids = self.sql.list_param([r["id"] for r in papers])
        authors: dict[int, list[PaperAuthorship]] = {}
        for r in self.db.execute(
            "SELECT paper_id, position, name, keyname, forenames, affiliations, scholar_id, "
            f"confidence FROM authorships WHERE {self.sql.in_list('paper_id')} "
            "ORDER BY paper_id, position",
            (ids,),
        ):
            authors.setdefault(r["paper_id"], []).append(PaperAuthorship(**r))
        code: dict[int, list[str]] = {}
        for r in self.db.execute(
            "SELECT paper_id, url FROM paper_links WHERE kind = 'code' "
            f"AND {self.sql.in_list('paper_id')}",
            (ids,),
        ):
            code.setdefault(r[0], []).append(r[1])
        found = {}
        for r in papers:
            versions = orjson.loads(r["versions"] or "[]")
            found[r["arxiv_id"]] = CardPaper(
                arxiv_id=r["arxiv_id"],
                abstract=r["abstract"] or "",
                authorships=tuple(authors.get(r["id"], ())),
                code=tuple(sorted(code.get(r["id"], ()))),
                latest_version=r["latest_version"],
                last_version_date=versions[-1][1] if versions else None,
                withdrawn=bool(r["withdrawn"]),
                stub=bool(r["stub"]),
            )
        return found

    def item_texts(self, item_ids: Sequence[int]) -> dict[int, str]:
        """The texts of these items (an empty text for an item without one)."""
        if not item_ids:
            return {}
        rows = self.db.execute(
            f"SELECT id, text FROM items WHERE {self.sql.in_list('id')}",
            (self.sql.list_param(item_ids),),
        )
        return {int(r[0]): r[1] or "" for r in rows}

    def recent_changes(self, limit: int) -> list[PaperChange]:
        """Papers whose newest stored version changed their text, newest change first."""
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.versions AS dates, r.* FROM paper_revisions r "
            "JOIN papers p ON p.id = r.paper_id "
            "WHERE r.paper_id IN (SELECT paper_id FROM paper_revisions "
            "ORDER BY seen_at DESC LIMIT ?) ORDER BY r.paper_id, r.version",
            (limit * 2,),
        ).fetchall()
        by_paper: dict[str, list[Revision]] = {}
        dates: dict[str, dict[int, str]] = {}
        for r in rows:
            dates[r["arxiv_id"]] = {int(v[0]): v[1] for v in orjson.loads(r["dates"]) if v[1]}
            by_paper.setdefault(r["arxiv_id"], []).append(Revision.from_row(r))
        found = []
        for arxiv_id, revisions in by_paper.items():
            # The feed names a change ("v3: abstract changed"): no word diff.
            changes = [c for c in changes_between(revisions, with_diff=False) if c.fields]
            if changes:
                last = changes[-1]
                dated = dates[arxiv_id].get(last.version) or last.seen_at
                found.append(PaperChange(arxiv_id, last.version, last.seen_at, last.note, dated))
        found.sort(key=lambda c: (c.seen_at, c.arxiv_id), reverse=True)
        return found[:limit]

    def code_links(self, arxiv_ids: Sequence[str]) -> dict[str, list[CodeLink]]:
        """The code links of these papers with when each first appeared, earliest first."""
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            "SELECT p.arxiv_id, l.url, l.first_seen, l.item_id FROM paper_links l "
            "JOIN papers p ON p.id = l.paper_id WHERE l.kind = 'code' "
            f"AND {self.sql.in_list('p.arxiv_id')} ORDER BY COALESCE(l.first_seen, ''), l.url",
            (self.sql.list_param(arxiv_ids),),
        )
        found: dict[str, list[CodeLink]] = {}
        for r in rows:
            found.setdefault(r[0], []).append(CodeLink(r[1], r[2], r[3]))
        return found
