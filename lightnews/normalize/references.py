"""References: "Surname: short title", the way notes and posts name papers.

Conference notes, talk lists and posts cite a paper by its first (or senior)
author's surname and a short form of its title: ``Snell: Optimality of
Scaling LLM Test-Time Compute``. This module finds such references in any
text, so every path that links text (a notes page, a post, a feed article,
``lightnews resolve``) reads them the same way; :mod:`lightnews.link.titles`
then decides which paper each names.

Format facts the reading relies on:

* In running text a reference is marked by a conference prefix
  (``ICLR2025 Snell: Optimality of ... ICLR2025 Mathur: ...``): a title ends
  where the next prefix starts, at a sentence end, or where the writer's
  description visibly begins. At the start of a heading, line or list item
  the prefix is optional.
* The word before the colon must look like a surname: not a label such as
  "Method:" or "Motivation:", not an acronym ("RAG:").
"""

from __future__ import annotations

import re

from lightnews.normalize import clean_text

__all__ = ["PREFIX", "parse_references", "same_paper", "strip_prefix"]


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


_VENUES = (
    "ICLR|NeurIPS|NIPS|ICML|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|EACL|AACL|COLING|COLM|CoLLAs|CoRL|"
    "AAAI|IJCAI|AISTATS|UAI|KDD|WWW|SIGIR|WSDM|RecSys|TMLR|COLT|ALT|ICASSP|Interspeech|"
    "INTERSPEECH|WACV|BMVC|MICCAI|MLSys|ICRA|IROS|RSS|LREC|ISMIR|SIGGRAPH|CHI|FAccT|L4DC|LoG|MIDL"
)
#: A conference and year: "ICLR2025", "ICLR 2025", "NeurIPS'24", "ICML-24", "HAIC 2025".
PREFIX = re.compile(
    rf"(?<![\w'’])(?:(?:{_VENUES})[\s\-]?(?:['’]?\d{{2}}|(?:19|20)\d{{2}})"
    rf"|[A-Z]{{3,8}}[\s\-]?(?:['’]\d{{2}}|(?:19|20)\d{{2}}))(?![\w])"
)
_PARTICLE = r"(?:van|von|de|der|den|di|da|del|della|du|le|la|dos|das|ten|ter|bin|al|el)"
_NAME = r"[^\W\d_][\w'’\-]*"
_REFERENCE = re.compile(
    rf"(?P<surname>(?:{_PARTICLE}\s+){{0,2}}{_NAME}(?:\s+et\s+al\.?)?"
    rf"(?:\s+(?:and|&)\s+{_NAME})?)\s*:\s+(?P<rest>\S.*)",
    re.S,
)
_BULLET = re.compile(r"^\s*(?:[-*+•·–]|\d{1,3}[.)])?\s*")
#: Words that start "Word: ..." lines in notes without being anyone's surname.
_NOT_SURNAMES = _wordset(
    """abstract answer approach architecture aside author authors background baseline
    baselines benchmark benchmarks bonus caveat chapter claim claims code comment comments
    conclusion conclusions context contribution contributions cons cool data dataset datasets
    date day definition disclaimer discussion edit equation eval evaluation example examples
    experiment experiments figure finding findings follow-up followup future fyi goal goals
    highlight highlights hypothesis idea ideas input insight insights interesting intro
    introduction intuition keynote key keywords lemma limitation limitations link links
    location loss main method methods methodology metric metrics misc model models morning
    afternoon evening motivation note notes observation observations open oral orals output
    overview panel paper papers part poster posters problem proof proposal pros ps question
    questions recap reference references related remark result results room see session setup
    slides source sources speaker speakers spotlight status step summary table tags takeaway
    takeaways talk talks task tasks theorem thoughts time todo training tutorial update venue
    video warning why how what when where who workshop"""
)
#: Small words that do not show a lower-case writing style.
_SMALL_WORDS = _wordset(
    """a an and are as at be by can do does for from how in into is it its not of on or our
    over the their this to towards toward under via vs we what when which why with within
    without you your using through"""
)
_ABBREVIATIONS = _wordset("vs e.g i.e etc cf al fig eq sec no approx")
_SENTENCE_END = re.compile(r"(?<=[\w)\]])[.!?](?=\s|$)")
_COLON_CLAUSE = re.compile(r":\s+(?=[a-z])")
_ELLIPSIS = re.compile(r"\s*(?:\.{3,}|…)\s*$")
_TRIM = " \t,;:-–—(\"'“‘"
_DANGLING = _wordset("and or & with vs vs. plus also then see cf. cf")
_ET_AL = re.compile(r"\s+et\s+al\.?$")


def _is_surname(surname: str) -> bool:
    words = surname.replace("&", " ").split()
    words = [w for w in words if w not in ("et", "al", "al.", "and")]
    main = next((w for w in reversed(words) if w[:1].isupper()), "")
    if not main or main.casefold().strip(".") in _NOT_SURNAMES:
        return False
    core = re.sub(r"[\W_]", "", main)
    return bool(core) and not (core.isupper() and len(core) > 1) and not core.isdigit()


