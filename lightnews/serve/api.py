"""The JSON API's description, generated from typed declarations of its routes.

Each ``/api`` route is declared once here: its path, what it answers, its
parameters as a frozen dataclass whose annotated fields say their type and
format, and its response as a small typed model. :func:`openapi` turns the
declarations into an OpenAPI 3.1 document (its version is the package's), so
the description cannot drift from a hand-written copy, and every route
documents the answers it can give: 400 for input it cannot read, 404 for what
does not exist, 503 when the database is busy (300 where a name matches
several scholars). A test runs schemathesis with all its checks against it.

Writes (:data:`WRITES`, ``POST /api/mark``) are declared the same way, with
their JSON body and who may send them (:data:`AUTH`): an API token on an
instance with accounts, the form token on one without. :func:`index` is
``/api``: every address with what it does and where the description is.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from lightnews import __version__
from lightnews.normalize.validate import MAX_ID
from lightnews.rank import FEED_VIEWS

__all__ = ["AUTH", "ROUTES", "WRITES", "ApiRoute", "Param", "WriteRoute", "index", "openapi"]

MAX_PAGE = 100_000


@dataclass(frozen=True, slots=True)
class Param:
    """What a parameter means and which values it takes (beyond its type)."""

    description: str
    pattern: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    max_length: int | None = None
    enum: tuple[str, ...] | None = None
    format: str | None = None
    example: str | None = None  # a value a client can try (it exists in the demo library)


#: Days every month has, of a year from 0001 (there is no year 0000: the handler refuses it).
_DAY = (
    r"^([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
    r"-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$"
)
_SINCE = r"^(|[1-9][0-9]{0,3}[hdw]|today|yesterday|(19[7-9][0-9]|20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8]))$"  # noqa: E501
_CATEGORY = r"^(|cs|stat|math|cs\.(LG|CL|CV|AI|IR|RO|NE)|stat\.ML|math\.OC)$"
#: Placeholder for the source kinds a search takes, read from the registry when described.
FILTER_KINDS = ("<filter kinds>",)
_ARXIV = (
    r"^((0[7-9]|1[0-4])(0[1-9]|1[0-2])\.[0-9]{4}|(1[5-9]|2[0-9])(0[1-9]|1[0-2])\.[0-9]{5})"
    r"(v[1-9][0-9]?)?$"
)

Who = Annotated[
    str,
    Param(
        "A scholar: id, handle, ORCID iD or (part of) a name.",
        pattern=r"[^\s\x00-\x1f\x7f-\x9f]",
        example="Lindqvist",
    ),
]
Page = Annotated[int, Param("Page number, from 1.", minimum=1, maximum=MAX_PAGE)]
Id = Annotated[int, Param("A whole number.", minimum=1, maximum=MAX_ID)]


@dataclass(frozen=True, slots=True)
class NoParams:
    pass


@dataclass(frozen=True, slots=True)
class FeedParams:
    view: Annotated[
        str | None,
        Param(
            "everything (default), or papers: leave out items that name no paper.", enum=FEED_VIEWS
        ),
    ] = None


@dataclass(frozen=True, slots=True)
class ScholarParams:
    who: Who
    tab: Annotated[str | None, Param("Which tab.", enum=("posts", "papers"))] = None
    page: Page | None = None


@dataclass(frozen=True, slots=True)
class PaperParams:
    arxiv_id: Annotated[
        str,
        Param(
            "An arXiv id (2511.18342, with or without a version).",
            pattern=_ARXIV,
            example="2511.18342",
        ),
    ]
    posts: Annotated[
        int | None,
        Param("Which page of the conversation on the network.", minimum=1, maximum=MAX_PAGE),
    ] = None


@dataclass(frozen=True, slots=True)
class SearchParams:
    q: Annotated[
        str | None,
        Param(
            "Words, or an arXiv id or address. A query asking too much of "
            "the index (a * after fewer than 3 characters, over 4 "
            "prefixes, over 16 terms) is narrowed; the note says how.",
            example="sparse attention",
        ),
    ] = None
    page: Page | None = None
    subject: Annotated[str | None, Param("An arXiv category or archive.", pattern=_CATEGORY)] = None
    since: Annotated[
        str | None,
        Param(
            "From: 12h, 1d, 2w, today, yesterday or YYYY-MM-DD. "
            "A start after the end gives no hits.",
            pattern=_SINCE,
        ),
    ] = None
    until: Annotated[str | None, Param("To: as since.", pattern=_SINCE)] = None
    source_kind: Annotated[
        str | None,
        Param(
            "Only mentions from this kind of source (the kinds a search can be narrowed to).",
            enum=FILTER_KINDS,
        ),
    ] = None


@dataclass(frozen=True, slots=True)
class DiscussedParams:
    since: Annotated[
        str | None,
        Param(
            "How far back: 6h, 24h, 7d, today, yesterday or YYYY-MM-DD (24h when not given).",
            pattern=_SINCE,
        ),
    ] = None


@dataclass(frozen=True, slots=True)
class ItemParams:
    item_id: Id


@dataclass(frozen=True, slots=True)
class DayParams:
    day: Annotated[str, Param("A day, YYYY-MM-DD.", pattern=_DAY)]


@dataclass(frozen=True, slots=True)
class NotesParams:
    source_id: Id


# -- response models ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Error:
    error: str


@dataclass(frozen=True, slots=True)
class Choices:
    error: str
    choices: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class FeedEntryModel:
    title: str
    score: float
    why: list[str]
    reasons: list[dict[str, Any]]
    time: str
    items_total: int


@dataclass(frozen=True, slots=True)
class ScholarModel:
    scholar: dict[str, Any]
    posts: list[dict[str, Any]]
    papers: list[dict[str, Any]]
    records_at_least: int
    page: int
    pages: int


@dataclass(frozen=True, slots=True)
class PaperModel:
    arxiv_id: str
    title: str
    authors: list[str]
    mentions: list[dict[str, Any]]
    records: list[dict[str, Any]]
    related: dict[str, Any]
    #: The network's posts about it: threads whole, replies and quotes under what they
    #: answer, bots folded away with a count, paged.
    conversation: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SearchHitModel:
    """A paper found: why it matched (``matched``: id, words, meaning; ``why`` in words;
    ``words``: the query's words it holds), its authors (the first eight; ``author_count``
    of all) and the part of its abstract holding the words (``snippet``), with where they
    stand in it (``highlights``: ``[start, end]`` character offsets)."""

    arxiv_id: str
    title: str
    score: float
    matched: list[str]
    why: str
    words: list[str]
    authors: list[str]
    author_count: int
    snippet: str
    highlights: list[list[int]]


@dataclass(frozen=True, slots=True)
class SearchModel:
    query: str
    page: int
    mode: str
    hits: list[SearchHitModel]


@dataclass(frozen=True, slots=True)
class ItemModel:
    id: int
    kind: str
    title: str
    papers: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class DailyModel:
    day: str
    days: list[str]
    papers: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class NotesModel:
    title: str
    sections: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SavedModel:
    saved: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class IndexModel:
    name: str
    version: str
    openapi: str
    auth: dict[str, str]
    endpoints: list[dict[str, str]]


#: A story key as described: an arXiv id of the five-digit era, or item:ID (the handler
#: also takes older ids, "arXiv:" prefixes, versions and addresses).
_PAPER = r"(1[5-9]|2[0-9])(0[1-9]|1[0-2])\.[0-9]{5}(v[1-9][0-9]{0,2})?"
_STORY = rf"^({_PAPER}|item:[1-9][0-9]{{0,17}})$"
_NUMBER = r"^[1-9][0-9]{0,17}$"

#: What ``POST /api/mark`` does (``action``) to a story, to a paper's story, and to a mute.
STORY_ACTIONS = ("read", "unread", "save", "unsave")
FEEDBACK_ACTIONS = ("more-like-this", "not-interested", "no-feedback")
MUTE_ACTIONS = ("mute", "unmute")
MARK_ACTIONS = (*STORY_ACTIONS, *FEEDBACK_ACTIONS, *MUTE_ACTIONS)


@dataclass(frozen=True, slots=True)
class StoryMarkBody:
    """A story marked read or unread, saved or unsaved."""

    action: Annotated[str, Param("read, unread, save or unsave.", enum=STORY_ACTIONS)]
    story: Annotated[
        str,
        Param(
            "The story: an arXiv id (2511.18342; older forms and addresses are taken too) or "
            "item:ID for an entry without a paper.",
            pattern=_STORY,
            example="2511.18342",
        ),
    ]


@dataclass(frozen=True, slots=True)
class FeedbackMarkBody:
    """What the reader's learned ranker is told of a paper: more like it, not interested,
    or neither any more."""

    action: Annotated[
        str, Param("more-like-this, not-interested or no-feedback.", enum=FEEDBACK_ACTIONS)
    ]
    story: Annotated[
        str,
        Param(
            "The paper's arXiv id (2511.18342; older forms are taken too).",
            pattern=f"^{_PAPER}$",
            example="2511.18342",
        ),
    ]


@dataclass(frozen=True, slots=True)
class MuteMarkBody:
    """A keyword or a scholar muted or unmuted in the reader's feed and digests."""

    action: Annotated[str, Param("mute or unmute.", enum=MUTE_ACTIONS)]
    value: Annotated[str, Param("The keyword, or the scholar (id, handle or name).")]
    kind: Annotated[
        str | None, Param("keyword (when not given) or scholar.", enum=("keyword", "scholar"))
    ] = None


