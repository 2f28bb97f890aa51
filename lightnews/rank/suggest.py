"""Follow suggestions: accounts the reader's circle points at, each with who and how many.

Lightnews is as good as the scholars a reader follows, and the best guide to
whom else to follow is what those scholars do and what the reader keeps. An
account is suggested for what the store has seen:

* the scholars the reader follows reposted, quoted or replied to it (their own
  feeds, and what ``lightnews listen`` heard on the network);
* scholars the reader follows follow it (the follow graph);
* it is a co-author of papers by scholars the reader follows, or an author of
  papers the reader saved, with its Bluesky account known (a scholar's
  identity, or one account with exactly that display name);
* it discussed papers the reader saved (network posts about them).

Accounts the reader already follows or muted (by DID, handle, or a followed
scholar's name) are left out, and so are bots, mirrors and listing accounts
(the listener's classification, :mod:`lightnews.link.bots`). Each suggestion
carries typed :class:`SuggestionReason` values saying who and how many
("reposted 4 times by A and B you follow", "co-author of 3 papers you saved"),
ordered by what they weigh. A plain function over what the store gives; no
I/O of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from lightnews.normalize.names import fold
from lightnews.rank import Part, Reason, reason
from lightnews.sources import all_traits, network
from lightnews.store import Store
from lightnews.store.readers import ReaderId
from lightnews.store.views import AccountView, ScholarRef

__all__ = [
    "KINDS",
    "Suggestion",
    "SuggestionReason",
    "follow_suggestions",
]

#: What each kind of evidence weighs, per occurrence (repost, quote...) or per paper.
KINDS: dict[str, float] = {
    "follow": 2.0,  # a followed scholar follows it
    "coauthor": 2.0,  # per paper shared with a followed scholar
    "quote": 1.5,
    "saved-author": 1.5,  # per saved paper it wrote
    "repost": 1.0,
    "discussed": 1.0,  # per saved paper it posted about
    "reply": 0.75,
}
#: Newest items of the followed scholars read for what they shared.
ITEMS = 2_000
#: More occurrences of one kind than this count no more (one fan is not ten voices).
CAP = 10
#: Scholars named in a reason; the rest are counted ("A, B, C and 7 others").
NAMED = 3
#: Candidates kept for the account lookups and reasons, per suggestion asked for (the
#: rest, ranked lower by their evidence alone, could not reach the list).
KEEP = 5


@dataclass(frozen=True, slots=True)
class SuggestionReason:
    """One reason to follow: what happened (``kind``), how often, by whom, about what."""

    kind: str
    count: int
    #: The scholars the reader follows who did it (empty for the reader's own saves).
    by: tuple[ScholarRef, ...] = ()
    #: The papers it is about (co-authored, saved, discussed), newest first.
    papers: tuple[str, ...] = ()

    @property
    def weight(self) -> float:
        return KINDS[self.kind] * min(self.count, CAP)

    @property
    def reason(self) -> Reason:
        """The words, with each scholar and paper linked to its page."""
        who = [Part(s.name, f"/scholar/{s.id}") for s in self.by[:NAMED]]
        if len(self.by) > NAMED:
            who.append(Part(f"{len(self.by) - NAMED} others"))
        times = "once" if self.count == 1 else f"{self.count} times"
        papers = f"{self.count} paper{'' if self.count == 1 else 's'}"
        if self.kind in ("repost", "quote", "reply"):
            verb = {"repost": "reposted", "quote": "quoted", "reply": "replied to"}[self.kind]
            return reason(f"{verb} {times} by ", who, " you follow", weight=self.weight)
        if self.kind == "follow":
            return reason("followed by ", who, " you follow", weight=self.weight)
        if self.kind == "coauthor":
            return reason(f"co-author of {papers} with ", who, " you follow", weight=self.weight)
        linked = [Part(p, f"/paper/{p}") for p in self.papers[:3]]
        more = f" and {len(self.papers) - 3} more" if len(self.papers) > 3 else ""
        if self.kind == "saved-author":
            return reason(f"author of {papers} you saved (", linked, more, ")", weight=self.weight)
        return reason(f"discussed {papers} you saved (", linked, more, ")", weight=self.weight)

    @property
    def text(self) -> str:
        return self.reason.text

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "text": self.text,
            "by": [{"id": s.id, "name": s.name} for s in self.by],
            "papers": list(self.papers),
            "weight": round(self.weight, 3),
        }


@dataclass(frozen=True, slots=True)
class Suggestion:
    """An account to follow, with why. ``scholar_id`` when it is a known scholar already."""

    did: str
    handle: str
    name: str
    followers: int | None
    scholar_id: int | None
    score: float
    reasons: tuple[SuggestionReason, ...]

    @property
    def follow_as(self) -> str:
        """What the follow form and ``lightnews follow`` take: the handle, else the DID."""
        return self.handle or self.did

    @property
    def label(self) -> str:
        return self.name or (f"@{self.handle}" if self.handle else self.did)

    @property
    def profile(self) -> str:
        return f"https://bsky.app/profile/{self.handle or self.did}"

    def to_json(self) -> dict[str, Any]:
        return {
            "did": self.did or None,
            "handle": self.handle or None,
            "name": self.name,
            "followers": self.followers,
            "scholar_id": self.scholar_id,
            "follow": self.follow_as,
            "score": round(self.score, 3),
            "why": " · ".join(r.text for r in self.reasons),
            "reasons": [r.to_json() for r in self.reasons],
        }


@dataclass(slots=True)
class _Candidate:
    did: str = ""
    handle: str = ""
    name: str = ""
    # kind -> followed scholar id (0: the reader's own saves) -> occurrences (or papers)
    seen: dict[str, dict[int, set[str]]] = field(default_factory=dict)
    # Scholars known by this account's name as an author (an arXiv author followed by
    # no one here yet): following the account adds it to them, not to a new scholar.
    authors: set[int] = field(default_factory=set)

    def add(self, kind: str, by: int, occurrence: str) -> None:
        self.seen.setdefault(kind, {}).setdefault(by, set()).add(occurrence)

    def merge(self, other: _Candidate) -> None:
        self.did, self.handle = self.did or other.did, self.handle or other.handle
        self.name = self.name or other.name
        self.authors |= other.authors
        for kind, by in other.seen.items():
            for who, found in by.items():
                self.seen.setdefault(kind, {}).setdefault(who, set()).update(found)


class _Tally:
    """Evidence per account, keyed by DID when known, else by handle."""

    def __init__(self) -> None:
        self.found: dict[str, _Candidate] = {}

    def add(
        self,
        did: str,
        handle: str,
        name: str,
        kind: str,
        by: int,
        occurrence: str,
        author: int | None = None,
    ) -> None:
        if handle:
            handle = handle.removeprefix("@").lower()
        elif not did:
            return
        key = did or f"handle:{handle}"
        got = self.found.get(key)
        if got is None:
            got = self.found[key] = _Candidate(did, handle, name)
        elif (handle and not got.handle) or (name and not got.name):
            got.handle, got.name = got.handle or handle, got.name or name
        if author is not None:
            got.authors.add(author)
        kinds = got.seen.get(kind)
        if kinds is None:
            got.seen[kind] = {by: {occurrence}}
        elif by in kinds:
            kinds[by].add(occurrence)
        else:
            kinds[by] = {occurrence}


def _author_did(uri: str | None) -> str:
    return network().author(uri or "")


def _reposter(key: str) -> str | None:
    for traits in all_traits().values():
        if found := traits.reposter(key):
            return found
    return None


def _from_feeds(store: Store, tally: _Tally, followed: dict[str, int]) -> None:
    """What followed scholars reposted, quoted and replied to, in their own feeds."""
    for item in store.account_items(sorted(followed), limit=ITEMS):
        post = item.post
        if item.kind == "repost":
            by = followed.get(_reposter(item.key) or "")
            if by is not None and item.account and post is not None:
                tally.add(
                    item.account,
                    post.handle,
                    item.author or "",
                    item.kind,
                    by,
                    f"{item.kind}:{by}:{post.uri}",
                )
            continue
        by = followed.get(item.account or "")
        if by is None or post is None:
            continue
        parent = _author_did(item.reply_parent)
        if item.reply_parent and parent != item.account:
            tally.add(parent, post.reply_parent_author or "", "", "reply", by, item.key)
        quoted = post.quote
        if quoted and not quoted.unavailable and quoted.did != item.account:
            tally.add(
                quoted.did, quoted.handle, quoted.name, "quote", by, f"quote:{by}:{quoted.uri}"
            )


def _from_network(store: Store, tally: _Tally, followed: dict[str, int]) -> None:
    """Reposts and quotes heard on the network, and whom followed scholars follow."""
    for share in store.network_shares(sorted(followed)):
        by, author = followed.get(share.did), _author_did(share.subject)
        if by is not None and author and author != share.did:
            tally.add(author, "", "", share.kind, by, f"{share.kind}:{by}:{share.subject}")
    for did, followers in store.follows_of(sorted(followed)).items():
        for follower in followers:
            if (by := followed.get(follower)) is not None:
                tally.add(did, "", "", "follow", by, follower)


def _from_papers(
    store: Store, tally: _Tally, reader: ReaderId, bar: float, saved: list[str]
) -> None:
    """Co-authors of followed scholars and authors of saved papers with a known account;
    accounts that discussed saved papers on the network."""
    mine = store.follows(reader)
    theirs = store.scholars_paper_ids(sorted(mine), bar)
    by_paper: dict[str, set[int]] = {}
    for scholar_id, papers in theirs.items():
        for paper in papers:
            by_paper.setdefault(paper, set()).add(scholar_id)
    wanted = set(saved)
    authors = store.paper_authors(sorted(by_paper.keys() | wanted), bar)
    # Accounts of authors: a scholar's identity, or the one account with exactly that name.
    identities: dict[int, tuple[str, str]] = {}
    for ident in store.social_identities():
        did, handle = identities.get(ident.scholar_id, ("", ""))
        if ident.kind.endswith("-did"):
            did = did or ident.value
        else:
            handle = handle or ident.value
        identities[ident.scholar_id] = (did, handle)
    unnamed = {a.name for a in authors if a.scholar_id not in identities}
    named: dict[str, list[AccountView]] = {}
    for account in store.accounts_matching(network().service, names=sorted(unnamed)):
        named.setdefault(fold(account.name), []).append(account)
    for author in authors:
        if author.scholar_id in mine:
            continue
        if author.scholar_id in identities:
            did, handle = identities[author.scholar_id]
        else:
            same = named.get(fold(author.name), [])
            if len(same) != 1:  # no account, or several people of that name: nothing sure
                continue
            did, handle = same[0].id, same[0].handle
        for by in by_paper.get(author.arxiv_id, set()):
            if by != author.scholar_id:
                tally.add(
                    did, handle, author.name, "coauthor", by, author.arxiv_id, author.scholar_id
                )
        if author.arxiv_id in wanted:
            tally.add(
                did, handle, author.name, "saved-author", 0, author.arxiv_id, author.scholar_id
            )
    for spoken in store.spoken_about(network().service, sorted(wanted), 0):
        if not spoken.bot:
            tally.add(spoken.did, spoken.handle, "", "discussed", 0, spoken.paper)


def _strength(candidate: _Candidate) -> float:
    """The score of a candidate's evidence before reach and names (to cut the list early)."""
    total, scholars = 0.0, set[int]()
    for kind, by in candidate.seen.items():
        count = len(by) if kind == "follow" else len(set().union(*by.values()))
        total += KINDS[kind] * min(count, CAP)
        scholars.update(s for s in by if s)
    return total * (1 + 0.25 * max(len(scholars) - 1, 0))


