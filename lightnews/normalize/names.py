"""Author names: splitting arXiv's flat author lists and keys for matching.

arXiv gives authors three ways: structured (``keyname``/``forenames`` in
OAI-PMH and ``authors_parsed`` in the snapshot), one name per element (the
API), or one flat string (``D.V. Shetty, S.J. Yennello, and G.A. Souliotis``,
with affiliations in parentheses). All become :class:`~lightnews.model.Author`.
The *name key* (folded surname) is what attribution looks names up by.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from lightnews.model import Author
from lightnews.normalize.tex import tex_to_unicode

__all__ = ["author_from_parts", "fold", "name_key", "split_author_list"]

_AND_RE = re.compile(r",?\s+and\s+|\s*;\s*|\s*,\s*|\s+&\s+", re.I)
_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}


def _strip_parentheses(text: str) -> tuple[str, list[str]]:
    """Remove (possibly nested) parenthesised groups, returning them as affiliations."""
    out: list[str] = []
    groups: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
            if depth == 1:
                current = []
                continue
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                groups.append("".join(current).strip())
                out.append(" ")
                continue
        if depth:
            current.append(char)
        else:
            out.append(char)
    return "".join(out), [g for g in groups if g]


def split_author_list(flat: str) -> list[Author]:
    """Split arXiv's flat author string into authors, affiliations kept apart."""
    text = tex_to_unicode(flat)
    text, affiliations = _strip_parentheses(text)
    names = [n.strip(" .,") for n in _AND_RE.split(text)]
    authors: list[Author] = []
    for name in names:
        if not name:
            continue
        if name.lower() in _SUFFIXES and authors:
            authors[-1].name += f", {name}"
            authors[-1].suffix = name
            continue
        authors.append(Author(name=name))
    if len(authors) == 1 and affiliations:
        authors[0].affiliations = affiliations
    return authors


def author_from_parts(keyname: str, forenames: str | None, suffix: str | None = None) -> Author:
    """An author from arXiv's structured parts (``keyname``, ``forenames``, ``suffix``)."""
    keyname = tex_to_unicode(keyname)
    forenames = tex_to_unicode(forenames) if forenames else None
    suffix = tex_to_unicode(suffix) if suffix else None
    name = f"{forenames} {keyname}" if forenames else keyname
    if suffix:
        name = f"{name} {suffix}"
    return Author(name=name, keyname=keyname, forenames=forenames or None, suffix=suffix or None)


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """Lower case, accents removed, punctuation to spaces: ``Müller-Lé`` -> ``muller le``."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    stripped = stripped.replace("ø", "o").replace("ł", "l").replace("æ", "ae").replace("ß", "ss")
    return " ".join(re.sub(r"[^\w]+", " ", stripped).split())


@lru_cache(maxsize=65536)
def name_key(name: str, keyname: str | None = None) -> str:
    """The folded last word of the surname, what names are looked up by.

    ``Hochreiter, S.`` -> ``hochreiter``; ``van der Berg`` -> ``berg`` (so
    "J. van der Berg" and "Jan Berg" meet, and the scorer decides).
    """
    if keyname or "," in name:
        words = fold(keyname or name.split(",", 1)[0]).split()
        return words[-1] if words else ""
    parts = [p for p in fold(name).split() if p not in {"jr", "sr", "ii", "iii", "iv"}]
    return parts[-1] if parts else ""