@dataclass(frozen=True, slots=True)
class MuteSourceBody:
    """A source muted or unmuted in the reader's feed and digests, by its number."""

    action: Annotated[str, Param("mute or unmute.", enum=MUTE_ACTIONS)]
    kind: Annotated[str, Param("source.", enum=("source",))]
    value: Annotated[
        str, Param("The source's number (as `sources list` shows it).", pattern=_NUMBER)
    ]


@dataclass(frozen=True, slots=True)
class MarkModel:
    """What was done: the action, and the story or the (kind, value) muted as stored."""

    done: str
    story: str | None
    kind: str | None
    value: str | None


@dataclass(frozen=True, slots=True)
class ApiRoute:
    """One GET route of the API: its parameters and what it answers."""

    path: str
    summary: str
    params: type
    response: Any
    statuses: tuple[int, ...] = (400, 404)


ROUTES: tuple[ApiRoute, ...] = (
    ApiRoute(
        "/api",
        "This index: every address of the API, who may call it, and where its "
        "OpenAPI description is.",
        NoParams,
        IndexModel,
        (),
    ),
    ApiRoute(
        "/api/feed",
        "The ranked feed: stories with every reason they are there.",
        FeedParams,
        list[FeedEntryModel],
        (400,),
    ),
    ApiRoute(
        "/api/scholar/{who}",
        "A scholar's profile, posts (threads whole) and papers.",
        ScholarParams,
        ScholarModel,
        (300, 400, 404),
    ),
    ApiRoute(
        "/api/paper/{arxiv_id}",
        "A story: the paper, what mentions it (with how sure "
        "each link is), its conversation on the network and related papers.",
        PaperParams,
        PaperModel,
    ),
    ApiRoute(
        "/api/search",
        "Papers by words and meaning, filtered.",
        SearchParams,
        SearchModel,
        (300, 400, 404),
    ),
    ApiRoute("/api/sources", "Sources with their health.", NoParams, list[dict[str, Any]], ()),
    ApiRoute(
        "/api/item/{item_id}",
        "An article, post or note and the papers it names.",
        ItemParams,
        ItemModel,
    ),
    ApiRoute("/api/daily", "The newest day of Daily Papers.", NoParams, DailyModel, ()),
    ApiRoute("/api/daily/{day}", "Daily Papers of one day.", DayParams, DailyModel),
    ApiRoute(
        "/api/notes", "Every notes page among the sources.", NoParams, list[dict[str, Any]], ()
    ),
    ApiRoute(
        "/api/notes/{source_id}",
        "A notes page by section, each note with its papers.",
        NotesParams,
        NotesModel,
    ),
    ApiRoute("/api/saved", "The saved list, newest saved first.", NoParams, SavedModel, ()),
    ApiRoute(
        "/api/scholars",
        "Every scholar with identities and records.",
        NoParams,
        list[dict[str, Any]],
        (),
    ),
    ApiRoute(
        "/api/discussed",
        "Papers the network discusses now, by the weighted count of "
        "accounts posting about them, each entry saying who and how many.",
        DiscussedParams,
        dict[str, Any],
        (400,),
    ),
    ApiRoute(
        "/api/group",
        "Stories saved by two or more members who share, with who.",
        NoParams,
        list[dict[str, Any]],
        (),
    ),
    ApiRoute(
        "/api/suggestions",
        "Accounts the reader might follow, each with its reasons (who and how many).",
        NoParams,
        dict[str, Any],
        (),
    ),
)


