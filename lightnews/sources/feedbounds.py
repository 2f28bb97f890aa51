"""What one feed refresh may cost: a feed document bounded before feedparser reads it.

feedparser's cost is not linear in what a body holds. It looks for an e-mail
address in every RSS author line with a regular expression that is quadratic
in the length of a word (a 120 KB author took 45 s); it de-duplicates an
entry's categories by comparing each new one with all before (43,000
categories: 20 s), and an element's attributes likewise (100,000 attributes:
over 2 min); and even its linear work costs 2 to 3 s per MB of dense markup.
The body limit (15 MB) would let one hostile feed hold a refresh for hours.

So the document is bounded first, in a few passes of C-speed regular
expressions over the bytes, never a Python loop per tag:

* entries are kept in document order while they fit the budget (2,000
  entries, 4 MB, 100,000 tags); an entry over 1.5 MB has its long runs of
  text cut (a 10 MB title keeps its first 384 KB, then the title's own limit
  cuts it and says so); one that still holds more than an entry may (1.5 MB
  or 5,000 tags) is skipped, and the header before the first entry
  must be small (1 MB, 5,000 tags) or the feed is refused;
* a tag over 8 KB or with more than 64 attributes keeps its name and its
  first 64 attributes whose values fit ``max_url_chars``; an empty element
  (``<link href="..."/>``) that lost a value is dropped whole;
* an author line (``author``, ``dc:creator``, ``managingEditor``, ...) and a
  keyword list are cut to ``max_title_chars`` before feedparser reads them,
  and a run of e-mail characters in an author line to 254 (the longest
  e-mail address there can be).

A UTF-16 or UTF-32 body is re-encoded as UTF-8 first, so that its tags can
be found as bytes. Any other body that needs none of this is passed on
unchanged, byte for byte, so a normal feed parses exactly as before. What
was cut is said: a warning on the batch for the feed, a
:class:`~lightnews.model.Problem` for an entry.
"""

from __future__ import annotations

import codecs
import itertools
import re
from dataclasses import dataclass, field

from lightnews.errors import ParseError
from lightnews.model import Problem

__all__ = ["Bounded", "Budget", "bound_feed"]


@dataclass(frozen=True, slots=True)
class Budget:
    """How much of a feed document feedparser is given (bytes, tags, entries)."""

    entries: int = 2000
    total_bytes: int = 4 * 1024 * 1024
    total_tags: int = 100_000
    entry_bytes: int = 1536 * 1024
    entry_tags: int = 5000
    head_bytes: int = 1024 * 1024
    head_tags: int = 5000
    tag_bytes: int = 8192
    attributes: int = 64
    #: Longest author line or keyword list, in characters (``max_title_chars``).
    title_chars: int = 1000
    #: Longest attribute value kept in a rewritten tag (``max_url_chars``).
    url_chars: int = 4096
    #: Longest run of e-mail characters in an author line (RFC 5321's longest address).
    email_run: int = 254


@dataclass
class Bounded:
    """The bounded document, and what bounding it cut."""

    body: bytes
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


