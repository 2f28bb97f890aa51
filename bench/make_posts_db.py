"""Build a post-heavy database for the page benchmark from an import database.

The import benchmark's database holds arXiv papers and nothing else, but the
page target ("under 100 ms of server time at 100,000 stories") is about a
library where most stories come from what people say about papers. This
script copies such a database and adds, through the store's real write path,
about 100,000 stories' worth of social content:

* followed scholars: their Bluesky account is followed with
  ``lightnews.ingest.follow.follow_account`` and, for most, their arXiv name with
  ``follow_scholar`` (which attributes their papers); each has a
  Bluesky source holding their author feed: posts, numbered self-threads,
  replies to other people, reposts and the pinned thread, with counts;
* unfollowed accounts (a few of them listing bots) read through a replayed
  paper feed (``app.bsky.feed.getFeed``, the way Paper Skygest is read);
* Hugging Face Daily Papers with upvotes, and blog and newsletter feeds whose
  articles name papers.

Posts, daily entries and articles are written as real response bodies
(getAuthorFeed and getFeed pages of 100 entries, daily-papers answers, JSON
Feed documents) and parsed by the real sources, then saved with
``SQLiteStore.save_batch``/``save_items``/``save_accounts``: the items,
accounts, mentions and thread links are what a refresh would have stored.
Papers are named by arXiv URL (abs or pdf, sometimes cut short in the text
with the whole URL in the facet), ``arXiv:ID`` or a Hugging Face link, chosen
among the papers of the database (recent ones mostly, a few hundred "hot"
papers much more often). Title linking (``link_titles``) is not run: every
mention is by identifier. Everything is drawn from one seeded generator, so
the same arguments give the same database.

    .venv/bin/python bench/make_posts_db.py --from bench/out/import-200000.db \\
        --out bench/out/posts-100000.db
"""

from __future__ import annotations

import argparse
import base64
import bisect
import html
import re
import sqlite3
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.ingest.follow import follow_account, follow_scholar  # noqa: E402
from lightnews.link.bots import bot_reason  # noqa: E402
from lightnews.model import SourceState  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.sources.bluesky import BlueskySource, account_from_profile  # noqa: E402
from lightnews.sources.feeds import FeedSource  # noqa: E402
from lightnews.sources.hf_daily import parse_daily_papers  # noqa: E402
from lightnews.store import LOCAL_READER, SQLiteStore  # noqa: E402

DAY = 86400.0
START = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
END = datetime(2025, 12, 29, 12, tzinfo=UTC).timestamp()
NOW = "2025-12-29T13:00:00Z"  # when everything was "fetched" (first_seen)
PAGE = 100  # entries per getAuthorFeed / getFeed page, as the source asks
HOT = 300  # papers that get far more posts than the rest
SKYGEST = "file:///data/paper-skygest.getFeed.json"
_B32 = "234567abcdefghijklmnopqrstuvwxyz"
_COUNT_FIELDS = ("likeCount", "repostCount", "replyCount", "quoteCount", "bookmarkCount")

CHATTER = (
    "Great discussion today about {topic}. Still thinking about it.",
    "Hot take: {topic} is underrated, and most benchmarks for it measure the wrong thing.",
    "Reviewing season again. So many submissions on {topic} this year.",
    "Our group is hiring a postdoc to work on {topic}. Get in touch if interested!",
    "Slides from my talk on {topic} are up on my website.",
    "Does anyone have a good reference for {topic}? Asking for a student.",
    "Teaching {topic} next term and rewriting the lecture notes from scratch.",
    "Travelling to the workshop on {topic} next week, happy to meet.",
    "A thread on what I learnt this year about {topic} is coming soon.",
    "Reading group this Friday: {topic}. Everyone welcome.",
)
SHARE = (
    "Interesting new paper: {title}",
    "Worth a read: {title}",
    "This is a neat result. {sentence}",
    "{title} - nice work by {author} et al.",
    "Really enjoyed this one: {sentence}",
    "Surprising finding: {sentence}",
    "Adding this to the reading list: {title}",
)
ANNOUNCE = (
    "New paper! {title}. {sentence}",
    "Excited to share our new preprint: {title}",
    "Our paper {title} is out. {sentence}",
    "New preprint with amazing coauthors: {title}",
)
THREAD_REPLY = (
    "{sentence}",
    "First, {sentence}",
    "The key observation: {sentence}",
    "We also find that {sentence}",
    "Limitations: {sentence}",
    "Thanks to everyone involved, and to the reviewers!",
)
REPLY = (
    "Great work, congrats!",
    "Very cool. How does this compare with the earlier results on {topic}?",
    "We saw something similar in our experiments on {topic}.",
    "Nice! Is the code available?",
    "I am not sure I agree with the framing, but the experiments are convincing.",
    "See also our related work: {link}",
)


