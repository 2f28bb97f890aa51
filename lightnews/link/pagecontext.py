"""Page context: what a whole page says about when the papers it names appeared.

A page that names several papers names them from one stretch of time: a lab's
article about its papers at a conference, notes taken at one. Once the linker
has found some of them surely (an identifier, a title written out, a
"Surname: short title" with its surname), their first versions mark that
stretch, and a paper of that stretch is a likelier reading of a loosely
written title on the same page than a paper from two years later. A page that
names a venue and year ("ICLR 2025", "ICLR2025") says the same thing itself.

This module only says which months a page's papers come from; the meaning
route (:mod:`lightnews.link.meaning`) uses it to choose among candidates. A
page whose sure links are few, or spread over years, has no context: nothing
is assumed.

Pure: mentions and text in, a :class:`PageContext` out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lightnews.model import Mention

__all__ = [
    "CONFIDENT",
    "MIN_CONFIDENT",
    "PageContext",
    "page_context",
    "paper_month",
    "venue_years",
]

#: A link this sure (or an identifier) marks the page's period.
CONFIDENT = 0.9
#: Sure links (distinct papers) a page needs before its period is trusted.
MIN_CONFIDENT = 3
#: Sure links further apart than this (months) are not one period: no context.
MAX_SPREAD = 12
#: Months either side of the sure links' first versions that still count as the period.
SLACK = 3

_NEW_ID = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}")
_OLD_ID = re.compile(r"/(\d{2})(\d{2})\d{3}")
_VENUE = re.compile(
    r"\b(ICLR|NeurIPS|NIPS|ICML|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|COLING|AAAI|IJCAI|KDD|"
    r"COLM|CoRL|RSS|ICRA|IROS|SIGIR|WWW|UAI|AISTATS|COLT|MICCAI|INTERSPEECH|ICASSP)"
    r"\s?['’]?((?:19|20)\d\d)\b"
)


def paper_month(arxiv_id: str) -> int | None:
    """The month of a paper's first version from its arXiv id (``year * 12 + month - 1``)."""
    found = _NEW_ID.match(arxiv_id)
    if found:
        return (2000 + int(found[1])) * 12 + int(found[2]) - 1
    found = _OLD_ID.search(arxiv_id)
    if found:
        year = int(found[1])
        return (1900 + year if year >= 91 else 2000 + year) * 12 + int(found[2]) - 1
    return None


def venue_years(text: str) -> set[int]:
    """The years of the venues a page names ("ICLR 2025", "NeurIPS'24" is not read)."""
    return {int(m[2]) for m in _VENUE.finditer(text)}


@dataclass(frozen=True, slots=True)
class PageContext:
    """The months (``year * 12 + month - 1``, inclusive) a page's papers come from."""

    first: int
    last: int
    #: The sure links it was read from.
    anchors: tuple[str, ...] = ()

    def holds(self, arxiv_id: str) -> bool:
        """Whether a paper's first version falls in the page's period."""
        month = paper_month(arxiv_id)
        return month is not None and self.first <= month <= self.last


def page_context(mentions: Sequence[Mention], text: str = "") -> PageContext | None:
    """The period of a page whose sure links agree on one, else None.

    The sure links (confidence :data:`CONFIDENT` or more) must be
    :data:`MIN_CONFIDENT` distinct papers within :data:`MAX_SPREAD` months of
    each other; the period is their span widened by :data:`SLACK` months. A
    page that names one venue year ("ICLR 2025": papers from the two years
    before it, up to its spring) needs only one sure link inside that window,
    and its period is the window.
    """
    sure = sorted({m.arxiv_id for m in mentions if m.confidence >= CONFIDENT})
    months = [m for m in (paper_month(a) for a in sure) if m is not None]
    if len(months) >= MIN_CONFIDENT and max(months) - min(months) <= MAX_SPREAD:
        return PageContext(min(months) - SLACK, max(months) + SLACK, tuple(sure))
    years = venue_years(text)
    if len(years) == 1:
        (year,) = years
        window = PageContext((year - 2) * 12 + 6, year * 12 + 4, tuple(sure))
        inside = [a for a in sure if window.holds(a)]
        if inside and len(inside) == len(months):
            return PageContext(window.first, window.last, tuple(inside))
    return None