def _capitalised(word: str) -> bool:
    """ "Take", "Rollout": a capital then small letters (not "LLM", "MrT5" or "Test-Time")."""
    return len(word) > 1 and word[0].isupper() and word[1:].islower() and word.isalpha()


def _title_end(rest: str) -> tuple[int, int]:
    """Where the short title in ``rest`` ends: (end of the title, end of the raw reference)."""
    end = len(rest)
    truncated = _ELLIPSIS.search(rest)
    if truncated:
        end = truncated.start()
    cut = end
    for found in _SENTENCE_END.finditer(rest, 0, cut):
        before = rest[: found.start()].split()
        if before and before[-1].casefold().strip("(") in _ABBREVIATIONS:
            continue
        cut = found.start()
        break
    clause = _COLON_CLAUSE.search(rest, 0, cut)
    if clause:
        cut = clause.start()
    # Where a lower-case title runs into the writer's own words ("contextual document
    # embeddings Take a bunch of ..."): a capitalised word after two lower-case ones.
    lower = 0
    for number, word in enumerate(re.finditer(r"\S+", rest[:cut])):
        core = word[0].strip(".,;:!?()[]\"'“”‘’")
        plain = core.replace("-", "").replace("'", "")
        if not plain.isalpha():
            continue
        if core[0].islower() and core.casefold() not in _SMALL_WORDS:
            lower += 1
        elif lower >= 2 and number >= 2 and _capitalised(core):
            cut = word.start()
            break
    if truncated and cut == end:
        # A title cut short mid-word ("mechanistic int..."): drop the cut word.
        words = rest[:cut].split()
        if len(words) > 1:
            cut = rest[:cut].rstrip().rfind(" ")
        return cut, len(rest.rstrip())
    return cut, cut


def _reference(segment: str, offset: int, line: str, start: int) -> dict[str, str] | None:
    found = _REFERENCE.match(segment)
    if found is None or not _is_surname(found["surname"]):
        return None
    rest = found["rest"]
    title_end, raw_end = _title_end(rest)
    words = clean_text(rest[:title_end]).rstrip(_TRIM).split()
    while len(words) > 1 and words[-1].casefold().rstrip(_TRIM) in _DANGLING:
        words.pop()  # "Scaling LLM Test-Time Compute and" (the next reference follows)
    title = " ".join(words).rstrip(_TRIM)
    if not title:
        return None
    if raw_end == title_end:  # the raw text ends with the title's last word
        tokens = list(re.finditer(r"\S+", rest[:title_end]))
        raw_end = tokens[len(words) - 1].end() if len(tokens) >= len(words) else raw_end
    rest_at = offset + found.start("rest")
    return {
        "surname": _ET_AL.sub("", clean_text(found["surname"])),
        "title": title,
        "raw": clean_text(line[start : rest_at + raw_end]).rstrip(_TRIM),
    }


def _line_references(line: str) -> list[dict[str, str]]:
    markers = list(PREFIX.finditer(line))
    found: list[dict[str, str]] = []
    if not markers:
        bullet = _BULLET.match(line)
        at = bullet.end() if bullet else 0
        reference = _reference(line[at:], at, line, at)
        return [reference] if reference else []
    for number, marker in enumerate(markers):
        end = markers[number + 1].start() if number + 1 < len(markers) else len(line)
        segment = line[marker.end() : end]
        skipped = len(segment) - len(segment.lstrip())
        reference = _reference(segment.lstrip(), marker.end() + skipped, line[:end], marker.start())
        if reference:
            found.append(reference)
    return found


def parse_references(text: str) -> list[dict[str, str]]:
    """The "Surname: short title" references in ``text``, in order, each once.

    Each is ``{"surname", "title", "raw"}``; ``raw`` is the text it was read
    from. A conference prefix ("ICLR2025 ") marks references inside running
    text; at the start of a line or list item the prefix is optional::

        >>> [r["surname"] for r in parse_references(
        ...     "Talks ICLR2025 Snell: Optimality of Scaling LLM Test-Time Compute "
        ...     "ICLR2025 Yue: Inference Scaling for RAG")]
        ['Snell', 'Yue']
    """
    found: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for line in (text or "").splitlines():
        for reference in _line_references(line):
            key = (reference["surname"].casefold(), reference["title"].casefold())
            if key not in seen:
                seen.add(key)
                found.append(reference)
    return found


def strip_prefix(heading: str) -> str:
    """A section name without its conference prefix ("ICLR2025 Friday Posters")."""
    found = PREFIX.match(heading.strip())
    if found is None:
        return heading.strip()
    name = heading.strip()[found.end() :].lstrip(" :–—-")
    return name or heading.strip()


def _words(title: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", title.casefold()))


def same_paper(a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether two references name one paper: the same surname, titles that overlap."""
    if a["surname"].casefold() != b["surname"].casefold():
        return False
    left, right = _words(a["title"]), _words(b["title"])
    if not left or not right:
        return False
    return left <= right or right <= left or len(left & right) / len(left | right) >= 0.5