_ENTRY_START = re.compile(rb"<(?:[\w.-]+:)?(?:item|entry)[\s/>]", re.I)
#: The end of the last entry's close tag: ``.*`` runs to the end and backs off, linear.
_LAST_ENTRY_END = re.compile(rb".*</(?:[\w.-]+:)?(?:item|entry)\s*>", re.I | re.S)
_ID = re.compile(rb"<(?:[\w.-]+:)?(?:guid|id|link)(?:\s[^<>]*)?>\s*([^<\s]{1,200})", re.I)
_AUTHOR_NAMES = (
    rb"author|creator|managingeditor|webmaster|publisher|contributor|name|email|"
    rb"keywords|tags"
)
#: An author-like element and its text (CDATA sections included).
_AUTHOR = re.compile(
    rb"(<(?:[\w.-]+:)?(?:" + _AUTHOR_NAMES + rb")(?:\s[^<>]*)?(?<!/)>)"
    rb"((?:[^<]|<!\[CDATA\[.*?\]\]>)*)",
    re.I | re.S,
)
_CDATA = re.compile(rb"<!\[CDATA\[(.*?)\]\]>", re.S)
_EMAIL_RUN = re.compile(rb"(?<![A-Za-z0-9_.+-])[A-Za-z0-9_.+-]{255,}")
_ATTRIBUTE = re.compile(rb"""\s+([^\s=/<>]+)\s*=\s*("[^"]*"|'[^']*')""")
_TAG_NAME = re.compile(rb"<(/?)([^\s/<>]*)")
_UTF16_32 = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _ascii_compatible(body: bytes) -> bytes:
    """``body`` in an ASCII-compatible encoding, so that its tags can be found as bytes.

    A UTF-16 or UTF-32 document (by its byte-order mark or the zero bytes
    around its first ``<``) is re-encoded as UTF-8 with its declaration
    changed to say so; one that does not decode is refused.
    """
    head = body[:4]
    encoding = None
    if head.startswith(_UTF16_32[:2]):
        encoding = "utf-32"
    elif head == b"<\x00\x00\x00":
        encoding = "utf-32-le"
    elif head == b"\x00\x00\x00<":
        encoding = "utf-32-be"
    elif head.startswith(_UTF16_32[2:]):
        encoding = "utf-16"
    elif head[:2] == b"<\x00":
        encoding = "utf-16-le"
    elif head[:2] == b"\x00<":
        encoding = "utf-16-be"
    if encoding is None:
        return body
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as error:
        raise ParseError(f"not a readable feed: not valid {encoding.upper()} ({error})") from None
    text = re.sub(r"^\ufeff?(<\?xml[^>]*?encoding=)([\"'])[^\"']*\2", r"\1\2utf-8\2", text)
    return text.lstrip("\ufeff").encode("utf-8", "surrogatepass")


def _cut(text: bytes, limit: int) -> bytes:
    """``text`` cut to at most ``limit`` bytes, neither inside a UTF-8 character nor an entity."""
    if len(text) <= limit:
        return text
    end = limit
    while end > 0 and 0x80 <= text[end] <= 0xBF:
        end -= 1
    amp = text.rfind(b"&", max(0, end - 12), end)
    if amp >= 0 and text.find(b";", amp, end) < 0:
        end = amp
    return text[:end]


def _entry_name(span: bytes) -> str | None:
    found = _ID.search(span, 0, 4096)
    return found[1].decode("utf-8", "replace") if found else None


