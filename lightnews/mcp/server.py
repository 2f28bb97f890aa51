"""The library as an MCP server: an assistant can search, read stories and the reader's feed.

``lightnews mcp`` speaks the Model Context Protocol over standard input and
output (the official ``mcp`` SDK), so a desktop assistant or an editor can use
a researcher's own library the way the CLI and the web pages do: the same
store reads, the same ranking, the same JSON shapes (each view's
``to_json``). Tools: ``search``, ``story``, ``scholar``, ``feed`` and
``resolve``; one resource, ``lightnews://feed/unseen``: the ranked feed
without the stories the reader has already read. Tools only read (``resolve``
links text against the library and never fetches: it runs offline).

Each tool is a module-level function taking the :class:`Library` (store,
settings, the asking reader) and its arguments and returning a JSON value;
:data:`TOOLS` registers them (name, description, handler), and
:func:`build_server` only binds each to the library. A new tool is one
function and one row. A tool that cannot answer (no such paper, an ambiguous
scholar) raises a ``ToolError``; the SDK returns it as the tool's error, with
the message a CLI user would see.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from lightnews.errors import LightnewsError
from lightnews.settings import Settings
from lightnews.store import ReaderId, Store

__all__ = [
    "TOOLS",
    "UNSEEN_FEED",
    "Library",
    "Tool",
    "build_server",
    "malformed_answer",
    "serve_stdio",
    "unseen_feed",
]  # the tools' functions are reached through TOOLS

#: The resource of stories the reader has not read yet.
UNSEEN_FEED = "lightnews://feed/unseen"

#: What the server tells an assistant it is for.
INSTRUCTIONS = (
    "A researcher's Lightnews library: arXiv papers and what the scholars they follow "
    "post and write about them. Use search to find papers, story for one paper with "
    "its versions, venue, code and mentions, scholar for a person's papers and posts, "
    "feed for the ranked news (each entry says why), resolve to find which papers a "
    f"text names. The resource {UNSEEN_FEED} is the feed without what was read."
)


@dataclass(frozen=True, slots=True)
class Library:
    """What every tool answers from: the library's store and settings, and the reader
    asking (whose feed, unseen stories and follows the answers are)."""

    store: Store
    settings: Settings
    reader: ReaderId


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def unseen_feed(
    store: Store, settings: Settings, reader: ReaderId, limit: int = 30
) -> list[dict[str, Any]]:
    """The ranked feed without the stories ``reader`` has read (each entry says why)."""
    from lightnews.rank import rank_stories

    read = {key for key, (read_at, _) in store.story_states(reader).items() if read_at}
    stories = rank_stories(
        store,
        reader,
        limit=None,
        half_life_hours=settings.half_life_hours,
        bar=settings.attribution_bar,
        settings=settings,
    )
    return [s.to_json() for s in stories if s.key not in read][:limit]


# -- the tools: each takes the library first, then its arguments (the tool's input schema,
# -- made by the SDK from the rest of the signature), and returns a JSON value.


def search(
    library: Library, query: str, limit: int = 10, subject: str | None = None
) -> list[dict[str, Any]]:
    """Papers matching a query, best first."""
    from lightnews.model import SearchFilters
    from lightnews.search import search_papers

    hits = search_papers(
        library.store,
        query,
        limit=max(1, min(limit, 100)),
        filters=SearchFilters(subject=subject),
        settings=library.settings,
    )
    return [h.to_json() for h in hits]


def story(library: Library, arxiv_id: str) -> dict[str, Any]:
    """One paper's story, with everything that mentions it and the first page of its
    conversation (as ``/api/paper`` and ``show --json`` give it)."""
    from lightnews.rank.conversation import read_conversation

    paper = library.store.get_paper(arxiv_id)
    talk = read_conversation(library.store, paper.arxiv_id, library.reader, library.settings.now())
    return {**paper.to_json(), "conversation": talk.to_json()}


def scholar(library: Library, who: str, page: int = 1) -> dict[str, Any]:
    """A scholar with their attributed papers and posts (followed: by the asking reader)."""
    from lightnews.serve.scholar import scholar_page

    return scholar_page(
        library.store,
        who,
        page=max(1, page),
        per_page=20,
        bar=library.settings.attribution_bar,
        reader=library.reader,
    ).to_json()


def feed(library: Library, limit: int = 20, unseen_only: bool = False) -> list[dict[str, Any]]:
    """The reader's ranked feed (or only what they have not read)."""
    from lightnews.rank import rank_stories

    store, settings, size = library.store, library.settings, max(1, min(limit, 200))
    if unseen_only:
        return unseen_feed(store, settings, library.reader, size)
    stories = rank_stories(
        store,
        library.reader,
        limit=size,
        half_life_hours=settings.half_life_hours,
        bar=settings.attribution_bar,
        settings=settings,
        keep_read=True,
    )
    return [s.to_json() for s in stories]


