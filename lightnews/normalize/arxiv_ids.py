"""arXiv identifiers in both schemes, with and without versions.

New style (since April 2007): ``YYMM.NNNN`` until 2014, ``YYMM.NNNNN`` since
2015, optionally followed by ``vN``. Old style: ``archive[.SUBJ]/YYMMNNN``
(``hep-th/9901001``; ``math.GT/0309136`` names ``math/0309136``). A paper is
keyed by the id without its version; the version is kept apart.

A paper typed by a user may also be one of its addresses: arXiv's abstract,
PDF or HTML page (``https://arxiv.org/abs/2510.03172v2``), alphaXiv, Hugging
Face's paper page or arXiv's DOI; :func:`parse_arxiv_reference` reads those
(the same forms the linker finds in text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MAX_VERSION_DIGITS",
    "NEW_STYLE",
    "OLD_STYLE",
    "ArxivId",
    "parse_arxiv_id",
    "parse_arxiv_reference",
]

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


_REFERENCE = re.compile(
    r"^(?:https?://)?(?:"
    r"(?:www\.|export\.|browse\.)?arxiv\.org/(?:abs|pdf|html|format|ps|overview)/"
    r"|(?:www\.)?alphaxiv\.org/(?:abs|overview)/"
    r"|(?:www\.)?huggingface\.co/papers/"
    r"|(?:dx\.)?doi\.org/10\.48550/arxiv\.|doi:\s*10\.48550/arxiv\.|10\.48550/arxiv\."
    rf")(?P<id>(?:{NEW_STYLE}|{OLD_STYLE})(?:v\d+)?)(?:\.pdf)?/?(?:[?#]\S*)?$",
    re.I,
)


def parse_arxiv_reference(text: str) -> ArxivId | None:
    """An arXiv id as typed, or the id in one of the paper's addresses; else None."""
    parsed = parse_arxiv_id(text)
    if parsed is not None:
        return parsed
    match = _REFERENCE.match(text.strip())
    return parse_arxiv_id(match["id"]) if match else None
