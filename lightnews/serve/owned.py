"""The reader's own state as the web changes it: read, saved, followed, muted, decisions.

Every read and write of what the reader owns (read, saved, followed, muted,
decisions) by a page goes through these few functions, so that per-user state
changes them alone. Each reader's state is theirs; a paper's decision (confirm
or reject for a scholar) is the one shared answer, given by an admin.
"""

from __future__ import annotations

from lightnews.errors import NotFound
from lightnews.normalize.times import now_iso
from lightnews.serve.security import Visitor
from lightnews.store import ReaderId, Store

__all__ = [
    "FEEDBACK_ACTIONS",
    "SHARED",
    "actor_of",
    "decide",
    "decisions",
    "hidden_papers",
    "hide_paper",
    "mark_story",
    "muted_scholars",
    "reader_states",
    "saved_keys",
    "set_followed",
    "set_mute",
]


def reader_states(store: Store, reader: ReaderId) -> dict[str, tuple[str | None, str | None]]:
    """Story key → (read at, saved at)."""
    return store.story_states(reader)


#: Why a reader who is not an admin may not confirm or reject a scholar's paper.
SHARED = (
    "Whether a paper is a scholar's is decided for every reader, by an admin: ask one "
    "of them. “Hide from my feed” hides it for you alone."
)

#: The reader's word on a paper, for their learned ranker (store/feedback.py): the form's
#: action and what is stored (None takes it back).
FEEDBACK_ACTIONS: dict[str, str | None] = {
    "more-like-this": "more-like-this",
    "not-interested": "not-interested",
    "no-feedback": None,
}


def mark_story(
    store: Store,
    reader: ReaderId,
    key: str,
    now: str,
    *,
    read: bool | None = None,
    saved: bool | None = None,
) -> None:
    store.mark_story(reader, key, now, read=read, saved=saved)


def saved_keys(store: Store, reader: ReaderId) -> list[str]:
    """Saved stories' keys, the most recently saved first."""
    states = reader_states(store, reader)
    saved = [(at, key) for key, (_, at) in states.items() if at]
    return [key for _, key in sorted(saved, reverse=True)]


def set_followed(store: Store, reader: ReaderId, scholar_id: int, followed: bool) -> None:
    store.set_followed(reader, scholar_id, followed, now_iso())


def set_mute(store: Store, reader: ReaderId, kind: str, value: str, now: str, muted: bool) -> None:
    store.set_mute(reader, kind, value, now, muted=muted)


def muted_scholars(store: Store, reader: ReaderId) -> frozenset[str]:
    return store.mutes(reader).scholar


def decide(
    store: Store, scholar_id: int, arxiv_id: str, decision: str | None, now: str, *, by: str
) -> None:
    """Confirm or reject a paper for a scholar, for every reader (kept across re-ingest),
    then re-attribute; the audit log says ``by`` whom."""
    from lightnews.link.attribution import attribute_scholar

    store.get_paper(arxiv_id)
    store.set_decision(scholar_id, arxiv_id, decision, now, by=by)
    store.audit(by, f"attribution.{decision or 'undecide'}", f"#{scholar_id} {arxiv_id}", now)
    attribute_scholar(store, scholar_id)


def hide_paper(store: Store, reader: ReaderId, arxiv_id: str, hidden: bool, now: str) -> None:
    """Hide a paper from the reader's own feed (their "not interested"), or show it again."""
    paper = store.paper_row_id(arxiv_id)
    if paper is None:
        raise NotFound(f"no paper {arxiv_id} in the library")
    if hidden:
        store.set_paper_feedback(reader, paper, "not-interested", now)
    elif store.paper_feedback(reader).get(paper) == "not-interested":
        store.set_paper_feedback(reader, paper, None, now)


def hidden_papers(store: Store, reader: ReaderId) -> frozenset[str]:
    """arXiv ids of the papers the reader hid from their feed ("not interested")."""
    ids = [p for p, said in store.paper_feedback(reader).items() if said == "not-interested"]
    if not ids:
        return frozenset()
    return frozenset(h.arxiv_id for h in store.papers_by_rowids(ids).values())


def actor_of(visitor: Visitor) -> str:
    """Who the audit log names for what ``visitor`` does."""
    return visitor.user.name if visitor.user else "local reader"


def decisions(store: Store, scholar_id: int) -> dict[str, str]:
    return store.decisions(scholar_id)