def iso(ts: float, ms: bool = True) -> str:
    moment = datetime.fromtimestamp(ts, UTC)
    if ms:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def slug(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower()) or "scholar"


@dataclass(slots=True)
class PaperRef:
    id: int
    arxiv_id: str
    title: str
    abstract: str
    published: float
    category: str
    first_author: str

    def sentence(self) -> str:
        first = re.split(r"(?<=[.!?])\s", self.abstract, maxsplit=1)[0].strip()
        first = first or self.title
        return first[:200].rstrip() + ("..." if len(first) > 200 else "")


@dataclass(slots=True)
class Person:
    did: str
    handle: str
    name: str
    created: float
    followed: bool = False
    bot: bool = False
    category: str = ""
    arxiv_name: str | None = None
    own: list[int] = field(default_factory=list)
    budget: int = 0
    reposts: int = 0
    entries: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    @property
    def view(self) -> dict[str, Any]:
        return {
            "did": self.did,
            "handle": self.handle,
            "displayName": self.name,
            "avatar": f"https://cdn.bsky.app/img/avatar/plain/{self.did}/bafkrei{slug(self.handle)[:20]}@jpeg",
            "labels": [],
            "createdAt": iso(self.created),
        }


@dataclass(slots=True)
class Post:
    uri: str
    cid: str
    author: Person
    time: float
    view: dict[str, Any]
    papers: list[int]


