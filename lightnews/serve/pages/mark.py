"""``POST /mark`` and ``POST /api/mark``: a story read or saved, feedback, a mute.

The reader marks a story read or saved, says "more like this" or "not
interested" about a paper (for their learned ranker), or (un)mutes a scholar,
a source or a keyword. The form's ``back`` (a path on this site) is where the
browser returns; ``/api/mark`` takes the same fields as JSON (with an API
token when the instance has accounts) and answers JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.errors import LightnewsError, NotFound, UsageError
from lightnews.normalize import validate
from lightnews.normalize.times import now_iso
from lightnews.normalize.validate import whole_number
from lightnews.serve.owned import FEEDBACK_ACTIONS, mark_story, set_mute
from lightnews.serve.site import (
    JsonAnswer,
    Site,
    back_to,
    read_form,
    read_json,
    reader_of,
    wants_json,
)
from lightnews.store import ReaderId, Store

__all__ = ["mark"]


def mark(site: Site, request: Request) -> Response:
    """Mark a story read or saved, or (un)mute a scholar, source or keyword."""
    api = wants_json(request)
    form: Mapping[str, Any] = read_json(request) if api else read_form(request)
    wrong = _not_text(form) if api else None
    if wrong:
        return site.failure(request, UsageError(f"{wrong} must be text"))
    if api and form.get("kind") is not None and form.get("kind") not in MUTE_KINDS:
        return site.failure(request, UsageError(f"kind must be {', '.join(MUTE_KINDS)}"))
    action = str(form.get("action") or "")
    key = str(form.get("story") or "").strip()
    kind = str(form.get("kind") or "keyword")
    value = str(form.get("value") or form.get("keyword") or "").strip()
    try:
        key, value = _mark(site.store, reader_of(request), action, key, kind, value)
    except ValueError:
        return site.failure(request, UsageError("a source is given by its number"))
    except LightnewsError as error:
        return site.failure(request, error)
    site.learn_from(reader_of(request))  # trained off this request, if it changed
    if api:
        return JsonAnswer(
            {
                "done": action,
                "story": key or None,
                "kind": kind if action in ("mute", "unmute") else None,
                "value": value or None,
            }
        )
    back = back_to(form, "/")
    if action in ("read", "not-interested") and key:
        back = _with_marked(back, key)  # shown once where it was, with an undo
    return RedirectResponse(back, status_code=303)


#: What a mute names (``kind``): a keyword when not given.
MUTE_KINDS = ("keyword", "scholar", "source")
#: The JSON fields each kind of action reads (the description's two body shapes); others
#: are left alone, whatever they hold.
_FIELDS_READ = {"mute": ("action", "kind", "value"), "unmute": ("action", "kind", "value")}


def _not_text(body: Mapping[str, Any]) -> str | None:
    """The first field the action reads that is neither text nor left out (null)."""
    fields = _FIELDS_READ.get(str(body.get("action")), ("action", "story"))
    return next(
        (f for f in fields if body.get(f) is not None and not isinstance(body[f], str)), None
    )


def _mark(
    store: Store, reader: ReaderId, action: str, key: str, kind: str, value: str
) -> tuple[str, str]:
    """Do what the form asks; the story key and the muted value as they were stored."""
    now = now_iso()
    if action in ("read", "unread", "save", "unsave") and key:
        key = validate.story_key(key)
        if key.startswith("item:"):
            store.get_item(int(key.removeprefix("item:")))
        else:
            store.get_paper(key)
        if action in ("save", "unsave"):
            mark_story(store, reader, key, now, saved=action == "save")
        else:
            mark_story(store, reader, key, now, read=action == "read")
    elif action in FEEDBACK_ACTIONS and key:
        key = validate.story_key(key)
        paper = store.paper_row_id(key)
        if key.startswith("item:"):
            raise UsageError("only a paper's story takes “more like this” or “not interested”")
        if paper is None:
            raise NotFound(f"no paper {key} in the library")
        store.set_paper_feedback(reader, paper, FEEDBACK_ACTIONS[action], now)
    elif action in ("mute", "unmute") and value:
        if kind == "keyword":
            value = value.lower()
        elif kind == "scholar":
            value = str(store.find_scholar(value))
        elif kind == "source":
            value = str(store.get_source(whole_number(value, "a source id")).id)
        set_mute(store, reader, kind, value, now, muted=action == "mute")
    else:
        raise UsageError(
            "nothing to do: give a story and read, unread, save, unsave, "
            "more-like-this, not-interested or no-feedback, or what to "
            "(un)mute"
        )
    return key, value


def _with_marked(back: str, key: str) -> str:
    """``back`` (a path, maybe with a query and an anchor) naming the story just marked."""
    path, _, anchor = back.partition("#")
    base, _, query = path.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query) if k != "marked"]
    return f"{base}?{urlencode([*kept, ('marked', key)])}" + (f"#{anchor}" if anchor else "")
