"""Rank: the feed's candidates, the stories a reader's feed is ranked from.

Whatever is asked for, they are a shared window, the same for every reader
(the stories of the newest ``FEED_ITEMS`` items, the papers the network
discusses most this week, papers a new version changed, and the newest
``FEED_PAPERS`` papers), and each reader's own within their horizon (a few
half-lives): papers by the scholars they follow, those scholars' posts and
what they post about network-wide, the papers they watch, and their slice of
the new papers in the categories the library follows (:mod:`.category_slice`).

What is left of the newest-papers window. A reader's learned ranker chooses
their slice from every paper of their horizon in the followed categories, so
for a reader it chose papers for, the window's papers that are there only for
being new (:attr:`~.story.Story.only_new`: no item but their arXiv listing,
not revised, no code since, not discussed network-wide) are left out: kept,
they would fill the feed with the last hours of the category, the same for
everyone, above older papers chosen for the reader (recency weighs in every
score). Everything else in the window stays for every reader: what the
sources said (posts, articles, notes), the network's most discussed papers
of the week, new versions and code. A reader with no model yet (nothing
saved, or no vectors) keeps the whole window, as before: their slice is the
newest papers of the followed categories, which says so, and the window's
newest papers of every category stay theirs. A model that finds nothing in
the horizon above its floor leaves the window as it is too.

:class:`CandidateWindows` keeps the window, the slice's pool and each
reader's slice between a server's requests.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from lightnews.normalize.tex import tex_to_text
from lightnews.rank.category_slice import SLICE_PAPERS, SLICES, Pick, Slices, newest_picks
from lightnews.rank.learn import ReaderModel
from lightnews.rank.story import Story
from lightnews.sources import all_traits, kind_traits
from lightnews.store import Store
from lightnews.store.readers import ReaderId, reader_key
from lightnews.store.views import FeedCandidate, PaperSummary, code_after

__all__ = [
    "DISCUSSION_WINDOW",
    "FEED_CHANGES",
    "FEED_ITEMS",
    "FEED_PAPERS",
    "CandidateWindows",
    "Learner",
    "followed_categories",
    "gather_stories",
]

#: The candidate window: stories of the newest papers and of the newest items. It does
#: not depend on how many entries are asked for (that made the ranking depend on it).
FEED_PAPERS = 150
FEED_ITEMS = 600
#: Papers whose newest version changed their text, newest change first (they come back).
FEED_CHANGES = 100
#: How far back network-wide posts count towards "N people discuss it".
DISCUSSION_WINDOW = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class Learner:
    """A reader's learned model as the feed asks it: the model, its version (a digest
    of what it learned from: the slice is chosen again when it changes), the encoder of
    its vectors, and the papers the reader has already saved, read or said "not
    interested" in (no slice brings them again)."""

    model: ReaderModel
    version: object
    encoder: str
    seen: frozenset[str]


