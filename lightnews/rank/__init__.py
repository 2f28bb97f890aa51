"""Rank: order stories by what the scholars you follow write and discuss.

A story is a paper with everything that records or mentions it; an item that
mentions no paper is a story of its own. Each signal below is a plain function
of one story and the same context, returning points and the words that explain
them; :func:`rank_stories` adds them up, decays the sum with the story's age
(a half-life setting; a followed scholar's own paper ages over the reader's
horizon, :data:`FOLLOWED_WORK`) and keeps the explanations, so every entry says why it is
there ("posted by A (followed) · authored by B and C · 3 scholars discuss it ·
41 upvotes on Daily Papers"). A new signal is one function added to ``SIGNALS``.

A reason is a :class:`Reason`: its words in parts, the parts that name
something (a scholar, the blog article, the notes page, the posts) carrying
where it is on the site, and the points it brought. A story's reasons are
de-duplicated and ordered by those points, so the first reason is the one
that counted most; the CLI, JSON, Atom and JSON Feed carry them all.

The candidates (:mod:`.candidates`) are a shared window and each reader's own
within their horizon (a few half-lives): papers by the scholars they follow,
those scholars' posts, the papers they watch, and a bounded slice of the new
papers in the followed categories that the reader's learned ranker chose
(:mod:`.category_slice`; the newest, saying so, while it has nothing to learn
from). So a followed scholar's paper stays in the feed however many newer
papers a category brings, and so does an older paper of the category that is
like what the reader saved. All of them are ranked, then the list is cut, so
``--limit 1`` is the first entry of ``--limit 50`` and a story carries the
same items and counts at any length.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from lightnews.embed import Closeness, closest_interests
from lightnews.rank.candidates import (
    DISCUSSION_WINDOW,
    FEED_CHANGES,
    FEED_ITEMS,
    FEED_PAPERS,
    CandidateWindows,
    Learner,
    followed_categories,
    gather_stories,
)
from lightnews.rank.category_slice import SLICE_PAPERS
from lightnews.rank.discussed import DiscussedPaper, discussion_of
from lightnews.rank.learn import SAVED, Because
from lightnews.rank.story import Part, Reason, Story, display_name, reason
from lightnews.rank.trained import learning_version, model_for_feed
from lightnews.settings import Settings
from lightnews.sources import kind_traits
from lightnews.store import Store
from lightnews.store.readers import ReaderId
from lightnews.store.views import Mutes

__all__ = [
    "FEED_CHANGES",
    "FEED_ITEMS",
    "FEED_PAPERS",
    "FEED_VIEWS",
    "FOLLOWED_WORK",
    "LEARNED_FLOOR",
    "SIGNALS",
    "CandidateWindows",
    "Context",
    "Learned",
    "Learner",
    "Part",
    "Reason",
    "Story",
    "display_name",
    "gather_stories",
    "newest_stories",
    "rank_stories",
    "reason",
]

#: The feed's views: every story, or only papers' stories (no lone posts or articles).
FEED_VIEWS = ("everything", "papers")


@dataclass(frozen=True, slots=True)
class Learned:
    """The reader's model on one paper: how far above a random paper (in standard
    deviations), for which interest, and the saved paper of it nearest by meaning."""

    score: float
    interest: str
    arxiv_id: str
    title: str


@dataclass(slots=True)
class Context:
    """What every signal may read: followed authors and topics, names, the time."""

    authored: dict[str, list[str]]
    names: dict[int, str]
    categories: set[str]
    now: datetime
    close: dict[str, Closeness] = field(default_factory=dict)
    #: Who discusses each paper network-wide (``lightnews listen``), by arXiv id.
    discussion: dict[str, DiscussedPaper] = field(default_factory=dict)
    #: Followed scholars' ids by name (to link "authored by" to their pages).
    scholar_ids: dict[str, int] = field(default_factory=dict)
    #: What the reader's learned model says of papers, by arXiv id (:mod:`.learn`).
    learned: dict[str, Learned] = field(default_factory=dict)
    #: Say why, in words: off while every candidate is scored, on for those shown (a
    #: feed scores some 170 stories to show 50; their words were a third of the work).
    explain: bool = True

    def scholar(self, name: str, scholar_id: int | None = None) -> Part:
        """A scholar's name, linked to their page when known."""
        found = scholar_id if scholar_id is not None else self.scholar_ids.get(name)
        return Part(name, f"/scholar/{found}" if found is not None else None)