@dataclass(frozen=True, slots=True)
class WriteRoute:
    """One POST route of the API: its JSON body, what it answers, and who may send it."""

    path: str
    summary: str
    #: The body's fields, or its alternatives (one of them: ``oneOf``).
    body: tuple[type, ...]
    response: Any
    statuses: tuple[int, ...] = (400, 401, 403, 404)


WRITES: tuple[WriteRoute, ...] = (
    WriteRoute(
        "/api/mark",
        "Mark a story read or saved, give feedback on a paper, or "
        "(un)mute a keyword, scholar or source, for the reader the token is of.",
        (StoryMarkBody, FeedbackMarkBody, MuteMarkBody, MuteSourceBody),
        MarkModel,
    ),
)

#: Who may call the API, by scheme (the description's ``securitySchemes`` and ``/api``).
AUTH = {
    "token": "An API token, sent as `Authorization: Bearer TOKEN` (`lightnews tokens create "
    "NAME`, or the Account page). On an instance with accounts every /api address "
    "takes one, and writes need one: a browser session never writes through the API.",
    "session": "A signed-in browser's session cookie: reads only.",
    "form": "On an instance without accounts (loopback only) reads need nothing; a write "
    "needs the form token every page carries: the `lightnews_csrf` cookie and its "
    "value in the page's `csrf_token` field, sent back as the `X-CSRF-Token` header.",
}

