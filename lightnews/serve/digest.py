"""The daily digest: the top stories since a moment, with why each is there.

As Markdown for a terminal or a notes app, as HTML for a browser, or e-mailed
through the SMTP settings (both parts in one message, so any mail client shows
it well).
"""

from __future__ import annotations

import re
import smtplib
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from html import escape

from lightnews.errors import FetchError, UsageError
from lightnews.rank import Story, rank_stories
from lightnews.settings import Settings
from lightnews.store import Store

__all__ = ["digest_stories", "parse_since", "render_html", "render_markdown", "send_digest"]

_SINCE_RE = re.compile(r"^(\d+)\s*([hdw])$")


def parse_since(text: str, now: datetime) -> datetime:
    """``1d``, ``12h``, ``2w`` or an ISO date -> the moment the digest starts."""
    match = _SINCE_RE.match(text.strip().lower())
    if match:
        amount, unit = int(match[1]), match[2]
        hours = {"h": 1, "d": 24, "w": 24 * 7}[unit] * amount
        return now - timedelta(hours=hours)
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--since must look like 1d, 12h, 2w or a date, got {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def digest_stories(
    store: Store,
    settings: Settings,
    since: datetime,
    *,
    limit: int = 15,
    now: datetime | None = None,
) -> list[Story]:
    """The best-ranked stories with activity since ``since``."""
    start = since.strftime("%Y-%m-%dT%H:%M:%SZ")
    ranked = rank_stories(store, limit=limit * 4, half_life_hours=settings.half_life_hours,
                          bar=settings.attribution_bar, now=now, settings=settings)  # fmt: skip
    # Read (or already digested) stories stay out unless something new brought them back.
    return [s for s in ranked if (s.time or "") >= start and "read" not in s.why][:limit]


def _link(story: Story) -> str:
    return story.url or ""


def render_markdown(stories: list[Story], since: datetime) -> str:
    lines = [f"# Lightnews digest since {since:%Y-%m-%d %H:%M} UTC", ""]
    if not stories:
        lines.append("Nothing new from the scholars and sources you follow.")
    for n, story in enumerate(stories, start=1):
        lines.append(f"{n}. **[{story.title}]({_link(story)})**")
        lines.append(f"   {' · '.join(dict.fromkeys(story.why))}")
    return "\n".join(lines) + "\n"


def render_html(stories: list[Story], since: datetime) -> str:
    items = (
        "".join(
            f'<li><p><a href="{escape(_link(s))}"><strong>{escape(s.title)}</strong></a></p>'
            f"<p>{escape(' · '.join(dict.fromkeys(s.why)))}</p></li>"
            for s in stories
        )
        or "<li>Nothing new from the scholars and sources you follow.</li>"
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Lightnews digest</title></head><body><main>"
        f"<h1>Lightnews digest since {since:%Y-%m-%d %H:%M} UTC</h1><ol>{items}</ol>"
        "</main></body></html>"
    )


def send_digest(settings: Settings, to: str, subject: str, markdown: str, html: str) -> None:
    """E-mail the digest through the SMTP settings (plain text and HTML parts)."""
    if not settings.smtp_host:
        raise UsageError("set smtp_host (and smtp_from) to send the digest by e-mail")
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = settings.smtp_from or f"lightnews@{settings.smtp_host}"
    message["To"] = to
    message.set_content(markdown)
    message.add_alternative(html, subtype="html")
    try:
        with smtplib.SMTP(settings.smtp_host, int(settings.smtp_port), timeout=30) as smtp:
            if settings.smtp_starttls:
                smtp.starttls()
            if settings.smtp_user:
                smtp.login(settings.smtp_user, settings.smtp_password)
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException) as error:
        raise FetchError(
            f"could not send the digest through {settings.smtp_host}: {error}"
        ) from None
