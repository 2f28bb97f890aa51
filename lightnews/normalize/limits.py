"""Size caps per field, applied once to everything a source parsed, before it is stored.

A feed whose title is 10 MB long must not make every page that shows it 10 MB
long. Each field has a cap (settings ``max_title_chars``, ``max_text_chars``,
``max_html_chars``, ``max_url_chars``, ``max_payload_chars``); a longer value
is cut to it, a longer URL is dropped (a cut URL leads nowhere), every string
inside an item's kind-specific fields (``post``, ``daily``, ``note``,
``record``) is cut to the text cap, and each cut is a
:class:`~lightnews.model.Problem` naming the item and the field, so the
source's row says what was cut. Sources do not call this themselves:
:meth:`lightnews.sources.Source.read` applies it to every batch, and the
snapshot import to every paper.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, TypeVar, cast

from lightnews.model import Account, Author, Batch, Item, Paper, Problem
from lightnews.normalize.text import sanitize_html
from lightnews.settings import Settings

__all__ = ["Limits", "cap_account", "cap_batch", "cap_item", "cap_paper"]

#: Most entries kept of one item's links or tags.
MAX_LIST = 1000

_D = TypeVar("_D")


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps, in characters; the defaults are the settings' defaults."""

    title: int = 1000
    text: int = 100_000
    html: int = 300_000
    url: int = 4096
    payload: int = 1_000_000

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            title=int(settings.max_title_chars),
            text=int(settings.max_text_chars),
            html=int(settings.max_html_chars),
            url=int(settings.max_url_chars),
            payload=int(settings.max_payload_chars),
        )


class _Cutter:
    """Cuts fields of one record to their caps and notes each cut."""

    def __init__(self, key: str | None, problems: list[Problem]) -> None:
        self.key = key
        self.problems = problems

    def text(self, name: str, value: str, cap: int) -> str:
        if len(value) <= cap:
            return value
        self.problems.append(
            Problem(f"cut to {cap:,} characters (was {len(value):,})", self.key, name)
        )
        return value[:cap]

    def optional(self, name: str, value: str | None, cap: int) -> str | None:
        return None if value is None else self.text(name, value, cap)

    def url(self, name: str, value: str | None, cap: int) -> str | None:
        if value is None or len(value) <= cap:
            return value
        self.problems.append(
            Problem(f"dropped: longer than {cap:,} characters ({len(value):,})", self.key, name)
        )
        return None

    def strings(self, name: str, values: list[str], cap: int, *, urls: bool = False) -> list[str]:
        kept = values[:MAX_LIST]
        if len(values) > MAX_LIST:
            self.problems.append(
                Problem(f"kept the first {MAX_LIST:,} of {len(values):,}", self.key, name)
            )
        if all(len(v) <= cap for v in kept):
            return kept
        if urls:
            short = [v for v in kept if len(v) <= cap]
            self.problems.append(
                Problem(f"dropped {len(kept) - len(short)} longer than {cap:,}", self.key, name)
            )
            return short
        return [self.text(name, v, cap) for v in kept]

    def details(self, name: str, value: _D, cap: int) -> _D:
        """``value`` (an item's kind-specific fields: a frozen dataclass, or None) with
        every string inside it cut to ``cap``; the same object when nothing was cut.

        A cut is named by its path (``post.card.description``).
        """
        if value is None:
            return value
        changes = {}
        for part in fields(cast(Any, value)):
            old = getattr(value, part.name)
            new = self._nested(f"{name}.{part.name}", old, cap)
            if new is not old:
                changes[part.name] = new
        return replace(cast(Any, value), **changes) if changes else value

    def _nested(self, name: str, value: Any, cap: int) -> Any:
        if isinstance(value, str):
            return self.text(name, value, cap)
        if isinstance(value, tuple):
            if len(value) > MAX_LIST:
                self.problems.append(
                    Problem(f"kept the first {MAX_LIST:,} of {len(value):,}", self.key, name)
                )
            new = tuple(self._nested(name, v, cap) for v in value[:MAX_LIST])
            same = len(new) == len(value) and all(a is b for a, b in zip(new, value, strict=True))
            return value if same else new
        if is_dataclass(value) and not isinstance(value, type):
            return self.details(name, value, cap)
        return value


