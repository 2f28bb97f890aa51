"""arXiv identifiers in text and URLs, as mentions.

Forms recognised (case-insensitive):

* URLs on arxiv.org and its mirrors: ``/abs/ID``, ``/pdf/ID[.pdf]``, ``/html/ID``,
  ``/format/ID``, ``export.arxiv.org``; alphaxiv ``/abs/ID``; Hugging Face
  ``/papers/ID``;
* arXiv's own DOIs ``10.48550/arXiv.ID``;
* ``arXiv:ID`` and ``arXiv ID`` in running text;
* a bare new-style id (``2510.02375``), accepted only when it is a plausible
  id (valid month, the digit count of its era) and with a lower confidence.

Versions are dropped: every version of a paper is one paper.

Here, below the sources, because sources name the papers of what they parse
with these (:func:`link_item`) and the store reads code links with them; the
linker (:mod:`lightnews.link`) adds titles on top.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from lightnews.model import Item, Mention
from lightnews.normalize.arxiv_ids import NEW_STYLE, OLD_STYLE, parse_arxiv_id

__all__ = [
    "find_arxiv_mentions",
    "find_code_in_text",
    "find_code_links",
    "find_dois",
    "find_openreview_ids",
    "find_slugs",
    "link_item",
]

_ID = rf"(?P<id>{NEW_STYLE}|{OLD_STYLE})(?:v\d+)?"
_HOSTS = r"(?:(?:www\.|export\.|browse\.)?arxiv\.org|alphaxiv\.org|www\.alphaxiv\.org)"

# Each pattern: (compiled regex, method, confidence). First match for an id wins.
_PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = (
    (re.compile(rf"{_HOSTS}/(?:abs|pdf|html|format|ps|overview)/{_ID}", re.I), "arxiv-url", 1.0),
    (re.compile(rf"huggingface\.co/papers/{_ID}", re.I), "hf-url", 1.0),
    (re.compile(rf"10\.48550/arxiv\.{_ID}", re.I), "doi", 1.0),
    (re.compile(rf"\barxiv\s*:\s*{_ID}", re.I), "arxiv-id", 1.0),
    (re.compile(rf"\barxiv\s+{_ID}", re.I), "arxiv-id", 0.95),
    (re.compile(rf"(?<![\w./-]){_ID}(?![\w/]|\.\d)", re.I), "bare-id", 0.8),
)


def find_arxiv_mentions(texts: Iterable[str]) -> list[Mention]:
    """Every arXiv paper named in ``texts``, once, with the surest method found."""
    best: dict[str, Mention] = {}
    for text in texts:
        if not text:
            continue
        for pattern, method, confidence in _PATTERNS:
            for match in pattern.finditer(text):
                parsed = parse_arxiv_id(match["id"])
                if parsed is None:
                    continue
                if method == "bare-id" and parsed.old_style:
                    continue
                known = best.get(parsed.base)
                if known is None or known.confidence < confidence:
                    best[parsed.base] = Mention(parsed.base, method, confidence, match[0])
    return list(best.values())


def link_item(item: Item) -> list[Mention]:
    """Mentions of an item: from its links first, then its title and text.

    An item that *is* a paper record does not mention itself.
    """
    found = find_arxiv_mentions([*item.links, item.title, item.text])
    return [m for m in found if m.arxiv_id != item.paper_id]


_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.I)
_SLUG_RE = re.compile(
    r"(?:paperswithcode\.com/paper|semanticscholar\.org/paper|alphaxiv\.org/overview)/"
    r"([A-Za-z0-9][A-Za-z0-9:'-]{10,})",
    re.I,
)
_GITHUB_RE = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)", re.I)
_NOT_REPOS = {"orgs", "sponsors", "features", "topics", "about", "login", "settings", "apps"}


def find_dois(texts: Iterable[str]) -> list[str]:
    """DOIs other than arXiv's own (``10.48550/arXiv.*`` is an arXiv id), lower-cased."""
    found: list[str] = []
    for text in texts:
        for match in _DOI_RE.finditer(text or ""):
            doi = match[1].rstrip(".,;:)]}'").lower()
            if not doi.startswith("10.48550/") and doi not in found:
                found.append(doi)
    return found


_OPENREVIEW_RE = re.compile(
    r"openreview\.net/(?:forum|pdf|attachment)/?\?(?:[^\s\"'<>]*?&)?id=([A-Za-z0-9_-]{6,20})", re.I
)


def find_openreview_ids(texts: Iterable[str]) -> list[str]:
    """Ids of OpenReview submissions (``openreview.net/forum?id=ID``, ``/pdf?id=ID``)."""
    found: list[str] = []
    for text in texts:
        for match in _OPENREVIEW_RE.finditer(text or ""):
            if match[1] not in found:
                found.append(match[1])
    return found


def find_slugs(texts: Iterable[str]) -> list[str]:
    """Titles written into paper-page URLs (Papers with Code, Semantic Scholar)."""
    found: list[str] = []
    for text in texts:
        for match in _SLUG_RE.finditer(unquote(text or "")):
            words = [w.strip(":'") for w in match[1].split("-")]
            words = [w for w in words if w and not re.fullmatch(r"[0-9a-f]{20,}", w)]
            if len(words) >= 3:
                slug = " ".join(words)
                if slug not in found:
                    found.append(slug)
    return found


# Starts at the host: a scheme or "www." before it changes no group, and an optional
# prefix made the expression try a match at every character of an abstract (160 us per
# abstract naming "git", against 25 us), where a host in front lets it skip to each "g".
_REPO_IN_TEXT_RE = re.compile(r"(github\.com|gitlab\.com)/([\w.-]+)/([\w.-]+)", re.I)


def find_code_in_text(text: str) -> list[str]:
    """Repositories written into a text ("code is available at github.com/x/y.")."""
    found: list[str] = []
    for match in _REPO_IN_TEXT_RE.finditer(text or ""):
        owner, repo = match[2], match[3].rstrip(".").removesuffix(".git")
        if owner.lower() in _NOT_REPOS or not repo or repo.endswith("..."):
            continue
        url = f"https://{match[1].lower()}/{owner}/{repo}"
        if url not in found:
            found.append(url)
    return found


def find_code_links(links: Iterable[str]) -> list[str]:
    """GitHub repositories among links, as ``https://github.com/owner/repo``."""
    found: list[str] = []
    for link in links:
        match = _GITHUB_RE.search(link or "")
        if match and match[1].lower() not in _NOT_REPOS:
            repo = match[2].removesuffix(".git")
            url = f"https://github.com/{match[1]}/{repo}"
            if repo and not repo.endswith("...") and url not in found:
                found.append(url)
    return found