class World:
    """The generator: papers to talk about, people, and what they post."""

    def __init__(self, store: SQLiteStore, seed: int) -> None:
        self.rng = Random(seed)
        self.store = store
        self.papers = [
            PaperRef(r[0], r[1], r[2], (r[3] or "")[:400], stamp(r[4]), r[5] or "", r[6] or "")
            for r in store.db.execute(
                "SELECT id, arxiv_id, title, substr(abstract, 1, 400), published, "
                "primary_category, substr(authors, 1, instr(authors || ',', ',') - 1) "
                "FROM papers WHERE content_hash IS NOT NULL AND published IS NOT NULL ORDER BY id"
            )
        ]
        self.by_id = {p.id: n for n, p in enumerate(self.papers)}
        # The snapshot is a sample of arXiv: recent enough to be talked about reaches back.
        recent_from = stamp("2018-01-01T00:00:00Z")
        self.recent = [n for n, p in enumerate(self.papers) if p.published >= recent_from]
        hot_from = stamp("2025-09-01T00:00:00Z")
        candidates = [n for n, p in enumerate(self.papers) if p.published >= hot_from]
        self.hot = self.rng.sample(candidates, min(HOT, len(candidates)))
        weights = [1.0 / (rank + 1) for rank in range(len(self.hot))]
        self.hot_cum = [sum(weights[: k + 1]) for k in range(len(weights))]
        self.by_category: dict[str, list[int]] = {}
        for n in self.recent:
            self.by_category.setdefault(self.papers[n].category, []).append(n)
        self.handles: set[str] = set()
        self.uris: set[str] = set()
        self.people: list[Person] = []
        self.roots: list[Post] = []  # top-level posts naming papers: what gets reposted
        self.thread_roots: set[str] = set()
        self.posts: list[Post] = []
        self.replies: set[str] = set()  # URIs of posts that reply to another
        self.followed: list[Person] = []
        self.unfollowed: list[Person] = []

    # -- small random things ---------------------------------------------------------

    def token(self, bits: int, length: int) -> str:
        raw = self.rng.getrandbits(bits).to_bytes((bits + 7) // 8, "big")
        return base64.b32encode(raw).decode().lower().rstrip("=")[:length]

    def did(self) -> str:
        return "did:plc:" + self.token(120, 24)

    def tid(self, ts: float) -> str:
        value = (int(ts * 1_000_000) << 10) | self.rng.getrandbits(10)
        chars = []
        for _ in range(13):
            chars.append(_B32[value & 31])
            value >>= 5
        return "".join(reversed(chars))

    def handle(self, name: str) -> str:
        base = slug(name)[:24]
        handle = f"{base}.bsky.social"
        while handle in self.handles:
            handle = f"{base}{self.rng.randint(2, 999)}.bsky.social"
        self.handles.add(handle)
        return handle

    def paper(self) -> int:
        """A paper to talk about: hot ones often, recent ones mostly, any sometimes."""
        roll = self.rng.random()
        if roll < 0.04 and self.hot:
            target = self.rng.random() * self.hot_cum[-1]
            return self.hot[min(bisect.bisect(self.hot_cum, target), len(self.hot) - 1)]
        if roll < 0.80:
            return self.rng.choice(self.recent)
        return self.rng.randrange(len(self.papers))

    def papers_for_post(self, first: int | None = None) -> list[int]:
        count = self.rng.choices((1, 2, 3), (78, 15, 7))[0]
        chosen = [first if first is not None else self.paper()]
        while len(chosen) < count:
            extra = self.paper()
            if extra not in chosen:
                chosen.append(extra)
        return chosen

    def time_after(self, papers: list[int], floor: float = START) -> float:
        """When someone posts about these papers: days after the newest appeared."""
        base = max([floor] + [self.papers[n].published for n in papers])
        if base >= END:
            return END - self.rng.uniform(0, 3600)
        if max(self.papers[n].published for n in papers) < START - 365 * DAY:
            return self.rng.uniform(base, END)  # an older paper: any time
        moment = base + self.rng.expovariate(1 / (6 * DAY))
        return moment if moment < END else self.rng.uniform(base, END)

    def counts(self, mu: float) -> dict[str, int]:
        likes = int(self.rng.lognormvariate(mu, 1.2))
        return {
            "likeCount": likes,
            "repostCount": int(likes * self.rng.uniform(0.05, 0.3)),
            "replyCount": int(likes * self.rng.uniform(0.02, 0.12)),
            "quoteCount": int(likes * self.rng.uniform(0.0, 0.05)),
            "bookmarkCount": int(likes * self.rng.uniform(0.0, 0.15)),
        }

    def link(self, n: int) -> tuple[str, str | None]:
        """How a post names paper ``n``: (visible text, facet URL or None)."""
        arxiv_id = self.papers[n].arxiv_id
        roll = self.rng.random()
        if roll < 0.10:
            return f"arXiv:{arxiv_id}", None
        if roll < 0.20:
            url = f"https://huggingface.co/papers/{arxiv_id}"
        elif roll < 0.30:
            url = f"https://arxiv.org/pdf/{arxiv_id}"
        else:
            url = f"https://arxiv.org/abs/{arxiv_id}"
        shown = url.removeprefix("https://")
        if len(shown) > 24 and self.rng.random() < 0.5:
            shown = shown[:23] + "..."  # the app cuts long links; the facet keeps them whole
        return shown, url

    def topic(self) -> str:
        words = re.findall(
            r"[A-Za-z][A-Za-z-]{3,}", self.papers[self.rng.choice(self.recent)].title
        )
        start = self.rng.randrange(max(1, len(words) - 2)) if words else 0
        return " ".join(words[start : start + self.rng.randint(1, 3)]).lower() or "learning"

    # -- posts -------------------------------------------------------------------------

    def post(
        self,
        author: Person,
        ts: float,
        pieces: list[tuple[str, str | None]],
        papers: list[int],
        mu: float,
        reply: tuple[Post, Post] | None = None,
        card: int | None = None,
    ) -> Post:
        """A postView: the text with link facets (byte offsets), a card, a reply reference."""
        text = ""
        facets = []
        for piece, url in pieces:
            start = len(text.encode())
            text += piece
            if url:
                facets.append(
                    {
                        "$type": "app.bsky.richtext.facet",
                        "index": {"byteStart": start, "byteEnd": len(text.encode())},
                        "features": [{"$type": "app.bsky.richtext.facet#link", "uri": url}],
                    }
                )
        rkey = self.tid(ts)
        while f"at://{author.did}/app.bsky.feed.post/{rkey}" in self.uris:
            rkey = self.tid(ts)
        uri = f"at://{author.did}/app.bsky.feed.post/{rkey}"
        self.uris.add(uri)
        cid = "bafyrei" + self.token(260, 52)
        record: dict[str, Any] = {
            "$type": "app.bsky.feed.post",
            "createdAt": iso(ts),
            "langs": ["en"],
            "text": text,
        }
        if facets:
            record["facets"] = facets
        view: dict[str, Any] = {"uri": uri, "cid": cid, "author": author.view, "record": record}
        if card is not None:
            paper = self.papers[card]
            external = {
                "uri": f"https://arxiv.org/abs/{paper.arxiv_id}",
                "title": paper.title,
                "description": paper.abstract[:200] + ("..." if len(paper.abstract) > 200 else ""),
            }
            record["embed"] = {"$type": "app.bsky.embed.external", "external": external}
            view["embed"] = {"$type": "app.bsky.embed.external#view", "external": external}
        if reply is not None:
            root, parent = reply
            record["reply"] = {
                "root": {"uri": root.uri, "cid": root.cid},
                "parent": {"uri": parent.uri, "cid": parent.cid},
            }
        view.update(self.counts(mu))
        view["indexedAt"] = iso(ts + 0.6)
        view["labels"] = []
        post = Post(uri, cid, author, ts, view, papers)
        self.posts.append(post)
        if reply is not None:
            self.replies.add(uri)
        return post

    def entry(self, owner: Person, post: Post, reply: tuple[Post, Post] | None = None) -> None:
        entry: dict[str, Any] = {"post": post.view}
        if reply is not None:
            entry["reply"] = {
                end: {
                    "$type": "app.bsky.feed.defs#postView",
                    "uri": p.uri,
                    "cid": p.cid,
                    "author": p.author.view,
                    "record": p.view["record"],
                }
                for end, p in (("root", reply[0]), ("parent", reply[1]))
            }
        owner.entries.append((post.time, entry))

    def paper_pieces(self, papers: list[int], lead: str) -> list[tuple[str, str | None]]:
        pieces: list[tuple[str, str | None]] = [(lead, None)]
        for n in papers:
            pieces.append(("\n" if len(papers) == 1 else "\n- ", None))
            pieces.append(self.link(n))
        return pieces

    def paper_post(self, person: Person, mu: float, own: bool = False) -> Post:
        first = self.rng.choice(person.own) if own and person.own else None
        if person.bot:  # a listing bot announces one new paper of its category
            papers = [self.rng.choice(self.by_category[person.category])]
        else:
            papers = self.papers_for_post(first)
        ts = self.time_after(papers, max(START, person.created))
        paper = self.papers[papers[0]]
        if person.bot:
            lead = f"{paper.title} [{paper.category}]"
        else:
            template = self.rng.choice(ANNOUNCE if first is not None else SHARE)
            surname = paper.first_author.split(" ")[-1] or "the authors"
            lead = template.format(title=paper.title, sentence=paper.sentence(), author=surname)
            if len(papers) > 1:
                lead = f"{len(papers)} papers on {self.topic()} I liked this week:"
        card = papers[0] if len(papers) == 1 and self.rng.random() < 0.6 else None
        post = self.post(person, ts, self.paper_pieces(papers, lead[:220]), papers, mu, card=card)
        self.roots.append(post)
        return post

    def thread(self, person: Person, replies: int, mu: float) -> int:
        """A numbered self-thread: a root naming papers, then replies to itself."""
        root = self.paper_post(person, mu, own=self.rng.random() < 0.5)
        self.entry(person, root)
        self.thread_roots.add(root.uri)
        total = replies + 1
        style = self.rng.choice(("🧵{i}/{n}", "[{i}/{n}]", "{i}/", ""))
        paper = self.papers[root.papers[0]]
        parent = root
        for i in range(2, total + 1):
            ts = min(parent.time + self.rng.uniform(20, 240), END)
            text = self.rng.choice(THREAD_REPLY).format(sentence=paper.sentence()).strip()
            pieces: list[tuple[str, str | None]] = [(text[:240], None)]
            papers: list[int] = []
            if i == total and self.rng.random() < 0.15:
                repo = f"github.com/{slug(person.name)[:12]}/{slug(paper.title)[:16]}"
                pieces.append((f"\nCode: {repo}", f"https://{repo}"))
            elif self.rng.random() < 0.08:  # citing related work inside the thread
                papers = [self.paper()]
                pieces.append(("\nRelated: ", None))
                pieces.append(self.link(papers[0]))
            if style:
                pieces.append((" " + style.format(i=i, n=total), None))
            post = self.post(person, ts, pieces, papers, mu - 1.0, reply=(root, parent))
            self.entry(person, post, (root, parent))
            parent = post
        return total

    def chatter(self, person: Person, mu: float) -> None:
        ts = self.rng.uniform(max(START, person.created), END)
        text = self.rng.choice(CHATTER).format(topic=self.topic())
        self.entry(person, self.post(person, ts, [(text, None)], [], mu - 0.5))

    def reply_to_other(self, person: Person, mu: float) -> None:
        target = self.rng.choice(self.roots) if self.roots else None
        if target is None or target.author is person:
            return self.chatter(person, mu)
        ts = min(target.time + self.rng.expovariate(1 / (6 * 3600)), END)
        template = self.rng.choice(REPLY)
        papers: list[int] = []
        pieces: list[tuple[str, str | None]]
        if "{link}" in template:
            papers = [self.paper()]
            shown, url = self.link(papers[0])
            pieces = [(template.split("{link}")[0], None), (shown, url)]
        else:
            pieces = [(template.format(topic=self.topic()), None)]
        post = self.post(person, ts, pieces, papers, mu - 1.5, reply=(target, target))
        self.entry(person, post, (target, target))

    # -- people ---------------------------------------------------------------------------

    def names(self, count: int, exclude: set[str]) -> list[str]:
        rows = self.store.db.execute(
            "SELECT name FROM authorships WHERE position = 0 ORDER BY paper_id LIMIT ?",
            (count * 8,),
        )
        pool = sorted({r[0] for r in rows if self.good_name(r[0])} - exclude)
        return self.rng.sample(pool, min(count, len(pool)))

    @staticmethod
    def good_name(name: str) -> bool:
        parts = name.split()
        return (
            len(parts) >= 2
            and len(parts[0]) >= 3
            and "." not in name
            and name != "et al"
            and all(p[:1].isupper() for p in parts)
        )

    def budgets(self, people: list[Person], total: int, floor: int, power: float) -> None:
        weights = [1.0 / (rank + 1) ** power for rank in range(len(people))]
        spare = max(0, total - floor * len(people))
        for person, weight in zip(people, weights, strict=True):
            person.budget = floor + int(spare * weight / sum(weights))

    def make_people(self, scholars: int, accounts: int, bots: int) -> None:
        rows = self.store.db.execute(
            "SELECT a.name, count(*) AS n FROM authorships a JOIN papers p ON p.id = a.paper_id "
            "WHERE p.published >= '2023' GROUP BY a.name HAVING n >= 2 ORDER BY n DESC, a.name "
            "LIMIT 2000"
        ).fetchall()
        prolific = [r[0] for r in rows if self.good_name(r[0])][: scholars * 2]
        with_names = self.rng.sample(prolific, min(len(prolific), scholars * 85 // 100))
        others = self.names(scholars + accounts, set(with_names))
        followed_names = with_names + others[: scholars - len(with_names)]
        self.rng.shuffle(followed_names)
        created = (stamp("2023-04-01T00:00:00Z"), stamp("2025-06-01T00:00:00Z"))
        for name in followed_names:
            arxiv_name = name if name in with_names else None
            person = Person(
                self.did(),
                self.handle(name),
                name,
                self.rng.uniform(*created),
                followed=True,
                arxiv_name=arxiv_name,
            )
            self.people.append(person)
        categories = sorted(self.by_category, key=lambda c: (-len(self.by_category[c]), c))
        for n, name in enumerate(others[scholars - len(with_names) :][:accounts]):
            person = Person(self.did(), self.handle(name), name, self.rng.uniform(*created))
            if n < bots and categories:
                person.bot = True
                person.category = categories[n % len(categories)]
                person.name = f"{person.category} arXiv bot"
                person.handle = self.handle(f"arxiv-{person.category}-bot")
            self.people.append(person)
        self.followed = [p for p in self.people if p.followed]
        self.unfollowed = [p for p in self.people if not p.followed]
        self.rng.shuffle(self.unfollowed)  # bots anywhere in the ranking

    def own_papers(self, person: Person) -> None:
        rows = self.store.db.execute(
            "SELECT paper_id FROM authorships WHERE name = ? ORDER BY paper_id", (person.name,)
        )
        person.own = [self.by_id[r[0]] for r in rows if r[0] in self.by_id]

    # -- whole feeds ------------------------------------------------------------------------

    def write_unfollowed(self, person: Person) -> None:
        made = 0
        while made < person.budget:
            if not person.bot and self.rng.random() < 0.15:
                made += self.thread(person, self.rng.randint(1, 3), 1.8)
            else:
                self.entry(person, self.paper_post(person, 0.3 if person.bot else 1.8))
                made += 1

    def write_followed(self, person: Person) -> None:
        made = 0
        while made < person.budget:
            roll = self.rng.random()
            if roll < 0.10:
                person.reposts += 1
                made += 1
            elif roll < 0.22:
                replies = min(1 + int(self.rng.expovariate(1 / 3.5)), 14)
                made += self.thread(person, max(1, min(replies, person.budget - made - 1)), 2.8)
            elif roll < 0.38:
                self.entry(person, self.paper_post(person, 2.8, own=self.rng.random() < 0.3))
                made += 1
            elif roll < 0.86:
                self.chatter(person, 2.8)
                made += 1
            else:
                self.reply_to_other(person, 2.8)
                made += 1

    def write_reposts(self, person: Person) -> None:
        for _ in range(person.reposts):
            target = self.rng.choice(self.roots)
            while target.author is person:
                target = self.rng.choice(self.roots)
            ts = target.time + self.rng.expovariate(1 / DAY)
            if ts >= END:
                ts = self.rng.uniform(target.time, END)
            by = {k: person.view[k] for k in ("did", "handle", "displayName", "avatar")}
            reason = {"$type": "app.bsky.feed.defs#reasonRepost", "by": by, "indexedAt": iso(ts)}
            person.entries.append((ts, {"post": target.view, "reason": reason}))

    def plan(self) -> str:
        """What was drawn, before saving: posts, reposts, papers named, lone posts."""
        posts = [e["post"] for p in self.people for _, e in p.entries if "reason" not in e]
        reposts = sum(p.reposts for p in self.people)
        named = {n for post in self.posts for n in post.papers}
        lone = sum(1 for post in self.posts if not post.papers and post.uri not in self.replies)
        return (
            f"{len(posts):,} posts and {reposts:,} reposts drawn for {len(self.people):,} "
            f"accounts: {len(named):,} distinct papers named, {lone:,} posts naming none "
            "outside a thread"
        )

    def pinned(self, person: Person) -> dict[str, Any] | None:
        roots = [
            e
            for _, e in person.entries
            if "reply" not in e and "reason" not in e and e["post"]["uri"] in self.thread_roots
        ]
        if not roots:
            return None
        return max(roots, key=lambda e: e["post"]["likeCount"])["post"]


class Saver:
    """Parses response bodies with the real sources and saves what they give."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.settings = Settings(environ={}).with_overrides(resolve_online=False)
        self.started = time.perf_counter()
        self.entries = 0
        self.next_report = 0

    def progress(self, message: str) -> None:
        print(f"[{time.perf_counter() - self.started:7.1f} s] {message}", flush=True)

    def feed(
        self,
        source_id: int,
        address: str,
        entries: list[dict[str, Any]],
        pinned: dict[str, Any] | None = None,
    ) -> None:
        """Save a feed as the source reads it: newest first, pages of ``PAGE`` entries."""
        source = BlueskySource(address, {}, self.settings)
        state = SourceState(extra={"pinned": pinned["uri"]} if pinned else {})
        if pinned:
            entries = [
                {"post": pinned, "reason": {"$type": "app.bsky.feed.defs#reasonPin"}},
                *entries,
            ]
        for start in range(0, len(entries), PAGE):
            body = orjson.dumps({"feed": entries[start : start + PAGE], "cursor": f"c{start}"})
            batch = source.parse(body, state)
            with self.store.transaction():
                self.store.save_batch(source_id, batch, NOW)
                self.store.save_accounts(batch.accounts, NOW)
            self.entries += len(batch.items)
            if self.entries >= self.next_report:
                self.progress(f"{self.entries:,} feed entries saved")
                self.next_report += 10_000


def sorted_entries(entries: list[tuple[float, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [e for _, e in sorted(entries, key=lambda pair: pair[0], reverse=True)]


def copy_database(source: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    origin = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    copy = sqlite3.connect(str(target))
    with copy:
        origin.backup(copy)
    origin.close()
    copy.close()


def daily_papers(world: World, store: SQLiteStore, saver: Saver) -> int:
    """Hugging Face Daily Papers, every weekday of the last four months, with upvotes."""
    rng = world.rng
    source, _ = store.add_source("hf-daily", "", now=NOW, title="Hugging Face Daily Papers")
    hot = set(world.hot[:60])
    day = datetime(2025, 9, 1, tzinfo=UTC)
    last = datetime.fromtimestamp(END, UTC)
    recent = sorted(world.recent, key=lambda n: world.papers[n].published)
    times = [world.papers[n].published for n in recent]
    used: set[int] = set()
    saved = 0
    while day <= last:
        if day.weekday() < 5:
            begin, end = (day - timedelta(days=4)).timestamp(), day.timestamp()
            window = recent[bisect.bisect(times, begin) : bisect.bisect(times, end)]
            fresh = [n for n in window if n not in used]
            picked = rng.sample(fresh, min(len(fresh), rng.randint(25, 50)))
            picked += [n for n in window if n in hot and n not in picked and n not in used]
            entries = []
            for n in picked:
                used.add(n)
                paper = world.papers[n]
                upvotes = int(rng.lognormvariate(2.3, 1.1)) * (6 if n in hot else 1)
                user = slug(paper.first_author)[:12] or "reader"
                github = rng.random() < 0.4
                entries.append(
                    {
                        "paper": {
                            "id": paper.arxiv_id,
                            "title": paper.title,
                            "summary": paper.abstract,
                            "authors": [{"name": paper.first_author}] if paper.first_author else [],
                            "publishedAt": iso(paper.published),
                            "upvotes": upvotes,
                            "submittedOnDailyAt": iso(day.timestamp() + rng.uniform(6, 20) * 3600),
                            "ai_summary": paper.sentence(),
                            "ai_keywords": world.topic().split(),
                            "githubRepo": f"https://github.com/{user}/{slug(paper.title)[:16]}"
                            if github
                            else None,
                            "githubStars": rng.randint(0, 3000) if github else None,
                        },
                        "publishedAt": iso(paper.published),
                        "title": paper.title,
                        "numComments": rng.randint(0, 6),
                        "submittedBy": {
                            "_id": world.token(96, 24),
                            "name": user,
                            "fullname": paper.first_author,
                            "followerCount": rng.randint(0, 900),
                        },
                        "isAuthorParticipating": rng.random() < 0.3,
                    }
                )
            batch, _ = parse_daily_papers(orjson.dumps(entries), day.date().isoformat())
            # The papers are stored already, with arXiv's fuller metadata: items only.
            saved += store.save_items(source.id, batch.items, NOW).items_new
        day += timedelta(days=1)
    saver.progress(f"{saved:,} daily-papers entries saved")
    return saved


def blog_feeds(world: World, store: SQLiteStore, saver: Saver, feeds: int) -> int:
    """Lab blogs (an article names 1-3 papers) and weekly newsletters (8-30 papers)."""
    rng = world.rng
    saved = 0
    for f in range(feeds):
        newsletter = f % 4 == 0
        name = f"{world.topic().title()} {'Weekly' if newsletter else 'Lab Blog'} {f}"
        address = f"https://{slug(name)}.example.org/feed.json"
        source, _ = store.add_source(
            "feed", address, now=NOW, title=name, folder="Newsletters" if newsletter else "Blogs"
        )
        items = []
        for a in range(100 if newsletter else 60):
            papers = world.papers_for_post()
            if newsletter:
                papers = list(dict.fromkeys(world.paper() for _ in range(rng.randint(8, 30))))
            ts = world.time_after(papers)
            body = []
            for n in papers:
                paper = world.papers[n]
                body.append(
                    f'<p><a href="https://arxiv.org/abs/{paper.arxiv_id}">'
                    f"{html.escape(paper.title)}</a>: {html.escape(paper.sentence())}</p>"
                )
            url = f"https://{slug(name)}.example.org/posts/{a}"
            items.append(
                {
                    "id": url,
                    "url": url,
                    "title": f"Notes on {world.topic()}" if not newsletter else f"{name} #{a + 1}",
                    "content_html": f"<p>{rng.choice(CHATTER).format(topic=world.topic())}</p>"
                    + "".join(body),
                    "date_published": iso(ts, ms=False),
                    "authors": [{"name": world.papers[papers[0]].first_author or name}],
                    "tags": [world.topic()],
                }
            )
        document = {
            "version": "https://jsonfeed.org/version/1.1",
            "title": name,
            "home_page_url": address.rsplit("/", 1)[0],
            "items": items,
        }
        source_reader = FeedSource(address, {}, saver.settings)
        batch = source_reader.parse(orjson.dumps(document), SourceState(), url=address)
        saved += store.save_items(source.id, batch.items, NOW).items_new
    saver.progress(f"{saved:,} articles saved from {feeds} feeds")
    return saved


def story_count(store: SQLiteStore) -> tuple[int, int, int]:
    """Stories as the feed groups them: papers named or recorded, and items naming none.

    A post with no paper of its own joins its thread's papers (as ``gather_stories``
    does); any other item that names no paper is a story of its own.
    """
    named: dict[int, set[int]] = {}
    for item_id, paper_id in store.db.execute("SELECT item_id, paper_id FROM mentions"):
        named.setdefault(item_id, set()).add(paper_id)
    for item_id, paper_id in store.db.execute(
        "SELECT id, paper_id FROM items WHERE paper_id IS NOT NULL"
    ):
        named.setdefault(item_id, set()).add(paper_id)
    rows = store.db.execute("SELECT id, key, kind, thread_root FROM items").fetchall()
    threads = {r[3] or r[1] for r in rows if r[0] in named}
    papers = {p for found in named.values() for p in found}
    lone = sum(1 for r in rows if r[0] not in named and not (r[2] == "post" and r[3] in threads))
    return len(papers) + lone, len(papers), lone


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scholars", type=int, default=200, help="followed scholars")
    parser.add_argument("--accounts", type=int, default=1500, help="unfollowed accounts")
    parser.add_argument("--bots", type=int, default=20, help="of the unfollowed, listing bots")
    parser.add_argument("--posts", type=int, default=150_000, help="Bluesky posts, about")
    parser.add_argument("--feeds", type=int, default=24, help="blog and newsletter feeds")
    parser.add_argument("--dry-run", action="store_true", help="draw the posts, save nothing")
    args = parser.parse_args()
    if args.source.resolve() == args.out.resolve():
        parser.error("--out must differ from --from (the import database stays as it is)")

    started = time.perf_counter()
    copy_database(args.source, args.out)
    print(f"copied {args.source} to {args.out} in {time.perf_counter() - started:.1f} s")
    with SQLiteStore(args.out) as store:
        saver = Saver(store)
        world = World(store, args.seed)
        saver.progress(f"{len(world.papers):,} papers loaded, {len(world.recent):,} since 2018")

        world.make_people(args.scholars, args.accounts, args.bots)
        world.budgets(world.followed, args.posts * 60 // 100, 40, 0.75)
        world.budgets(world.unfollowed, args.posts * 40 // 100, 15, 0.8)
        for person in world.followed:
            if person.arxiv_name:
                world.own_papers(person)
        for person in world.unfollowed:
            world.write_unfollowed(person)
        for person in world.followed:
            world.write_followed(person)
        for person in world.followed:
            world.write_reposts(person)
        saver.progress(world.plan())
        if args.dry_run:
            return

        # Followed scholars: profile, follow (account and arXiv name), their author feed.
        for person in world.followed:
            pinned = world.pinned(person)
            own = [e for _, e in person.entries if "reason" not in e]
            profile = {
                **person.view,
                "description": f"Researcher. Posts about {world.topic()}.",
                "followersCount": int(world.rng.lognormvariate(6.5, 1.2)),
                "followsCount": world.rng.randint(50, 1500),
                "postsCount": len(own) + world.rng.randint(0, 2000),
                "indexedAt": iso(END),
            }
            if pinned:
                profile["pinnedPost"] = {"uri": pinned["uri"], "cid": pinned["cid"]}
            account = account_from_profile(profile)
            store.save_accounts([account], NOW)
            scholar_id = follow_account(store, LOCAL_READER, account, NOW)
            if person.arxiv_name:
                follow_scholar(
                    store, LOCAL_READER, NOW, arxiv_author=person.arxiv_name, scholar_id=scholar_id
                )
            row = store.find_source("bluesky", person.handle)
            assert row is not None
            saver.feed(row.id, person.handle, sorted_entries(person.entries), pinned)
        saver.progress(f"{len(world.followed)} followed scholars saved")

        # Everyone else, through a replayed paper feed; it carries followed scholars'
        # paper posts too (the same post under a second source, as in real life).
        skygest, _ = store.add_source(
            "bluesky", SKYGEST, now=NOW, title="Paper Skygest (replayed feed)"
        )
        carried = [pair for p in world.unfollowed for pair in p.entries]
        carried += [
            (t, {"post": e["post"]})
            for p in world.followed
            for t, e in p.entries
            if "reason" not in e
            and "reply" not in e
            and world.rng.random() < 0.3
            and e["post"]["record"].get("facets")
        ]
        saver.feed(skygest.id, SKYGEST, sorted_entries(carried))
        saver.progress("paper feed saved")

        daily_papers(world, store, saver)
        blog_feeds(world, store, saver, args.feeds)

        # As the pipeline does after every page: accounts that only post listings are bots.
        marked = 0
        for account_id in sorted(r[0] for r in store.db.execute("SELECT id FROM accounts")):
            account = store.get_account("bluesky", account_id)
            assert account is not None
            reason = bot_reason(account, store.account_items([account_id], limit=50))
            if reason:
                store.mark_bot("bluesky", account_id, reason)
                marked += 1
        saver.progress(f"{marked} accounts marked as bots")

        counts = store.counts()
        kinds = Counter(dict(store.db.execute("SELECT kind, count(*) FROM items GROUP BY kind")))
        stories, papers_named, lone = story_count(store)
        top_paper = store.db.execute(
            "SELECT p.arxiv_id, count(*) FROM mentions m JOIN papers p ON p.id = m.paper_id "
            "GROUP BY m.paper_id ORDER BY count(*) DESC, p.arxiv_id LIMIT 1"
        ).fetchone()
        busiest = store.db.execute(
            "SELECT sc.id, sc.name, count(*) FROM items i JOIN sources s ON s.id = i.source_id "
            "JOIN scholars sc ON sc.id = s.scholar_id WHERE s.kind = 'bluesky' "
            "GROUP BY sc.id ORDER BY count(*) DESC, sc.id LIMIT 1"
        ).fetchone()
        accounts = store.db.execute("SELECT count(*), sum(bot) FROM accounts").fetchone()
        followed = store.db.execute("SELECT count(DISTINCT scholar_id) FROM follows").fetchone()
        print(
            f"\n## {args.out} (seed {args.seed}), built in {time.perf_counter() - started:,.0f} s\n"
        )
        print(f"- papers: {store.paper_count():,} ({counts['stubs']:,} stubs)")
        print(
            f"- items: {counts['items']:,} ("
            + ", ".join(f"{k} {v:,}" for k, v in kinds.most_common())
            + ")"
        )
        print(f"- mentions: {counts['mentions']:,}, of {papers_named:,} distinct papers")
        print(
            f"- distinct stories with social content: {stories:,} ({papers_named:,} papers "
            f"named or recorded + {lone:,} items naming none)"
        )
        print(
            f"- accounts: {accounts[0]:,} ({accounts[1] or 0} bots); scholars: "
            f"{counts['scholars']:,} ({followed[0]} followed); "
            f"sources: {counts['sources']:,}"
        )
        print(f"- most-mentioned paper: {top_paper[0]} ({top_paper[1]:,} mentions)")
        print(
            f"- busiest followed scholar: {busiest[0]} {busiest[1]!r} ({busiest[2]:,} feed items)"
        )
        print(f"- size: {args.out.stat().st_size / 1e6:,.0f} MB")


if __name__ == "__main__":
    main()