def cap_item(item: Item, limits: Limits, problems: list[Problem]) -> None:
    """Cut ``item``'s fields to ``limits`` in place; each cut goes to ``problems``."""
    cut = _Cutter(item.key, problems)
    item.title = cut.text("title", item.title, limits.title)
    item.author = cut.optional("author", item.author, limits.title)
    item.text = cut.text("text", item.text, limits.text)
    if len(item.html) > limits.html:
        item.html = sanitize_html(cut.text("html", item.html, limits.html))  # close cut tags
    item.url = cut.url("url", item.url, limits.url)
    item.links = cut.strings("links", item.links, limits.url, urls=True)
    item.tags = cut.strings("tags", item.tags, limits.title)
    item.payload = cut.text("payload", item.payload, limits.payload)
    item.post = cut.details("post", item.post, limits.text)
    item.daily = cut.details("daily", item.daily, limits.text)
    item.note = cut.details("note", item.note, limits.text)
    item.record = cut.details("record", item.record, limits.text)
    item.code_links = cut.strings("code_links", item.code_links, limits.url, urls=True)


def _cap_author(author: Author, cut: _Cutter, limits: Limits) -> None:
    author.name = cut.text("authors", author.name, limits.title)
    author.keyname = cut.optional("authors", author.keyname, limits.title)
    author.forenames = cut.optional("authors", author.forenames, limits.title)
    author.affiliations = cut.strings("affiliations", author.affiliations, limits.title)


def _paper_fits(paper: Paper, limits: Limits) -> bool:
    """Whether no field of ``paper`` can pass its cap: a few length sums (a snapshot
    import caps every paper in its parsing worker, and nearly all fit, so the
    field-by-field cutter cost that worker a sixth of its time)."""
    short = limits.title
    if (
        len(paper.title) > short
        or len(paper.abstract) > limits.text
        or len(paper.comments or "") > limits.text
        or len(paper.doi or "") + len(paper.journal_ref or "") + len(paper.submitter or "") > short
        or len(paper.license or "") > limits.url
        or len(paper.categories) > MAX_LIST
        or sum(map(len, paper.categories)) > short
    ):
        return False
    for a in paper.authors:  # a sum under the cap: every part is under it
        if len(a.name) + len(a.keyname or "") + len(a.forenames or "") > short:
            return False
        if a.affiliations and (
            len(a.affiliations) > MAX_LIST or sum(map(len, a.affiliations)) > short
        ):
            return False
    return True


def cap_paper(paper: Paper, limits: Limits, problems: list[Problem]) -> None:
    """Cut ``paper``'s fields to ``limits`` in place; each cut goes to ``problems``."""
    if _paper_fits(paper, limits):
        return
    cut = _Cutter(paper.arxiv_id, problems)
    paper.title = cut.text("title", paper.title, limits.title)
    paper.abstract = cut.text("abstract", paper.abstract, limits.text)
    for author in paper.authors:
        _cap_author(author, cut, limits)
    paper.categories = cut.strings("categories", paper.categories, limits.title)
    paper.doi = cut.optional("doi", paper.doi, limits.title)
    paper.journal_ref = cut.optional("journal_ref", paper.journal_ref, limits.title)
    paper.comments = cut.optional("comments", paper.comments, limits.text)
    paper.license = cut.url("license", paper.license, limits.url)
    paper.submitter = cut.optional("submitter", paper.submitter, limits.title)


def cap_account(account: Account, limits: Limits, problems: list[Problem]) -> None:
    """Cut ``account``'s fields to ``limits`` in place; each cut goes to ``problems``."""
    cut = _Cutter(account.id, problems)
    account.handle = cut.text("handle", account.handle, limits.title)
    account.name = cut.text("name", account.name, limits.title)
    account.description = cut.text("description", account.description, limits.text)
    account.avatar = cut.url("avatar", account.avatar, limits.url)
    account.payload = cut.text("payload", account.payload, limits.payload)


def cap_batch(batch: Batch, limits: Limits) -> None:
    """Cut every item, paper and account of ``batch``; the cuts go to ``batch.problems``."""
    if batch.title is not None:
        batch.title = _Cutter(None, batch.problems).text("feed title", batch.title, limits.title)
    for item in batch.items:
        cap_item(item, limits, batch.problems)
    for paper in batch.papers:
        cap_paper(paper, limits, batch.problems)
    for account in batch.accounts:
        cap_account(account, limits, batch.problems)
