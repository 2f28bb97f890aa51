"""arXiv identifiers in both schemes, with and without versions.

New style (since April 2007): ``YYMM.NNNN`` until 2014, ``YYMM.NNNNN`` since
2015, optionally followed by ``vN``. Old style: ``archive[.SUBJ]/YYMMNNN``
(``hep-th/9901001``; ``math.GT/0309136`` names ``math/0309136``). A paper is
keyed by the id without its version; the version is kept apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_VERSION_DIGITS", "NEW_STYLE", "OLD_STYLE", "ArxivId", "parse_arxiv_id"]

#: Longest version number read (arXiv's highest versions have two digits).
MAX_VERSION_DIGITS = 6

# Archives that used the old scheme (the subject class after a dot is optional).
OLD_ARCHIVES = [
    "acc-phys",
    "adap-org",
    "alg-geom",
    "ao-sci",
    "astro-ph",
    "atom-ph",
    "bayes-an",
    "chao-dyn",
    "chem-ph",
    "cmp-lg",
    "comp-gas",
    "cond-mat",
    "cs",
    "dg-ga",
    "funct-an",
    "gr-qc",
    "hep-ex",
    "hep-lat",
    "hep-ph",
    "hep-th",
    "math",
    "math-ph",
    "mtrl-th",
    "nlin",
    "nucl-ex",
    "nucl-th",
    "patt-sol",
    "physics",
    "plasm-ph",
    "q-alg",
    "q-bio",
    "quant-ph",
    "solv-int",
    "supr-con",
]

NEW_STYLE = r"(?:0[7-9]|1[0-9]|2[0-9])(?:0[1-9]|1[0-2])\.\d{4,5}"
OLD_STYLE = (
    r"(?:"
    + "|".join(re.escape(a) for a in sorted(OLD_ARCHIVES, key=len, reverse=True))
    + r")(?:\.[A-Za-z]{2})?/\d{7}"
)
_FULL = re.compile(rf"^(?:arxiv:)?(?P<base>{NEW_STYLE}|{OLD_STYLE})(?:v(?P<v>\d+))?$", re.I)


@dataclass(frozen=True, slots=True)
class ArxivId:
    """A parsed arXiv id: ``base`` is versionless, ``version`` may be None."""

    base: str
    version: int | None = None

    def __str__(self) -> str:
        return self.base if self.version is None else f"{self.base}v{self.version}"

    @property
    def old_style(self) -> bool:
        return "/" in self.base


def _valid_new_style(base: str) -> bool:
    yymm, number = base.split(".")
    # Five-digit numbers started in January 2015; four-digit ones ended then.
    return (len(number) == 5) == (yymm >= "1501")


def parse_arxiv_id(text: str) -> ArxivId | None:
    """Parse ``text`` as an arXiv id (``arXiv:`` prefix allowed), or return None."""
    match = _FULL.match(text.strip())
    if match is None:
        return None
    base = match["base"]
    if "/" in base:
        archive, number = base.split("/")
        # ``math.GT/0309136`` is paper ``math/0309136``: the subject class is
        # not part of the identifier.
        base = f"{archive.partition('.')[0].lower()}/{number}"
    elif not _valid_new_style(base):
        return None
    if match["v"] and (len(match["v"]) > MAX_VERSION_DIGITS or not match["v"].isascii()):
        return None  # "v" and 4,301 digits: not an id (and more than int() reads)
    version = int(match["v"]) if match["v"] else None
    return ArxivId(base, version)
