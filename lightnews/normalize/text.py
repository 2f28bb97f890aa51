"""Text, HTML and time normalization shared by every source.

HTML from sources is sanitized with an allow-list (nh3, the Ammonia
sanitizer) *before* it is stored, so nothing downstream has to remember to.
Times become ISO 8601 UTC strings whatever form the source wrote them in.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import lxml.html
import nh3
from lxml import etree

__all__ = ["clean_text", "html_to_text", "iso_utc", "sanitize_html", "strip_controls"]

_SPACE_RE = re.compile(r"\s+")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_CHAR_REF_RE = re.compile(r"&#(?:[xX]0*([0-9A-Fa-f]{1,6})|0*([0-9]{1,7}));")

_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "caption",
    "cite",
    "code",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "u",
    "ul",
    "var",
}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "abbr": {"title"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
    "time": {"datetime"},
}
_BLOCKS = {
    "p",
    "div",
    "br",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "tr",
    "dt",
    "dd",
    "figcaption",
    "hr",
    "table",
    "ul",
    "ol",
}


def clean_text(text: str | None) -> str:
    """Collapse runs of whitespace to one space and strip the ends."""
    return _SPACE_RE.sub(" ", text).strip() if text else ""


def sanitize_html(html: str | None) -> str:
    """Keep only an allow-list of tags, attributes and URL schemes (no script, no style)."""
    if not html:
        return ""
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def _control_ref(match: re.Match[str]) -> str:
    """A reference to a control character (``&#1;``) dropped; any other kept as written."""
    try:
        code = int(match[1], 16) if match[1] else int(match[2])
    except ValueError:
        return match[0]
    return "" if (code < 32 and code not in (9, 10, 13)) or code == 127 else match[0]


def strip_controls(html: str) -> str:
    """``html`` without control characters, written or as references (``&#1;``).

    libxml2 stops reading text at one, and lxml refuses to write one back
    (``ValueError``); tabs and line breaks stay.
    """
    return _CONTROL_RE.sub("", _CHAR_REF_RE.sub(_control_ref, html))


def html_to_text(html: str | None) -> str:
    """Readable plain text of an HTML fragment: block elements become line breaks."""
    if not html:
        return ""
    if "<" not in html and "&" not in html:
        return clean_text(html)
    # Control characters, written or as references, end libxml2's reading of the text.
    html = strip_controls(html)
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return clean_text(re.sub(r"<[^>]*>", " ", html))
    etree.strip_elements(root, "script", "style", with_tail=False)
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag in _BLOCKS:
            try:
                element.tail = "\n" + (element.tail or "")
            except ValueError:  # a control character from a reference (&#1;): lxml refuses it
                element.tail = "\n" + _CONTROL_RE.sub("", element.tail or "")
    lines = (clean_text(line) for line in root.text_content().split("\n"))
    return "\n".join(line for line in lines if line)


def _format(moment: datetime) -> str | None:
    """The moment in UTC as ``YYYY-MM-DDTHH:MM:SSZ``; None when UTC falls outside years 1-9999."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        utc = moment.astimezone(UTC)
    except (OverflowError, ValueError):  # 9999-12-31T23:00-05:00 is past the last day
        return None
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
        f"T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"
    )


def iso_utc(value: object) -> str | None:
    """ISO 8601 UTC text for a datetime, a ``time.struct_time``, RFC 2822 or ISO text.

    Returns None for anything that is not a recognisable time, or a time that
    cannot be written in UTC (out of the years 1-9999); never raises.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return _format(value)
    if isinstance(value, time.struct_time):
        try:
            return _format(datetime(*value[:6], tzinfo=UTC))
        except (ValueError, OverflowError, TypeError):
            return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 100:
        return None
    try:
        return _format(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except (ValueError, OverflowError):
        pass
    try:
        return _format(parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