Signal = Callable[[Story, Context], tuple[float, list[Reason]]]


def posted_by_followed(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """A followed scholar posted it (counts most) or reposted it."""
    posted: dict[int, str] = {}
    reposted: dict[int, str] = {}
    for item in story.items:
        scholar = item.followed_scholar
        if scholar is None:
            continue
        name = context.names.get(scholar, "a scholar you follow")
        (reposted if item.kind == "repost" else posted).setdefault(scholar, name)
    for scholar in posted:  # who posted it need not be said to have reposted it too
        reposted.pop(scholar, None)
    posted_points, reposted_points = 4.0 * len(posted), 1.5 * len(reposted)
    if not context.explain:
        return posted_points + reposted_points, []
    why = []
    if posted:
        names = [context.scholar(n, i) for i, n in posted.items()]
        why.append(reason("posted by ", names, " (followed)", weight=posted_points))
    if reposted:
        names = [context.scholar(n, i) for i, n in reposted.items()]
        why.append(reason("reposted by ", names, " (followed)", weight=reposted_points))
    return sum(r.weight for r in why), why


def authored_by_followed(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """A followed scholar is among the paper's authors."""
    names = list(dict.fromkeys(context.authored.get(story.arxiv_id or "", [])))
    if not names:
        return 0.0, []
    points = 3.0 * len(names)
    if not context.explain:
        return points, []
    names_ = [context.scholar(n) for n in names]
    return points, [reason("authored by ", names_, " (followed)", weight=points)]


def _posts_href(story: Story) -> str | None:
    return f"/paper/{story.arxiv_id}#posts" if story.arxiv_id else None


def scholars_discussing(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """How many distinct people (bots weigh little) post about it, here and network-wide."""
    people = {i.account for i in story.items if i.account and not i.bot}
    bots = {i.account for i in story.items if i.account and i.bot}
    heard = context.discussion.get(story.arxiv_id or "")
    if heard is None:
        points = math.log1p(len(people)) + 0.1 * len(bots)
        if len(people) < 2 or not context.explain:
            return points, []
        words = Part(f"{len(people)} scholars", _posts_href(story))
        return points, [reason(words, " discuss it", weight=math.log1p(len(people)))]
    # The network's count (each account once, bots apart) with the feed's own speakers.
    network_bots = {s.did for s in heard.speakers if s.role == "bot"}
    network_people = {s.did for s in heard.speakers if s.role != "bot"}
    everyone = people | network_people
    bots = (bots | network_bots) - everyone
    points = math.log1p(len(everyone)) + 0.1 * len(bots)
    if len(everyone) < 2 or not context.explain:
        return points, []
    followed = {s.did for s in heard.speakers if s.role == "followed"}
    extra = f" (incl. {len(followed)} you follow)" if followed else ""
    words = Part(f"{len(everyone)} people", _posts_href(story))
    return points, [reason(words, " discuss it" + extra, weight=math.log1p(len(everyone)))]


def engagement(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """Engagement normalized per source: likes and reposts are not upvotes."""
    if not story.items:  # a paper no item is about (most of the newest papers)
        return 0.0, []
    social = [i for i in story.items if kind_traits(i.source_kind).social]
    likes = sum(
        (i.engagement.get("likes") or 0) + 2 * (i.engagement.get("reposts") or 0) for i in social
    )
    daily = [i for i in story.items if kind_traits(i.source_kind).daily_papers]
    best = max(daily, key=lambda i: i.engagement.get("upvotes") or 0, default=None)
    upvotes = (best.engagement.get("upvotes") or 0) if best else 0
    like_points = 0.5 * math.log1p(likes) / math.log1p(100)
    vote_points = math.log1p(upvotes) / math.log1p(50)
    if not context.explain:
        return like_points + vote_points, []
    why = []
    if best is not None and upvotes:
        on = Part("Daily Papers", best.url)
        why.append(reason(f"{upvotes} upvotes on ", on, weight=vote_points))
    if likes >= 20:
        by: dict[str, int] = {}  # whose posts, the most liked first; bots are not named
        bots: set[str] = set()
        for i in social:
            n = (i.engagement.get("likes") or 0) + 2 * (i.engagement.get("reposts") or 0)
            if i.bot:
                if n:
                    bots.add(i.account or i.author or i.source)
                continue
            who = display_name(i.author, i.source)
            by[who] = by.get(who, 0) + n
        ranked = [w for w, n in sorted(by.items(), key=lambda kv: -kv[1]) if n]
        shown = [Part(w) for w in ranked[:2]]
        if len(ranked) > 2:
            shown.append(Part(f"{len(ranked) - 2} other" + ("s" if len(ranked) > 3 else "")))
        if bots:
            shown.append(Part("a bot" if len(bots) == 1 else f"{len(bots)} bots"))
        posts = Part(f"{likes} likes and reposts", _posts_href(story))
        why.append(reason(posts, " on posts by ", shown, weight=like_points))
    return like_points + vote_points, why


def relevance(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """In a topic the user follows."""
    if story.category and story.category in context.categories:
        if not context.explain:
            return 0.8, []
        topic = Part(story.category, f"https://arxiv.org/list/{story.category}/recent")
        if story.pick is None:
            return 0.8, [reason("in ", topic, ", which you follow", weight=0.8)]
        if story.pick.because is None:  # the reader's slice, by recency: no model yet
            words = ", which you follow (nothing learned from your saves yet)"
            return 0.8, [reason("newest in ", topic, words, weight=0.8)]
        return 0.8, [reason("new in ", topic, ", which you follow", weight=0.8)]
    return 0.0, []


def close_to_your_papers(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """Near, by meaning, to a paper of a followed scholar or a paper the user saved."""
    found = context.close.get(story.arxiv_id or "")
    if found is None:
        return 0.0, []
    title = found.title if len(found.title) <= 60 else found.title[:57].rstrip() + "…"
    points = 0.5 + 1.5 * found.strength
    if not context.explain:
        return points, []
    paper = Part(f"“{title}”", f"/paper/{found.arxiv_id}")
    if found.scholar:
        why = reason("close to ", context.scholar(found.scholar), "'s ", paper, weight=points)
    else:
        why = reason("close to ", paper, ", which you saved", weight=points)
    return points, [why]


def learned_interest(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """The reader's own model (learned from their saves, reads, "not interested" and
    mutes) rates it well above a random paper, for one of their interests, or chose it
    for their slice of a followed category (:mod:`.category_slice`)."""
    found = context.learned.get(story.arxiv_id or "")
    if found is None:
        return 0.0, []
    points = max(0.0, min(2.0, 0.4 * found.score))
    if not context.explain:
        return points, []
    title = found.title if len(found.title) <= 60 else found.title[:57].rstrip() + "…"
    paper = Part(f"“{title}”", f"/paper/{found.arxiv_id}")
    if found.interest == SAVED:
        return points, [reason("like ", paper, ", going by your saves", weight=points)]
    listed = Part(f"“{found.interest}”", "/saved")
    return points, [reason("for your ", listed, " list: like ", paper, weight=points)]


def coverage(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """Written about in articles or notes (which blog, whose notes), or on Daily Papers.

    Only a paper's story is written *about*: an article that names no paper is the
    story itself, and "in a post on Kestrel Weekly" would only repeat where it is."""
    if not story.items or story.arxiv_id is None:
        return 0.0, []
    kinds = {i.kind for i in story.items}
    points = 0.6 * len([k for k in ("article", "note", "daily") if k in kinds])
    if not context.explain:
        return points, []
    why = []
    articles = {i.source_id: i for i in story.items if i.kind == "article"}
    if articles:
        blogs = [Part(i.source, f"/item/{i.id}") for i in articles.values()]
        why.append(
            reason("in a post on " if len(blogs) == 1 else "in posts on ", blogs, weight=0.6)
        )
    notes = {i.source_id: i for i in story.items if i.kind == "note"}
    if notes:
        whose = [
            Part(f"{display_name(i.author, i.source)}'s notes", f"/notes/{i.source_id}")
            for i in notes.values()
        ]
        why.append(reason("in ", whose, weight=0.6))
    daily = [i for i in story.items if i.kind == "daily"]
    if daily and not any(i.engagement.get("upvotes") for i in daily):
        why.append(reason("on ", Part("Daily Papers", daily[0].url), weight=0.6))
    return points, why


def accepted_venue(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """Accepted at, or published in, a venue (its arXiv record or a post says so)."""
    return (0.5, [reason(story.venue, weight=0.5)]) if story.venue else (0.0, [])


def code_released(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """Code for the paper appeared after the paper did (a repository linked later)."""
    if not story.code_released:
        return 0.0, []
    code = Part("code released", f"/paper/{story.arxiv_id}" if story.arxiv_id else None)
    return 0.4, [reason(code, weight=0.4)]


def revised(story: Story, context: Context) -> tuple[float, list[Reason]]:
    """A new version changed what the paper says ("v3: abstract changed")."""
    return (0.3, [reason(story.revision, weight=0.3)]) if story.revision else (0.0, [])


SIGNALS: tuple[Signal, ...] = (
    posted_by_followed,
    authored_by_followed,
    scholars_discussing,
    engagement,
    relevance,
    close_to_your_papers,
    learned_interest,
    coverage,
    accepted_venue,
    revised,
    code_released,
)


#: What the reader asked for by name: a paper by a scholar they follow. Its points
#: halve over the reader's whole horizon, not over the half-life, so that the new
#: papers of a followed category (a few hours old, hundreds a day) and the learned
#: slice's picks do not push a followed scholar's paper of last week out of the
#: feed's first page (at the horizon's end it keeps half of its points: 1.5 for
#: one followed author, above a new category paper's 1.0). What others do (posts,
#: discussion, closeness) ages by the half-life: news is what is new.
FOLLOWED_WORK: frozenset[Signal] = frozenset({authored_by_followed})


def _age_hours(time: str, now: datetime) -> float:
    try:
        moment = datetime.fromisoformat(time.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return 0.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max((now - moment).total_seconds() / 3600, 0.0)


def rank_stories(
    store: Store,
    reader: ReaderId,
    *,
    limit: int | None = 30,
    half_life_hours: float = 36.0,
    bar: float = 0.6,
    now: datetime | None = None,
    settings: Settings | None = None,
    windows: CandidateWindows | None = None,
    papers_only: bool = False,
    keep_read: bool | frozenset[str] = frozenset(),
    own_state: bool = True,
) -> list[Story]:
    """``reader``'s feed: stories by what the scholars they follow do, each with why.

    Papers come first: an item that names no paper (chatter, a newsletter with
    no paper) counts for :data:`LONE_ITEM_SHARE` of its points and never above a
    paper a followed scholar wrote or spoke of (:func:`_papers_first`);
    ``papers_only`` leaves such items out.

    A story the reader has read leaves the feed until something material happens
    to it (it comes back saying what); ``keep_read`` keeps read stories, marked
    "read": all of them (True), or these keys (the one just read or said "not
    interested" in, shown with an undo where it was).

    Follows, mutes, read and saved stories are ``reader``'s own. ``own_state``
    False (a public read-only page): by ``reader``'s follows alone, with none of
    their mutes, reads, saves or feedback, used or said.

    With ``settings`` (and the semantic extra), stories near the papers of
    followed scholars or saved papers gain too, saying which paper. That
    closeness is worked out for the best-scored ``CLOSE_CANDIDATES`` stories
    only (it adds at most two points; comparing every candidate with every
    interest paper cost more than the rest of the feed on a large library).

    Every candidate is ranked before the list is cut to ``limit`` (None: all of
    them), so the order and each story's contents do not depend on ``limit``.
    ``windows``: the candidates kept between requests (:class:`CandidateWindows`),
    and the server process's turns: one feed is ranked at a time (see there).
    """
    with windows.turn() if windows is not None else nullcontext(), store.repeated_reads():
        return _rank(
            store,
            reader,
            limit,
            half_life_hours,
            bar,
            now,
            settings,
            windows,
            papers_only,
            keep_read,
            own_state,
        )


def _rank(
    store: Store,
    reader: ReaderId,
    limit: int | None,
    half_life_hours: float,
    bar: float,
    now: datetime | None,
    settings: Settings | None,
    windows: CandidateWindows | None,
    papers_only: bool,
    keep_read: bool | frozenset[str],
    own_state: bool,
) -> list[Story]:
    horizon = half_life_hours * (
        float(settings.horizon_half_lives) if settings is not None else HORIZON_HALF_LIVES
    )
    states = store.story_states(reader) if own_state else {}
    feedback = store.paper_feedback(reader) if own_state else {}
    not_interested = _not_interested(store, feedback)
    learner = (
        _learner(store, reader, settings, states, feedback, not_interested)
        if settings is not None and own_state
        else None
    )
    categories = followed_categories(store)
    followed = store.followed_scholars(reader)
    follows = tuple(s.id for s in followed)
    gathered = gather_stories(
        store,
        reader,
        follows=follows,
        windows=windows,
        horizon_hours=horizon,
        bar=bar,
        now=now,
        learner=learner,
        categories=categories,
        slice_papers=int(settings.feed_category_slice) if settings is not None else SLICE_PAPERS,
    )
    stories = _apply_mutes(store, reader, gathered) if own_state else gathered
    if not own_state:  # a public page says nothing of the reader's model, nor of its absence
        for story in stories:
            story.pick = None
    arxiv_ids = [s.arxiv_id for s in stories if s.arxiv_id]
    context = Context(
        authored=(
            store.followed_authorships(reader, arxiv_ids, bar)
            if windows is None
            else windows.followed_authorships(store, reader, follows, arxiv_ids, bar)
        ),
        names=store.scholar_names(
            i.followed_scholar for s in stories for i in s.items if i.followed_scholar is not None
        ),
        categories=categories,
        now=now or datetime.now(UTC),
        scholar_ids={s.name: s.id for s in followed},
        explain=False,  # the stories shown are explained at the end
    )
    # What the model said of the papers it chose for the slice, whatever their score.
    picked = {s.key: s.pick.because for s in stories if s.pick and s.pick.because}
    context.learned = _explained(store, picked)
    context.discussion = discussion_of(store, reader, arxiv_ids, context.now - DISCUSSION_WINDOW)
    newest = max((s.time or "" for s in stories), default="")
    reference = context.now
    if newest:  # an old library (the demo) is ranked as of its newest story
        reference = min(context.now, datetime.fromisoformat(newest.replace("Z", "+00:00")))
    kept_keys = keep_read if isinstance(keep_read, frozenset) else frozenset()
    hidden = not_interested - kept_keys
    stories = [s for s in stories if s.arxiv_id not in hidden]
    if papers_only:
        stories = [s for s in stories if s.arxiv_id]
    for story in stories:
        _score(story, context, reference, half_life_hours, states, horizon)
    since = (reference - timedelta(hours=horizon)).strftime("%Y-%m-%dT%H:%M:%SZ")
    _papers_first(stories, context, states, since)
    stories.sort(key=_order, reverse=True)
    if settings is not None and own_state:  # near what was saved; the reader's model
        candidates = stories[:CLOSE_CANDIDATES]
        wanted = [s.arxiv_id for s in candidates if s.arxiv_id]
        context.close = closest_interests(store, reader, settings, wanted, bar)
        # The slice's picks were scored by the same model when it chose them.
        fresh = [a for a in wanted if a not in context.learned]
        context.learned = {**context.learned, **_learned(store, learner, fresh)}
        for story in candidates:
            if story.arxiv_id in context.close or story.arxiv_id in context.learned:
                _score(story, context, reference, half_life_hours, states, horizon)
        stories.sort(key=_order, reverse=True)  # papers only gained: lone items stay below
    if keep_read is not True:
        stories = [s for s in stories if s.key in kept_keys or not _read_without_news(s, states)]
    shown = stories[:limit]
    _reasons_of(shown, context, states)
    return shown


def _read_without_news(story: Story, states: dict[str, tuple[str | None, str | None]]) -> bool:
    read_at = states.get(story.key, (None, None))[0]
    return read_at is not None and _since(story, read_at) is None


#: A paper the reader's model rates this many standard deviations above a random one
#: says so ("like “…”, going by your saves"): about one random paper in a thousand
#: if the scores were normal (a cautious bar, not yet fitted on readers' clicks).
LEARNED_FLOOR = 3.0


def _not_interested(store: Store, feedback: dict[int, str]) -> set[str]:
    """Papers the reader said "not interested" in: gone from their feed (theirs alone)."""
    ids = [p for p, decision in feedback.items() if decision == "not-interested"]
    return {hit.arxiv_id for hit in store.papers_by_rowids(ids).values()} if ids else set()


def _learner(
    store: Store,
    reader: ReaderId,
    settings: Settings,
    states: dict[str, tuple[str | None, str | None]],
    feedback: dict[int, str],
    not_interested: set[str],
) -> Learner | None:
    """The reader's model as the store keeps it (:mod:`.trained`: trained off this
    request; a stored model behind the reader's latest doings is used while it is trained
    again), or None when there is nothing to learn from."""
    saved = any(at for _, at in states.values())
    if not saved and "more-like-this" not in feedback.values():
        return None  # nothing to learn from: no model (and no training cost)
    encoder = str(settings.semantic)
    version = learning_version(
        encoder, states, feedback, store.saved_lists(reader), store.mutes(reader)
    )
    found = model_for_feed(store, reader, settings, version)
    if found is None:
        return None
    model, learned_from = found
    # The slice is chosen again when the model changes, not at every read or save: what
    # the reader saw since is left out of it as it is (:mod:`.candidates`).
    return Learner(model, learned_from, encoder, frozenset(states) | not_interested)


def _learned(store: Store, learner: Learner | None, arxiv_ids: list[str]) -> dict[str, Learned]:
    """The reader's model on these papers, where it rates them well (:data:`LEARNED_FLOOR`)."""
    if learner is None:
        return {}
    rows = store.paper_row_ids(arxiv_ids)
    explained = learner.model.explain(list(rows.values()))
    return _explained(
        store,
        {
            arxiv_id: explained[row]
            for arxiv_id, row in rows.items()
            if row in explained and explained[row].score >= LEARNED_FLOOR
        },
    )


def _explained(store: Store, found: dict[str, Because]) -> dict[str, Learned]:
    """The model's word on papers, naming the saved paper nearest each (not itself)."""
    near = store.papers_by_rowids(sorted({b.paper_id for b in found.values()}))
    return {
        arxiv_id: Learned(b.score, b.interest, near[b.paper_id].arxiv_id, near[b.paper_id].title)
        for arxiv_id, b in found.items()
        if b.paper_id in near and near[b.paper_id].arxiv_id != arxiv_id
    }


#: What an item that names no paper keeps of its points: chatter needs more to show.
LONE_ITEM_SHARE = 0.3


def _papers_first(
    stories: list[Story],
    context: Context,
    states: dict[str, tuple[str | None, str | None]],
    since: str,
) -> None:
    """Lone items (no paper) keep :data:`LONE_ITEM_SHARE` of their score, and stay below
    every unread paper of the reader's horizon (``since``) that a followed scholar wrote,
    posted or reposted: the feed is about papers first, and a followed scholar's chatter
    is not their paper."""
    followed = [
        s.score
        for s in stories
        if s.arxiv_id
        and (s.time or "") >= since
        and not (states.get(s.key, (None, None))[0])
        and (context.authored.get(s.arxiv_id) or any(i.followed_scholar for i in s.items))
    ]
    floor = min(followed, default=None)
    for story in stories:
        if story.arxiv_id is None:
            story.score *= LONE_ITEM_SHARE
            if floor is not None:
                story.score = min(story.score, floor * 0.999)


CLOSE_CANDIDATES = 150
#: A reader's own candidates reach this many half-lives back (the setting's default).
HORIZON_HALF_LIVES = 4.0


def _order(story: Story) -> tuple[float, str, str]:
    """Best score first, then the newest, then by key: one order, whatever the ties."""
    return story.score, story.time or "", story.key


def _score(
    story: Story,
    context: Context,
    reference: datetime,
    half_life_hours: float,
    states: dict[str, tuple[str | None, str | None]],
    horizon_hours: float | None = None,
) -> None:
    """Set the story's score from every signal, its age and its read state, and, when
    ``context.explain``, its reasons (:func:`_explain`).

    The points of :data:`FOLLOWED_WORK` halve over the reader's horizon, the rest over
    the half-life: see there."""
    points = 0.2
    followed = 0.0
    why: list[Reason] = []
    for signal in SIGNALS:
        gained, reasons = signal(story, context)
        if signal in FOLLOWED_WORK:
            followed += gained
        else:
            points += gained
        why += reasons
    age = _age_hours(story.time, reference)
    slow = max(horizon_hours or 0.0, half_life_hours)
    story.score = points * 0.5 ** (age / half_life_hours) + followed * 0.5 ** (age / slow)
    read_at = states.get(story.key, (None, None))[0]
    if read_at and not _since(story, read_at):
        story.score *= 0.05
    if context.explain:
        _explain(story, why, states)


def _explain(
    story: Story, why: list[Reason], states: dict[str, tuple[str | None, str | None]]
) -> None:
    """The story's reasons: the signals' (``why``), then its read and saved state."""
    why.sort(key=lambda r: -r.weight)  # stable: equal weights keep the signals' order
    kept: dict[str, Reason] = {}
    for found in why:  # the same words twice are said once, where they weigh most
        kept.setdefault(found.text, found)
    story.reasons = list(kept.values()) or [
        reason("new on arXiv" if story.arxiv_id else f"new in {_source(story)}")
    ]
    if story.withdrawn:
        story.reasons.insert(0, reason("withdrawn by its authors"))
    read_at, saved_at = states.get(story.key, (None, None))
    if saved_at:
        story.reasons.append(reason(Part("saved", "/saved")))
    if read_at:
        news = _since(story, read_at)
        if news:  # something material happened: it comes back, saying what, once
            told = news.removeprefix(NEW_SINCE_READ)
            story.reasons = [r for r in story.reasons if r.text != told]
            story.reasons.insert(0, reason(news))
        else:
            story.reasons.append(reason("read"))


def _reasons_of(
    stories: list[Story], context: Context, states: dict[str, tuple[str | None, str | None]]
) -> None:
    """Reasons for the stories shown, their scores as they are (the lone items' share of
    :func:`_papers_first` included): the signals asked again, in words."""
    context.explain = True
    for story in stories:
        why: list[Reason] = []
        for signal in SIGNALS:
            why += signal(story, context)[1]
        _explain(story, why, states)


#: How a read story that comes back says why.
NEW_SINCE_READ = "new since you read it: "


def _since(story: Story, read_at: str) -> str | None:
    """What is material since the story was read: a followed scholar speaking, a new version."""
    if story.revision and story.revised_at and story.revised_at > read_at:
        return NEW_SINCE_READ + story.revision
    for item in story.items:
        if item.followed_scholar is not None and (item.published or "") > read_at:
            return NEW_SINCE_READ + "a scholar you follow posted about it"
    for item in story.items:
        if item.kind == "paper" and (item.published or "") > read_at:
            return NEW_SINCE_READ + "a new version"
    return None


def _apply_mutes(store: Store, reader: ReaderId, stories: list[Story]) -> list[Story]:
    """Muted scholars and sources say nothing; stories with a muted keyword are gone."""
    mutes: Mutes = store.mutes(reader)
    if not mutes:
        return stories
    kept = []
    for story in stories:
        title = story.title.lower()
        if any(word.lower() in title for word in mutes.keyword):
            continue
        story.items = [
            i
            for i in story.items
            if str(i.followed_scholar) not in mutes.scholar and str(i.source_id) not in mutes.source
        ]
        if story.items or story.arxiv_id:
            kept.append(story)
    return kept


def _source(story: Story) -> str:
    return story.items[0].source if story.items else "your sources"


def newest_stories(store: Store, reader: ReaderId, limit: int | None = 30) -> list[Story]:
    """Stories by most recent activity alone (no ranking), from the same candidates."""
    stories = gather_stories(store, reader)
    stories.sort(key=lambda s: (s.time or "", s.key), reverse=True)
    return stories[:limit]