_SECURITY_SCHEMES = {
    "token": {"type": "http", "scheme": "bearer", "description": AUTH["token"]},
    "session": {
        "type": "apiKey",
        "in": "cookie",
        "name": "lightnews_session",
        "description": AUTH["session"],
    },
    "form": {"type": "apiKey", "in": "header", "name": "X-CSRF-Token", "description": AUTH["form"]},
}


def _schema(kind: Any, nullable: bool = False) -> dict[str, Any]:
    """JSON Schema of a Python type: str, int, float, bool, list, dict, dataclass, optional.

    A model's optional field (``nullable``) may be null; an optional parameter is one
    that may be left out, never sent as null."""
    origin = get_origin(kind)
    if origin is Annotated:
        return _schema(get_args(kind)[0], nullable)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(kind) if a is not type(None)]
        if len(options) > 1:
            return {"anyOf": [_schema(a) for a in options]}
        schema = _schema(options[0])
        if nullable and len(options) < len(get_args(kind)) and "type" in schema:
            schema["type"] = [schema["type"], "null"]
        return schema
    if origin is list:
        (item,) = get_args(kind)
        return {"type": "array", "items": _schema(item)}
    if origin is dict or kind is dict:
        return {"type": "object"}
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        names = [f.name for f in dataclasses.fields(kind)]
        return {
            "type": "object",
            "required": names,
            "properties": {name: _schema(hints[name], nullable=True) for name in names},
        }
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if kind in simple:
        return {"type": simple[kind]}
    return {}  # Any


def _parameters(route: ApiRoute) -> list[dict[str, Any]]:
    hints = typing.get_type_hints(route.params, include_extras=True)
    found = []
    for field in dataclasses.fields(route.params):
        kind = hints[field.name]
        inner = [kind, *get_args(kind)]  # Param may sit inside an Optional
        info = next(
            (a for k in inner for a in getattr(k, "__metadata__", ()) if isinstance(a, Param)), None
        )
        schema = _schema(kind)
        if info is not None:
            enum = _filter_kinds() if info.enum == FILTER_KINDS else info.enum
            extra = {
                "pattern": info.pattern,
                "minimum": info.minimum,
                "maximum": info.maximum,
                "maxLength": info.max_length,
                "format": info.format,
                "enum": list(enum) if enum else None,
            }
            schema.update({k: v for k, v in extra.items() if v is not None})
        in_path = "{" + field.name + "}" in route.path
        found.append(
            {
                "name": field.name,
                "in": "path" if in_path else "query",
                "required": in_path,
                "description": info.description if info else "",
                "schema": schema,
                **({"example": info.example} if info and info.example else {}),
            }
        )
    return found


def _body(route: WriteRoute) -> dict[str, Any]:
    """The JSON Schema of a write's body: one of its alternatives (each its fields, their
    meaning and values)."""
    shapes = [_fields(body) for body in route.body]
    return shapes[0] if len(shapes) == 1 else {"oneOf": shapes}


