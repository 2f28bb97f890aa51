"""A reader's slice of a followed category is chosen by their learned ranker, not by
recency; a reader with no model gets the newest papers, and is told so (both backends).

The library is real papers (the shared Hugging Face corpus) in cs.LG, which the
library follows: robotics papers three to five days old, and 240 papers on other
subjects from the last two days, newer than all of them (the newest 150 papers
were every reader's candidates before). A reader who saved other robotics papers
gets the older robotics papers, each saying which saved paper it is like, and
not the newest unrelated ones; a reader who saved nothing gets the newest.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lightnews.embed import embed_papers, forget_cached
from lightnews.embed.encoders import missing_packages
from lightnews.model import Paper
from lightnews.normalize.times import iso
from lightnews.rank import CandidateWindows, Story, rank_stories
from lightnews.rank.category_slice import SLICE_FLOOR
from lightnews.rank.trained import STORED, TRAINER
from lightnews.settings import Settings
from lightnews.store import LOCAL_READER, Store
from lightnews.store.readers import ReaderId

SLICE = 20
SETTINGS = Settings(environ={}).with_overrides(feed_category_slice=SLICE)
CLOCK = datetime(2026, 8, 1, tzinfo=UTC)
READER = ReaderId(7)

pytestmark = pytest.mark.skipif(
    bool(missing_packages(str(SETTINGS.semantic))),
    reason="needs the semantic extra: pip install -e '.[semantic]'",
)


def corpus(shared: Path, robots: int, others: int) -> tuple[list[Paper], list[Paper]]:
    """Robotics papers (their title says so) and papers that never mention robots."""
    robot: list[Paper] = []
    other: list[Paper] = []
    path = shared / "corpus" / "hf-papers" / "hf-papers-11k.jsonl"
    for line in path.open(encoding="utf-8"):
        row = json.loads(line)
        text = row.get("content_text") or ""
        if not text:
            continue
        title = row["title"]
        group = robot if "robot" in title.lower() else other
        if group is other and "robot" in text.lower():
            continue
        if len(group) < (robots if group is robot else others):
            arxiv_id = row["id"].rsplit("/", 1)[-1]
            group.append(Paper(arxiv_id, title=title, abstract=text, categories=["cs.LG"]))
        if len(robot) >= robots and len(other) >= others:
            break
    return robot, other


def dated(paper: Paper, age: timedelta) -> Paper:
    return replace(paper, published=iso(CLOCK - age))


@dataclass(frozen=True)
class Library:
    store: Store
    saved: list[str]  # robotics papers the reader saves
    older: list[str]  # robotics papers of the horizon, older than every other
    newer: list[str]  # papers on other subjects, newest first
    later: Paper  # a robotics paper not stored yet


@pytest.fixture
def library(store: Store, shared: Path) -> Iterator[Library]:
    robot, other = corpus(shared, robots=17, others=240)
    saved = [dated(p, timedelta(days=5, hours=n)) for n, p in enumerate(robot[:6])]
    older = [dated(p, timedelta(days=3, hours=4 * n)) for n, p in enumerate(robot[6:16])]
    newer = [dated(p, timedelta(minutes=10 * (n + 1))) for n, p in enumerate(other)]
    store.add_source("arxiv-api", "cat:cs.LG", now=iso(CLOCK))
    store.save_papers([*saved, *older, *newer], iso(CLOCK))
    forget_cached()
    STORED.forget()
    embed_papers(store, SETTINGS)
    yield Library(
        store,
        [p.arxiv_id for p in saved],
        [p.arxiv_id for p in older],
        [p.arxiv_id for p in newer],
        dated(robot[16], timedelta(days=2)),
    )
    TRAINER.drain()
    STORED.forget()
    forget_cached()


def feed_of(store: Store, reader: ReaderId, windows: CandidateWindows | None) -> list[Story]:
    return rank_stories(store, reader, limit=None, now=CLOCK, settings=SETTINGS, windows=windows)


def test_a_learned_slice_brings_older_papers_on_the_readers_subject(
    library: Library,
) -> None:
    store, saved, older, newer = library.store, library.saved, library.older, library.newer
    for arxiv_id in saved:
        store.mark_story(READER, arxiv_id, iso(CLOCK), saved=True)
    for windows in (None, CandidateWindows()):  # the CLI's way and a server's
        feed = feed_of(store, READER, windows)
        by_key = {s.key: s for s in feed}
        picked = [s for s in feed if s.pick is not None]
        assert 0 < len(picked) <= SLICE  # bounded
        # The robotics papers older than the 150 newest papers are there, saying why.
        found = [by_key[a] for a in older if a in by_key]
        assert len(found) >= 8, [s.title for s in picked]
        for story in found:
            assert story.pick is not None and story.pick.because is not None
            assert any(w.startswith("new in cs.LG") for w in story.why), story.why
            assert any(w.startswith("like “") and "your saves" in w for w in story.why), story.why
        # The newest papers are not there for being new: only what the model picked, or
        # what has another reason (code released since).
        unpicked = [s for s in feed if s.arxiv_id and s.key not in saved and s.pick is None]
        assert all(len(s.why) > 1 for s in unpicked), [s.why for s in unpicked]
        assert len([a for a in newer[:150] if a in by_key]) <= SLICE - len(found)

        # The model chose them first: above everything else it brought.
        def score(story: Story) -> float:
            assert story.pick is not None and story.pick.because is not None
            return story.pick.because.score

        best = sorted(picked, key=score, reverse=True)[: len(older)]
        assert len({s.key for s in best} & set(older)) >= len(older) - 2, [
            (s.title, round(score(s), 2)) for s in sorted(picked, key=score, reverse=True)
        ]
        assert all(score(s) >= SLICE_FLOOR for s in picked)
    # A server's slice follows the library: a new paper on the subject, once it has its
    # vector, joins the reader's slice at their next request.
    windows = CandidateWindows(refresh=0.0)
    before = {s.key for s in feed_of(store, READER, windows) if s.pick}
    later = library.later
    store.save_papers([later], iso(CLOCK))
    embed_papers(store, SETTINGS)
    after = {s.key for s in feed_of(store, READER, windows) if s.pick}
    assert later.arxiv_id not in before and later.arxiv_id in after
    # ...and the reader: a paper of the slice they save is no longer the slice's to bring.
    store.mark_story(READER, later.arxiv_id, iso(CLOCK), saved=True)
    again = {s.key for s in feed_of(store, READER, windows) if s.pick}
    assert later.arxiv_id not in again and len(again) <= SLICE


def test_a_reader_with_nothing_to_learn_from_gets_the_newest(
    library: Library,
) -> None:
    store, older, newer = library.store, library.older, library.newer
    for windows in (None, CandidateWindows()):
        feed = feed_of(store, LOCAL_READER, windows)
        picked = [s for s in feed if s.pick is not None]
        assert sorted(s.key for s in picked) == sorted(newer[:SLICE])  # the newest, bounded
        assert all(s.pick is not None and s.pick.because is None for s in picked)
        assert all(any(w.startswith("newest in cs.LG") for w in s.why) for s in picked)
        # The shared window of the newest papers stays theirs: the older ones are not in it.
        keys = {s.key for s in feed}
        assert set(newer[:150]) <= keys
        assert not keys & set(older)


def test_a_servers_slice_is_chosen_off_the_request_after_a_write(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the web server does after a write (``Site.learn_from``): the trainer's thread
    trains the model and ranks the feed once, so the next feed request chooses nothing;
    a feed whose model is behind reads the slice it has, less what the reader saw."""
    from lightnews.rank import category_slice

    chose: list[str] = []
    choose = category_slice.choose

    def choosing(*args: Any, **kwargs: Any) -> Any:
        chose.append(threading.current_thread().name)
        return choose(*args, **kwargs)

    monkeypatch.setattr(category_slice, "choose", choosing)
    monkeypatch.setattr(TRAINER, "queue", None)
    store, saved, older = library.store, library.saved, library.older
    for arxiv_id in saved:
        store.mark_story(READER, arxiv_id, iso(CLOCK), saved=True)
    windows = CandidateWindows()
    first = {s.key for s in feed_of(store, READER, windows) if s.pick}
    assert chose == ["MainThread"]  # a first model: trained and chosen in the request
    seen = next(a for a in older if a in first)
    store.mark_story(READER, seen, iso(CLOCK), saved=True)
    # The feed before the model is trained again (here: left to workers that are slow to
    # come): the slice it has, without the paper just saved.
    monkeypatch.setattr(TRAINER, "queue", lambda store, reader: True)
    behind = {s.key for s in feed_of(store, READER, windows) if s.pick}
    assert TRAINER.drain() and chose == ["MainThread"] and behind == first - {seen}
    monkeypatch.setattr(TRAINER, "queue", None)
    TRAINER.schedule(store, READER, SETTINGS, then=lambda: feed_of(store, READER, windows))
    assert TRAINER.drain()
    assert chose == ["MainThread", "lightnews-trainer"]  # the new model's slice, off it
    after = {s.key for s in feed_of(store, READER, windows) if s.pick}
    assert chose == ["MainThread", "lightnews-trainer"] and seen not in after