def gather_stories(
    store: Store,
    reader: ReaderId,
    papers: int = FEED_PAPERS,
    items: int = FEED_ITEMS,
    *,
    windows: CandidateWindows | None = None,
    horizon_hours: float | None = None,
    bar: float = 0.6,
    now: datetime | None = None,
    learner: Learner | None = None,
    categories: set[str] | None = None,
    slice_papers: int = SLICE_PAPERS,
    follows: tuple[int, ...] | None = None,
) -> list[Story]:
    """Candidate stories: the shared window, and ``reader``'s own candidates.

    The window is the newest ``papers`` and what the newest ``items`` say about
    papers, the same for every reader (``windows`` keeps it between a server's
    requests). On top of it come the stories that touch this reader within
    ``horizon_hours`` of the library's newest story, however many newer papers
    the library holds: papers attributed (at ``bar``) to scholars they follow,
    those scholars' own posts and what they post about network-wide, and the
    papers they watch. The window itself holds the papers the network discusses
    most this week. Items say which
    followed scholar put them in the feed. Each call gets its own copies.

    With a horizon, the reader's slice of new papers in ``categories`` (the
    followed ones; by default asked of the store) joins them too, at most
    ``slice_papers``: chosen by ``learner``, the reader's model, or the newest
    without one (:mod:`.category_slice`). A reader whose model chose a slice
    does not get the window's papers that are there only for being new
    (:attr:`Story.only_new`).
    """
    accounts = store.followed_accounts(reader)
    memo: dict[int, FeedCandidate] = {}

    def spoken(item: FeedCandidate) -> FeedCandidate:
        found = memo.get(item.id)
        if found is None:
            speaker = kind_traits(item.source_kind).reposter(item.key) or item.account
            scholar = accounts.get(speaker) if speaker else None
            found = replace(item, followed_scholar=scholar) if scholar is not None else item
            memo[item.id] = found
        return found

    if windows is None:
        stories = _gather(store, papers, items)
    else:
        stories = [
            replace(s, items=list(s.items), reasons=[]) for s in windows.get(store, papers, items)
        ]
    if horizon_hours:
        newest = max((s.time or "" for s in stories), default="")
        moment = now or datetime.now(UTC)
        if newest:  # an old library (the demo) is seen as of its newest story
            moment = min(moment, _parse_time(newest) or moment)
        since = (moment - timedelta(hours=horizon_hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
        if categories is None:
            categories = followed_categories(store)
        picks = _category_slice(store, reader, categories, since, learner, slice_papers, windows)
        by_pick = {p.arxiv_id: p for p in picks}
        if any(p.because is not None for p in picks):  # learned: recency brings no more
            stories = [s for s in stories if not s.only_new or s.key in by_pick]
        if follows is None:
            follows = tuple(s.id for s in store.followed_scholars(reader))
        _add_readers_own(
            store, reader, stories, list(accounts), since, bar, picks, windows, follows
        )
        for story in stories:
            story.pick = by_pick.get(story.key)
    if accounts:
        for story in stories:
            story.items = [spoken(i) for i in story.items]
    return stories


#: Papers' summaries kept by :meth:`CandidateWindows.papers` (some 2 kB each).
PAPERS_KEPT = 50_000
#: At most this many of a reader's own papers and posts join the window (newest first).
READER_PAPERS = 500
READER_ITEMS = 1000


def _category_slice(
    store: Store,
    reader: ReaderId,
    categories: set[str],
    since: str,
    learner: Learner | None,
    bound: int,
    windows: CandidateWindows | None,
) -> tuple[Pick, ...]:
    """The reader's slice of new papers in the followed categories: their model's best
    (maybe none: then the window's newest papers stay theirs), or without a model the
    newest."""
    if not categories or bound <= 0:
        return ()
    if learner is None:
        return newest_picks(store, categories, since, bound)
    slices = windows.slices if windows is not None else SLICES
    pool = slices.pool(store, categories, since, learner.encoder)
    picks = slices.picks(store, reader, learner.version, learner.model, pool, bound, learner.seen)
    # The pool may reach further back; a paper seen since the slice was chosen (it is
    # chosen again when the model changes) is not brought again.
    return tuple(p for p in picks if p.published >= since and p.arxiv_id not in learner.seen)


def _add_readers_own(
    store: Store,
    reader: ReaderId,
    stories: list[Story],
    accounts: list[str],
    since: str,
    bar: float,
    picks: tuple[Pick, ...] = (),
    windows: CandidateWindows | None = None,
    follows: tuple[int, ...] = (),
) -> None:
    """Add to ``stories`` those that touch ``reader`` since ``since`` and are missing:
    papers by followed scholars, followed scholars' posts, watched papers, the papers of
    their slice of the followed categories (``picks``). A story the window already has
    gains the reader's items it lacks."""
    by_key = {s.key: s for s in stories}
    wanted = (
        store.followed_papers(reader, since, bar, READER_PAPERS)
        if windows is None
        else windows.followed_papers(store, reader, follows, since, bar)
    )
    wanted += sorted(store.watched(reader_key(reader)))
    wanted += [p.arxiv_id for p in picks]
    moment = _parse_time(since)
    if moment is not None:  # what the scholars they follow post about on the network
        wanted += store.discussed_by(accounts, int(moment.timestamp() * 1_000_000), READER_ITEMS)
    posts = store.items_by_accounts(accounts, since, READER_ITEMS)
    named = {i for item in posts for i in item.papers}
    missing = [i for i in dict.fromkeys([*wanted, *sorted(named)]) if i not in by_key]
    if not missing and not posts:
        return
    found = store.papers_by_ids(missing) if windows is None else windows.papers(store, missing)
    items = {i.id: i for i in [*posts, *store.items_about(missing, READER_ITEMS)]}
    extra = _build(
        store,
        [found[i] for i in missing if i in found and found[i].title],
        sorted(items.values(), key=lambda i: i.time or "", reverse=True),
    )
    _with_code(store, {k: s for k, s in extra.items() if k not in by_key})
    for key, story in extra.items():
        kept = by_key.get(key)
        if kept is None:
            stories.append(story)
            continue
        have = {i.id for i in kept.items}
        for item in story.items:
            if item.id not in have:
                kept.items.append(item)
                if item.kind != "paper" and item.published:
                    kept.time = max(kept.time or "", item.published)


def _parse_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class _Window:
    version: tuple[Any, ...]
    built: float
    stories: tuple[Story, ...]


class CandidateWindows:
    """The reader-independent candidate window, kept between a server's feed requests.

    Gathering it costs tens of milliseconds of a feed request, and on a busy
    server every request waits for the others' CPU. It is kept as of the
    library's :meth:`~lightnews.store.Store.feed_version` and gathered again
    when that has changed, at most every ``refresh`` seconds: while writers
    change the library every moment (a snapshot merge revises papers, a
    refresh stores items), a server's feed is at most that far behind them.
    After ``ttl`` seconds it is gathered again in any case (changes the version
    cannot see: a link re-made for an older item). What is the reader's own
    (follows, mutes, read and saved stories) is applied to every request, so
    a reader's own change shows at once.
    """

    def __init__(self, refresh: float = 10.0, ttl: float = 120.0) -> None:
        self.refresh, self.ttl = refresh, ttl
        self._turn = threading.Lock()
        self._kept: dict[tuple[str, int, int], _Window] = {}
        #: Each reader's slice of the followed categories, and the pool it is chosen from.
        self.slices = Slices(refresh=refresh)
        #: The library's version as the newest window saw it, by database.
        self._versions: dict[str, tuple[Any, ...]] = {}
        #: Each reader's answers from the library (:meth:`followed_papers`,
        #: :meth:`followed_authorships`), with the version and time they were read at.
        self._readers: dict[tuple[Any, ...], _Window] = {}
        self._answers: dict[tuple[Any, ...], dict[str, list[str]]] = {}
        #: Papers' summaries as of the library's version (the same for every reader).
        self._papers: dict[str, tuple[tuple[Any, ...], float, dict[str, PaperSummary | None]]] = {}

    @contextmanager
    def turn(self) -> Iterator[None]:
        """One feed ranked at a time by this server's process; the others wait their turn.

        Ranking is Python work under the one interpreter lock. Five feeds ranked
        at once in one web process each took some 1.8 times the CPU of one alone
        (each of the ranker's short queries gives the lock away, then waits a
        switch interval for it), and all five ended near the end. One at a time,
        each ends as soon as it is ranked, and the process's CPU goes to ranking.
        """
        with self._turn:
            yield

    def get(self, store: Store, papers: int, items: int) -> tuple[Story, ...]:
        """The window's stories (shared: callers copy what they change)."""
        key = (str(store.path), papers, items)
        version = store.feed_version(papers, items)
        kept = self._kept.get(key)
        age = time.monotonic() - kept.built if kept else math.inf
        if kept and age < self.ttl and (kept.version == version or age < self.refresh):
            return kept.stories
        stories = tuple(_gather(store, papers, items))
        self._kept[key] = _Window(version, time.monotonic(), stories)
        self._versions[str(store.path)] = version
        return stories

    # -- what the library says of one reader, kept as the window is ----------------------
    #
    # At a million papers, the papers of a reader's followed scholars (some 50 each)
    # are a thousand lookups: about 13 ms of a feed request went to asking the same
    # two questions again. The answers are kept by reader and followed scholars, and
    # read again as the window is: when the library's version moved and they are
    # ``refresh`` seconds old, or after ``ttl``. A follow changes the key: at once.

    def _fresh(self, store: Store, key: tuple[Any, ...]) -> bool:
        kept = self._readers.get(key)
        if kept is None:
            return False
        age = time.monotonic() - kept.built
        version = self._versions.get(str(store.path))
        return age < self.ttl and (kept.version == version or age < self.refresh)

    def followed_papers(
        self, store: Store, reader: ReaderId, follows: tuple[int, ...], since: str, bar: float
    ) -> list[str]:
        """:meth:`~lightnews.store.Store.followed_papers` since the hour ``since`` falls
        in (a moment more than asked: the answer serves the hour); ``follows``: the ids
        of the scholars the reader follows now."""
        hour = since[:13] + ":00:00Z" if len(since) >= 13 else since
        key = (str(store.path), int(reader), follows, "papers", hour, bar)
        if not self._fresh(store, key):
            found = store.followed_papers(reader, hour, bar, READER_PAPERS)
            version = self._versions.get(str(store.path), ())
            self._readers[key] = _Window(version, time.monotonic(), ())
            self._answers[key] = {"": found}
            self._forget_old()
        return list(self._answers[key][""])

    def followed_authorships(
        self,
        store: Store,
        reader: ReaderId,
        follows: tuple[int, ...],
        arxiv_ids: list[str],
        bar: float,
    ) -> dict[str, list[str]]:
        """:meth:`~lightnews.store.Store.followed_authorships`, asking the library only
        of papers it was not asked of since the answers were last read afresh."""
        key = (str(store.path), int(reader), follows, "authored", bar)
        if not self._fresh(store, key):
            version = self._versions.get(str(store.path), ())
            self._readers[key] = _Window(version, time.monotonic(), ())
            self._answers[key] = {}
            self._forget_old()
        known = self._answers[key]
        missing = [a for a in dict.fromkeys(arxiv_ids) if a not in known]
        if missing:
            found = store.followed_authorships(reader, missing, bar)
            for arxiv_id in missing:
                known[arxiv_id] = found.get(arxiv_id, [])
        return {a: list(known[a]) for a in arxiv_ids if known.get(a)}

    def papers(self, store: Store, arxiv_ids: list[str]) -> dict[str, PaperSummary]:
        """:meth:`~lightnews.store.Store.papers_by_ids`, kept for the library's version as
        the newest window saw it: each reader's own papers (their scholars', their slice)
        lie mostly outside the shared window, and at a million papers reading and building
        them was a tenth of a feed request. A revised paper is read afresh once the version
        changes (a window's ``refresh``), and all of them after ``ttl``."""
        path = str(store.path)
        version = self._versions.get(path, ())
        kept = self._papers.get(path)
        if (
            kept is None
            or kept[0] != version
            or time.monotonic() - kept[1] > self.ttl
            or len(kept[2]) > PAPERS_KEPT
        ):
            kept = self._papers[path] = (version, time.monotonic(), {})
        memo = kept[2]
        missing = [a for a in dict.fromkeys(arxiv_ids) if a not in memo]
        if missing:
            found = store.papers_by_ids(missing)
            memo.update((a, found.get(a)) for a in missing)
        return {a: paper for a in arxiv_ids if (paper := memo.get(a)) is not None}

    def forget_readers(self) -> None:
        """Drop every reader's kept answers and slice picks (a benchmark's first requests)."""
        self._readers.clear()
        self._answers.clear()
        self._papers.clear()
        self.slices.forget_readers()

    def _forget_old(self, keep: int = 4096) -> None:
        while len(self._readers) > keep:  # the longest kept goes first
            oldest = next(iter(self._readers))
            self._readers.pop(oldest)
            self._answers.pop(oldest, None)


def _paper_story(paper: PaperSummary) -> Story:
    """A paper's story before anything about it is known but the paper itself."""
    venue = paper.venue
    return Story(
        key=paper.arxiv_id,
        title=tex_to_text(paper.title),
        time=paper.published or "",
        arxiv_id=paper.arxiv_id,
        url=f"https://arxiv.org/abs/{paper.arxiv_id}",
        category=paper.primary_category,
        venue=venue.reason if venue else None,
        withdrawn=paper.withdrawn,
        published=paper.published,
    )


def _gather(store: Store, papers: int, items: int) -> list[Story]:
    """The newest ``papers`` and the stories of the newest ``items``, for no reader."""
    stories = _build(store, store.recent_papers(papers), store.recent_items(items))
    discussed = _with_discussed(store, stories)
    _with_changes(store, stories)
    _with_code(store, stories)
    for story in stories.values():
        story.only_new = bool(
            story.arxiv_id
            and story.key not in discussed
            and not story.revision
            and not story.code_released
            and all(i.kind == "paper" for i in story.items)
        )
    return list(stories.values())


#: The papers the most accounts discuss network-wide join every reader's window.
DISCUSSED_PAPERS = 100


def _with_discussed(store: Store, stories: dict[str, Story]) -> set[str]:
    """The papers the network discusses most this week (``lightnews listen``), as of the
    window's newest story, join the window, however old the papers themselves (their
    ids are returned)."""
    newest = _parse_time(max((s.time or "" for s in stories.values()), default=""))
    if newest is None:
        return set()
    since = int((newest - DISCUSSION_WINDOW).timestamp() * 1_000_000)
    discussed = store.most_discussed(since, DISCUSSED_PAPERS)
    wanted = [i for i in discussed if i not in stories]
    found = store.papers_by_ids(wanted)
    extra = _build(store, [found[i] for i in wanted if i in found and found[i].title], [])
    stories.update(extra)
    return set(discussed)


def _build(
    store: Store, papers: Iterable[PaperSummary], recent: list[FeedCandidate]
) -> dict[str, Story]:
    """Stories of ``papers`` and of what the ``recent`` items say, by key."""
    stories: dict[str, Story] = {}
    for paper in papers:
        stories[paper.arxiv_id] = _paper_story(paper)
    wanted = {arxiv_id for i in recent for arxiv_id in i.papers}
    known_papers = store.papers_by_ids(sorted(wanted - set(stories)))
    # A thread is one unit: its replies belong to the stories its posts name.
    named = {i.key: i.papers for i in recent}
    by_thread: dict[str, list[str]] = {}
    for item in recent:
        root = item.thread_root or item.key
        for arxiv_id in named[item.key]:
            by_thread.setdefault(root, [])
            if arxiv_id not in by_thread[root]:
                by_thread[root].append(arxiv_id)
    for item in recent:
        ids = named[item.key] or (
            by_thread.get(item.thread_root or "", []) if item.kind == "post" else []
        )
        for key in ids or [f"item:{item.id}"]:
            story = stories.get(key)
            if story is None:
                known = known_papers.get(key)
                story = stories[key] = Story(
                    key=key,
                    title=tex_to_text((known.title if known else "") or item.title or key),
                    # Undated items (a notes page) do not date a story: its paper does.
                    time=item.published or (known.published if known else None) or item.time,
                    arxiv_id=key if ids else None,
                    url=f"https://arxiv.org/abs/{key}" if ids else item.url,
                    category=known.primary_category if known else None,
                    venue=venue.reason if known and (venue := known.venue) else None,
                    withdrawn=bool(known and known.withdrawn),
                    published=known.published if known else None,
                )
            story.items.append(item)
            # Only what carries its own date moves a story (an undated note does not).
            if item.kind != "paper" and item.published:
                story.time = max(story.time or "", item.published)
    return stories


def _with_code(store: Store, stories: dict[str, Story]) -> None:
    """Stories whose code appeared after their paper say so, as of that moment."""
    links = store.code_links([s.arxiv_id for s in stories.values() if s.arxiv_id])
    for story in stories.values():
        found = code_after(story.published, links.get(story.arxiv_id or "", []))
        if found is not None and found.first_seen:
            story.code_released = found.first_seen
            story.time = max(story.time or "", found.first_seen)


def _with_changes(store: Store, stories: dict[str, Story]) -> None:
    """Papers a new version changed come back, saying what changed, as of that version."""
    changes = store.recent_changes(FEED_CHANGES)
    missing = store.papers_by_ids(sorted({c.arxiv_id for c in changes} - set(stories)))
    for change in changes:
        story = stories.get(change.arxiv_id)
        if story is None:
            paper = missing.get(change.arxiv_id)
            if paper is None:
                continue
            story = stories[change.arxiv_id] = _paper_story(paper)
        story.revision, story.revised_at = change.note, change.seen_at
        story.time = max(story.time or "", change.dated)


def followed_categories(store: Store) -> set[str]:
    """arXiv categories the user follows as sources (each kind says how its address names one)."""
    topical = {kind: t for kind, t in all_traits().items() if t.topic_prefix}
    return {
        topic
        for kind, traits in topical.items()
        for address in store.source_addresses([kind])
        if (topic := traits.topic(address))
    }