def _fields(body: type) -> dict[str, Any]:
    hints = typing.get_type_hints(body, include_extras=True)
    properties: dict[str, Any] = {}
    required = []
    for field in dataclasses.fields(body):
        kind = hints[field.name]
        info = next(
            (
                a
                for k in (kind, *get_args(kind))
                for a in getattr(k, "__metadata__", ())
                if isinstance(a, Param)
            ),
            None,
        )
        schema = _schema(kind, nullable=True)
        if field.default is dataclasses.MISSING and schema.get("type") == "string":
            schema["pattern"] = r"\S"  # a required text says something (not only spaces)
        if info is not None:
            schema["description"] = info.description
            if info.pattern:  # what the text must be, beyond saying something
                schema["pattern"] = info.pattern
            if info.enum:
                schema["enum"] = [*info.enum, *([None] if "null" in schema["type"] else [])]
            if info.example:
                schema["examples"] = [info.example]
        properties[field.name] = schema
        if field.default is dataclasses.MISSING:
            required.append(field.name)
    shape = {"type": "object", "required": required, "properties": properties}
    return {"title": body.__name__, "description": (body.__doc__ or "").strip(), **shape}


def _filter_kinds() -> tuple[str, ...]:
    """The source kinds a search can be narrowed to (their traits say so), and "" for any."""
    from lightnews.sources import all_traits

    return ("", *sorted(kind for kind, t in all_traits().items() if t.filter_label))


_WHY = {
    300: "Several scholars match: pick one of the choices.",
    400: "The input cannot be read (the message says what would be right).",
    401: "No API token, or one unknown or revoked (an instance with accounts).",
    403: "Not allowed: a browser session, a missing form token, or a read-only instance.",
    404: "Nothing with that name or number is stored.",
    503: "The database is busy: retry after the Retry-After seconds.",
}


def openapi() -> dict[str, Any]:
    """The API's OpenAPI 3.1 description, from :data:`ROUTES`."""
    paths: dict[str, Any] = {}
    for route in ROUTES:
        responses: dict[str, Any] = {
            "200": {
                "description": "OK",
                "content": {"application/json": {"schema": _schema(route.response)}},
            },
        }
        for status in (*route.statuses, 503):
            ref = {"$ref": "#/components/schemas/" + ("Choices" if status == 300 else "Error")}
            responses[str(status)] = {
                "description": _WHY[status],
                "content": {"application/json": {"schema": ref}},
            }
        paths[route.path] = {
            "get": {
                "summary": route.summary,
                "operationId": _operation(route.path),
                "parameters": _parameters(route),
                "responses": responses,
            }
        }
    for write in WRITES:
        responses = {
            "200": {
                "description": "Done",
                "content": {"application/json": {"schema": _schema(write.response)}},
            }
        }
        for status in (*write.statuses, 503):
            content: dict[str, Any] = {
                "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
            }
            if status == 403:  # the form guard answers in plain text
                content["text/plain"] = {"schema": {"type": "string"}}
            responses[str(status)] = {"description": _WHY[status], "content": content}
        paths.setdefault(write.path, {})["post"] = {
            "summary": write.summary,
            "operationId": _operation(write.path) + "_post",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _body(write)}},
            },
            "responses": responses,
            "security": [{"token": []}, {"form": []}],
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Lightnews",
            "version": __version__,
            "description": "The data behind every Lightnews page, as JSON; `/api` lists "
            "every address. Who may call it: "
            + " ".join(f"{name.capitalize()}: {text}" for name, text in AUTH.items()),
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": _schema(Error), "Choices": _schema(Choices)},
            "securitySchemes": _SECURITY_SCHEMES,
        },
    }


def _operation(path: str) -> str:
    return path.strip("/").replace("/", "_").replace("{", "").replace("}", "") or "api"


def index() -> dict[str, Any]:
    """``/api``: every address of the API with what it does, who may call it, and where
    its OpenAPI description is."""
    endpoints = [{"method": "GET", "path": r.path, "summary": r.summary} for r in ROUTES]
    endpoints += [
        {
            "method": "POST",
            "path": w.path,
            "summary": w.summary,
            "auth": "token, or form (without accounts)",
        }
        for w in WRITES
    ]
    endpoints.append(
        {
            "method": "GET",
            "path": "/api/openapi.json",
            "summary": "The OpenAPI 3.1 description of all of these.",
        }
    )
    return {
        "name": "Lightnews API",
        "version": __version__,
        "openapi": "/api/openapi.json",
        "auth": dict(AUTH),
        "endpoints": endpoints,
    }