def resolve(library: Library, text: str) -> list[dict[str, Any]]:
    """The papers a text names, surest first; offline (only the library is read)."""
    from lightnews.ingest.resolve import resolve_bytes

    store = library.store
    result = resolve_bytes(store, text.encode("utf-8"), library.settings, kind="text")
    known = store.papers_by_ids([m.arxiv_id for m in result.mentions])
    return [
        {
            "arxiv_id": m.arxiv_id,
            "method": m.method,
            "confidence": m.confidence,
            "title": known[m.arxiv_id].title if m.arxiv_id in known else "",
        }
        for m in sorted(result.mentions, key=lambda m: m.confidence, reverse=True)
    ]


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool an assistant can call: its name, what it tells the assistant it does, and
    the function answering it (``handler(library, **arguments)``, a JSON value)."""

    name: str
    description: str
    handler: Callable[..., Any]

    @classmethod
    def of(cls, handler: Callable[..., Any], description: str) -> Tool:
        """A tool named as its function is (so the name and the function cannot part)."""
        return cls(handler.__name__, description, handler)


#: Every tool the server offers, in the order it lists them.
TOOLS: tuple[Tool, ...] = (
    Tool.of(
        search, 'Papers matching a query (words, "phrases", -excluded), best first; JSON list.'
    ),
    Tool.of(
        story,
        "One paper's story: authors, abstract, versions and what changed, venue, "
        "code links, withdrawal, every item that mentions it and what people say of it "
        "on Bluesky (threads whole, followed scholars first); JSON object.",
    ),
    Tool.of(
        scholar,
        "A scholar (name, handle, ORCID or id) with their attributed papers and posts; JSON.",
    ),
    Tool.of(feed, "The reader's ranked feed, each entry with why it is there; JSON list."),
    Tool.of(
        resolve,
        'Which papers a text names (arXiv ids, DOIs, titles, "Surname: short '
        'title"), with how each was found and how sure; JSON list (offline: only the '
        "library is read).",
    ),
)


def _answer(work: Callable[[], Any]) -> str:
    """``work``'s value as JSON text; what cannot be answered is the tool's error, in the
    words a CLI user would see."""
    from mcp.server.fastmcp.exceptions import ToolError

    try:
        return _json(work())
    except LightnewsError as error:
        raise ToolError(str(error)) from None


def _bound(tool: Tool, library: Library) -> Callable[..., str]:
    """``tool``'s handler answering from ``library``, as the SDK registers a function: its
    signature (from which the SDK makes the tool's input schema) is the handler's without
    the library, and it returns JSON text."""

    def call(**arguments: Any) -> str:
        return _answer(lambda: tool.handler(library, **arguments))

    signature = inspect.signature(tool.handler, eval_str=True)
    arguments = list(signature.parameters.values())[1:]
    # mypy knows no __signature__ on a function; inspect reads it (the SDK builds the schema).
    setattr(call, "__signature__", signature.replace(parameters=arguments, return_annotation=str))  # noqa: B010
    call.__name__ = call.__qualname__ = tool.name
    return call


def build_server(store: Store, settings: Settings, reader: ReaderId) -> Any:
    """An MCP server (the SDK's ``FastMCP``) answering from ``store`` for ``reader``
    (the feed, its unseen stories and who counts as followed are that reader's)."""
    from mcp.server.fastmcp import FastMCP

    from lightnews import __version__

    server = FastMCP(f"lightnews {__version__}", instructions=INSTRUCTIONS)
    library = Library(store, settings, reader)
    for tool in TOOLS:
        server.add_tool(_bound(tool, library), name=tool.name, description=tool.description)

    @server.resource(
        UNSEEN_FEED,
        name="unseen feed",
        mime_type="application/json",
        description="The ranked feed without the stories already read.",
    )
    def unseen() -> str:
        return _answer(lambda: unseen_feed(store, settings, reader))

    return server


def malformed_answer(line: str) -> str | None:
    """The JSON-RPC error that answers ``line``, or None when it is a message to serve.

    The SDK's own stdio transport only logs what it cannot read ("Internal Server
    Error" as a notification), so a client that sent a broken request waits for an
    answer that never comes. JSON-RPC 2.0 says: a parse error (-32700) or an invalid
    request (-32600), with the request's id when one can be read, else null.
    """
    from mcp.types import JSONRPCMessage
    from pydantic import ValidationError

    try:
        document = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        return _error(None, -32700, f"Parse error: {error}")
    if isinstance(document, list):
        return _error(None, -32600, "Invalid Request: batches are not taken, send one at a time")
    try:
        JSONRPCMessage.model_validate(document)
    except ValidationError as error:
        found = document.get("id") if isinstance(document, dict) else None
        ident = found if isinstance(found, str | int) and not isinstance(found, bool) else None
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "message"
        return _error(ident, -32600, f"Invalid Request: {where}: {first['msg']}")
    return None


def _error(ident: str | int | None, code: int, message: str) -> str:
    payload = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message[:500]}}
    return orjson.dumps(payload).decode()


def serve_stdio(server: Any) -> None:
    """Run ``server`` (from :func:`build_server`) on standard input and output, answering
    every line: what cannot be read gets its JSON-RPC error (:func:`malformed_answer`)."""
    import sys
    from io import TextIOWrapper

    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCMessage

    async def run() -> None:
        stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        stdout = anyio.wrap_file(TextIOWrapper(sys.stdout.buffer, encoding="utf-8"))
        incoming_writer, incoming = anyio.create_memory_object_stream[SessionMessage | Exception]()
        outgoing, outgoing_reader = anyio.create_memory_object_stream[SessionMessage]()
        lock = anyio.Lock()

        async def emit(text: str) -> None:
            async with lock:  # one whole line at a time, answers and errors alike
                await stdout.write(text + "\n")
                await stdout.flush()

        async def read() -> None:
            async with incoming_writer:
                async for line in stdin:
                    if not line.strip():
                        continue
                    problem = malformed_answer(line)
                    if problem is not None:
                        await emit(problem)
                        continue
                    message = JSONRPCMessage.model_validate_json(line)
                    await incoming_writer.send(SessionMessage(message))

        async def write() -> None:
            async with outgoing_reader:
                async for sent in outgoing_reader:
                    await emit(sent.message.model_dump_json(by_alias=True, exclude_none=True))

        core = server._mcp_server  # FastMCP's low-level server (no public name for it in mcp 1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            await core.run(incoming, outgoing, core.create_initialization_options())
            tasks.cancel_scope.cancel()

    anyio.run(run)
