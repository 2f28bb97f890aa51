"""The daily digest: the top stories since a moment, with why each is there.

As Markdown for a terminal or a notes app, as HTML for a browser, or e-mailed
through the SMTP settings (both parts in one message, so any mail client shows
it well). Sending raises when the server did not accept the message, so the
caller marks the stories read only once the digest was delivered.
"""

from __future__ import annotations

import smtplib
from datetime import UTC, datetime
from email.message import EmailMessage
from html import escape

from lightnews.errors import FetchError, UsageError
from lightnews.rank import Story, rank_stories
from lightnews.settings import Settings
from lightnews.store import ReaderId, Store

__all__ = ["digest_stories", "render_html", "render_markdown", "send_digest"]


def digest_stories(
    store: Store,
    reader: ReaderId,
    settings: Settings,
    since: datetime,
    *,
    limit: int = 15,
    now: datetime | None = None,
) -> list[Story]:
    """``reader``'s best-ranked stories with activity since ``since`` (their feed's order, cut)."""
    start = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    ranked = rank_stories(store, reader, limit=None, half_life_hours=settings.half_life_hours,
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