def _bound_entries(body: bytes, budget: Budget, out: Bounded) -> bytes:
    """The document with the entries that fit the budget (see the module docstring)."""
    starts = []
    for number, found in enumerate(_ENTRY_START.finditer(body)):
        starts.append(found.start())
        if number >= budget.entries:
            break
    head_end = starts[0] if starts else len(body)
    head_tags = body.count(b"<", 0, head_end)
    if head_end > budget.head_bytes or head_tags > budget.head_tags:
        raise ParseError(
            f"not a readable feed: {head_end:,} bytes and {head_tags:,} tags before the first "
            f"entry, more than a feed's header holds ({budget.head_bytes:,} bytes, "
            f"{budget.head_tags:,} tags)"
        )
    if not starts:
        return body
    last = _LAST_ENTRY_END.match(body, starts[0])
    entries_end = last.end() if last else len(body)
    tail_tags = body.count(b"<", entries_end)
    if (
        entries_end <= starts[-1]
        or len(body) - entries_end > budget.head_bytes
        or (tail_tags > budget.head_tags)
    ):
        entries_end = len(body)  # an entry left open: it runs to the end, and is judged so
    bounds = [*starts, entries_end] if len(starts) <= budget.entries else starts
    kept: list[bytes] = [body[:head_end]]
    size, tags = head_end, head_tags
    for number, (start, end) in enumerate(itertools.pairwise(bounds)):
        end = max(start, end)
        span = body[start:end]
        length, count = end - start, body.count(b"<", start, end)
        if length > budget.entry_bytes and count <= budget.entry_tags:
            span = _shorten_texts(span, budget.entry_bytes // 4)  # a 10 MB title: its text cut
            length = len(span)
        if length > budget.entry_bytes or count > budget.entry_tags:
            out.problems.append(
                Problem(
                    f"entry skipped: {length:,} bytes and {count:,} tags, more than an entry "
                    f"may hold ({budget.entry_bytes:,} bytes, {budget.entry_tags:,} tags)",
                    _entry_name(body[start : start + 4096]),
                )
            )
            continue
        if size + length > budget.total_bytes or tags + count > budget.total_tags:
            out.warnings.append(
                f"read the first {number:,} entries only: the rest is past what one refresh "
                f"reads ({budget.total_bytes:,} bytes, {budget.total_tags:,} tags)"
            )
            break
        kept.append(span)
        size, tags = size + length, tags + count
    else:
        if len(starts) > budget.entries:
            out.warnings.append(
                f"read the first {budget.entries:,} entries only: a refresh reads no more"
            )
    if (
        len(kept) == len(bounds)
        and len(starts) <= budget.entries
        and (sum(map(len, kept)) == entries_end)
    ):
        return body  # nothing skipped or cut: the very same bytes
    kept.append(body[entries_end:])
    return b"".join(kept)


def _shorten_texts(span: bytes, limit: int) -> bytes:
    """An entry with every run of text longer than ``limit`` bytes cut to it (the fields'
    own limits cut them further once parsed, and say so)."""
    return re.sub(rb">([^<]{%d,})" % (limit + 1), lambda m: b">" + _cut(m[1], limit), span)


def _rewrite_tag(match: re.Match[bytes], budget: Budget) -> bytes:
    tag = match[0]
    name = _TAG_NAME.match(tag)
    assert name is not None  # the pattern starts with "<"
    attributes = list(_ATTRIBUTE.finditer(tag, name.end()))
    kept = [a[0] for a in attributes if len(a[2]) - 2 <= budget.url_chars][: budget.attributes]
    close = b"/>" if tag.endswith(b"/>") else b">"
    if close == b"/>" and len(kept) < min(len(attributes), budget.attributes):
        return b""  # an empty element that lost a value (a link without its href): dropped
    return b"<" + name[1] + name[2][:200] + b"".join(kept) + close


def _bound_tags(body: bytes, budget: Budget, out: Bounded) -> bytes:
    """Tags over ``tag_bytes`` or with too many attributes rewritten (see the module docstring)."""
    big = re.compile(
        rb"<(?![!?])(?=[^<>]{%d}|(?:[^<>=]*=){%d})[^<>]*>?"
        % (budget.tag_bytes, budget.attributes + 1)
    )
    count = 0

    def rewrite(match: re.Match[bytes]) -> bytes:
        nonlocal count
        count += 1
        return _rewrite_tag(match, budget)

    body = big.sub(rewrite, body)
    if count:
        out.warnings.append(
            f"{count:,} tags over {budget.tag_bytes:,} bytes or {budget.attributes} attributes "
            f"cut to their name and first attributes"
        )
    return body


def _bound_authors(body: bytes, budget: Budget, out: Bounded) -> bytes:
    """Author lines and keyword lists cut before feedparser's quadratic reading of them."""
    limit = 4 * budget.title_chars  # bytes: UTF-8 takes at most 4 a character
    cut = 0

    def shorten(match: re.Match[bytes]) -> bytes:
        nonlocal cut
        text = match[2]
        if len(text) <= budget.email_run and b"<" not in text:
            return match[0]
        if b"<![CDATA[" in text:
            text = _CDATA.sub(
                lambda c: (
                    c[1].replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")
                ),
                text,
            )
        short = _EMAIL_RUN.sub(lambda r: r[0][: budget.email_run], _cut(text, limit))
        if short == text:
            return match[0]
        cut += 1
        return match[1] + short

    body = _AUTHOR.sub(shorten, body)
    if cut:
        out.warnings.append(
            f"{cut:,} author lines or keyword lists cut to {budget.title_chars:,} characters "
            f"(words to {budget.email_run}) before reading"
        )
    return body


def bound_feed(body: bytes, budget: Budget | None = None) -> Bounded:
    """``body`` bounded to what one refresh reads; raises ParseError on a hopeless header."""
    budget = budget or Budget()
    out = Bounded(body)
    text = _ascii_compatible(body)
    text = _bound_entries(text, budget, out)
    text = _bound_tags(text, budget, out)
    out.body = _bound_authors(text, budget, out)
    return out