def _reasons(candidate: _Candidate, names: dict[int, str]) -> tuple[SuggestionReason, ...]:
    found = []
    for kind, by in candidate.seen.items():
        occurrences = set().union(*by.values())
        who = tuple(
            sorted(
                (ScholarRef(s, names.get(s, f"#{s}")) for s in by if s),
                key=lambda s: (-len(by[s.id]), s.name),
            )
        )
        papers = (
            tuple(sorted(occurrences, reverse=True))
            if kind in ("coauthor", "saved-author", "discussed")
            else ()
        )
        count = len(by) if kind == "follow" else len(occurrences)
        found.append(SuggestionReason(kind, count, who, papers))
    found.sort(key=lambda r: (-r.weight, r.kind))
    return tuple(found)


def follow_suggestions(
    store: Store, reader: ReaderId, *, bar: float, limit: int = 30
) -> list[Suggestion]:
    """Accounts ``reader`` might follow, best first, each with its reasons.

    ``bar`` is the attribution bar (which papers count as a scholar's).
    """
    followed = store.followed_accounts(reader)  # DID -> followed scholar
    tally = _Tally()
    _from_feeds(store, tally, followed)
    _from_network(store, tally, followed)
    saved = [
        k for k, (_, at) in store.story_states(reader).items() if at and not k.startswith("item:")
    ]
    _from_papers(store, tally, reader, bar, saved)
    if not tally.found:
        return []
    # The strongest candidates by their evidence alone go on (a large network gives tens of
    # thousands of accounts; reach and exclusions reorder only the top ones).
    if len(tally.found) > KEEP * limit:
        strength = {key: _strength(c) for key, c in tally.found.items()}
        top = sorted(strength, key=lambda k: (-strength[k], k))[: KEEP * limit]
        tally.found = {key: tally.found[key] for key in top}
    # What is known of each account: its DID for a handle, its name, reach, whether a bot.
    dids = [c.did for c in tally.found.values() if c.did]
    handles = [c.handle for c in tally.found.values() if c.handle]
    accounts = store.accounts_matching(network().service, ids=dids, handles=handles)
    by_did = {a.id: a for a in accounts}
    by_handle = {a.handle.lower(): a for a in accounts if a.handle}
    merged: dict[str, _Candidate] = {}
    for candidate in tally.found.values():
        account = by_did.get(candidate.did) or by_handle.get(candidate.handle)
        if account is not None:
            candidate.did = candidate.did or account.id
            candidate.handle = candidate.handle or account.handle.lower()
            candidate.name = account.name or candidate.name
        key = candidate.did or f"handle:{candidate.handle}"
        if key in merged:
            merged[key].merge(candidate)
        else:
            merged[key] = candidate
    # Left out: who the reader follows or muted (by account or by name), bots and mirrors.
    mine = store.follows(reader)
    muted = {int(v) for v in store.mutes(reader).scholar if v.isdigit()}
    scholar_of: dict[str, int] = {}
    names: dict[int, str] = {r.id: r.name for r in store.followed_scholars(reader)}
    for ident in store.social_identities():
        scholar_of[ident.value.lower()] = ident.scholar_id
        names.setdefault(ident.scholar_id, ident.scholar_name)
    taken_names = {fold(names[s]) for s in mine | muted if s in names}
    found = []
    for candidate in merged.values():
        account = by_did.get(candidate.did) or by_handle.get(candidate.handle)
        if account is not None and account.bot:
            continue
        known = {scholar_of[v] for v in (candidate.did, candidate.handle) if v in scholar_of}
        known = known or candidate.authors  # the account's own scholar, else the author's
        if known & (mine | muted) or (candidate.name and fold(candidate.name) in taken_names):
            continue
        if candidate.did in followed:
            continue
        reasons = _reasons(candidate, names)
        score = _strength(candidate)
        followers = account.followers if account is not None else None
        score *= 1 + 0.05 * math.log10((followers or 0) + 1)  # reach breaks ties, no more
        found.append(
            Suggestion(
                candidate.did,
                candidate.handle,
                candidate.name,
                followers,
                min(known) if known else None,
                score,
                reasons,
            )
        )
    found.sort(key=lambda s: (-s.score, s.label.lower(), s.did))
    return found[:limit]
