"""`lightnews mcp` driven by the MCP SDK's own client over stdio: tools, a story, the feed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from lightnews.model import Author, Paper, Version
from lightnews.store import SQLiteStore
from lightnews.store.readers import LOCAL_READER

ROOT = Path(__file__).resolve().parents[2]
NOW = "2025-12-01T00:00:00Z"


def _paper(arxiv_id: str, title: str, **fields: Any) -> Paper:
    return Paper(
        arxiv_id,
        title=title,
        abstract="We study sparse attention for long inputs.",
        authors=[Author("Ada Example"), Author("Bo Sample")],
        categories=["cs.LG"],
        published="2025-11-30T10:00:00Z",
        updated="2025-11-30T10:00:00Z",
        versions=[Version(1, "2025-11-30T10:00:00Z")],
        **fields,
    )


@pytest.fixture
def library(tmp_path: Path) -> Path:
    path = tmp_path / "lightnews.db"
    with SQLiteStore(path) as store:
        with store.transaction():
            store.save_papers(
                [
                    _paper(
                        "2511.00001", "Sparse Attention at Scale", comments="Accepted at ICLR 2026"
                    ),
                    _paper("2511.00002", "Dense Attention Revisited"),
                ],
                NOW,
            )
        store.mark_story(LOCAL_READER, "2511.00002", NOW, read=True)
    return path


async def _session_calls(db: Path) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from pydantic import AnyUrl

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lightnews", "--db", str(db), "mcp"],
        env={
            "PYTHONPATH": str(ROOT),
            "LIGHTNEWS_SEMANTIC": "off",
            "HOME": os.environ.get("HOME", str(db.parent)),
        },
    )
    found: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
        found["resources"] = [str(r.uri) for r in (await session.list_resources()).resources]
        story = await session.call_tool("story", {"arxiv_id": "arXiv:2511.00001v1"})
        found["story"] = json.loads(story.content[0].text)  # type: ignore[union-attr]
        missing = await session.call_tool("story", {"arxiv_id": "2511.99999"})
        found["missing"] = (missing.isError, missing.content[0].text)  # type: ignore[union-attr]
        hits = await session.call_tool("search", {"query": "sparse attention"})
        found["search"] = json.loads(hits.content[0].text)  # type: ignore[union-attr]
        named = await session.call_tool("resolve", {"text": "see arXiv:2511.00002 for more"})
        found["resolve"] = json.loads(named.content[0].text)  # type: ignore[union-attr]
        unseen = await session.read_resource(AnyUrl("lightnews://feed/unseen"))
        found["unseen"] = json.loads(unseen.contents[0].text)  # type: ignore[union-attr]
    return found


def test_mcp_client_lists_tools_gets_a_story_and_the_unseen_feed(library: Path) -> None:
    found = anyio.run(_session_calls, library)
    assert found["tools"] == ["feed", "resolve", "scholar", "search", "story"]
    assert found["resources"] == ["lightnews://feed/unseen"]
    story = found["story"]
    assert story["arxiv_id"] == "2511.00001" and story["authors"] == ["Ada Example", "Bo Sample"]
    assert story["venue"]["label"] == "ICLR 2026"
    is_error, message = found["missing"]
    assert is_error and "2511.99999 is not stored" in message
    assert found["search"][0]["arxiv_id"] == "2511.00001"
    assert [r["arxiv_id"] for r in found["resolve"]] == ["2511.00002"]
    # The read story is not in the unseen feed; the other one is, saying why.
    assert [s["arxiv_id"] for s in found["unseen"]] == ["2511.00001"]
    assert "accepted at ICLR 2026" in found["unseen"][0]["why"]


def test_the_scholar_tool_says_whether_the_asking_reader_follows(tmp_path: Path) -> None:
    """Issue 31: the scholar tool revealed other readers' follows."""
    from lightnews.mcp.server import build_server
    from lightnews.settings import Settings

    with SQLiteStore(tmp_path / "lightnews.db") as store:
        ada = store.add_user("ada", "x", admin=True, now=NOW)
        bob = store.add_user("bob", "x", admin=False, now=NOW)
        mara = store.create_scholar("Mara Lindqvist", NOW)
        store.set_followed(bob.reader, mara, True, NOW)

        async def followed(reader: Any) -> bool:
            server = build_server(store, Settings(environ={}), reader)
            result = await server.call_tool("scholar", {"who": "Mara Lindqvist"})
            blocks = result[0] if isinstance(result, tuple) else result
            return bool(json.loads(blocks[0].text)["scholar"]["followed"])

        assert anyio.run(followed, bob.reader) is True
        assert anyio.run(followed, ada.reader) is False  # bob's follow, not ada's


def test_the_story_tool_carries_the_conversation(tmp_path: Path, settings: Any) -> None:
    """What people say of a paper on Bluesky reaches an assistant as it reaches the page:
    the demo's leaderboard paper, a post its followed co-author reposted, a mirror folded."""
    from lightnews.demo import build_demo
    from lightnews.mcp.server import build_server

    with SQLiteStore(tmp_path / "lightnews.db") as store:
        build_demo(store, settings)

        async def story() -> dict[str, Any]:
            server = build_server(store, settings, LOCAL_READER)
            result = await server.call_tool("story", {"arxiv_id": "2511.10268"})
            blocks = result[0] if isinstance(result, tuple) else result
            return dict(json.loads(blocks[0].text))

        talk = anyio.run(story)["conversation"]
    [unit] = talk["units"]
    assert [p["handle"] for p in unit["posts"]] == ["pdeshmane.bsky.social"]
    assert unit["reposted_by"] == ["maralindqvist.bsky.social"]
    assert talk["bot_posts"] == 1


def test_every_malformed_request_gets_an_answer(library: Path) -> None:
    """A broken line, a non-request, a batch, a request with bad params: each is answered
    with its JSON-RPC error (before, some got only a log line, and the client waited)."""
    import select
    import subprocess

    process = subprocess.Popen(
        [sys.executable, "-m", "lightnews", "--db", str(library), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={
            "PYTHONPATH": str(ROOT),
            "LIGHTNEWS_SEMANTIC": "off",
            "HOME": os.environ.get("HOME", str(library.parent)),
        },
    )
    assert process.stdin is not None and process.stdout is not None

    def ask(line: str) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(line.encode() + b"\n")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 20)
        assert ready, f"no answer to {line!r}"
        answer: dict[str, Any] = json.loads(process.stdout.readline())
        return answer

    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        }
        assert (
            ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))[
                "id"
            ]
            == 1
        )
        process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        cases = {
            "{not json": (None, -32700),
            json.dumps({"hello": 1}): (None, -32600),
            json.dumps({"jsonrpc": "2.0", "id": 8}): (8, -32600),
            json.dumps([{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}]): (None, -32600),
            json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": [1, 2]}): (
                6,
                -32600,
            ),
        }
        for line, (ident, code) in cases.items():
            answer = ask(line)
            assert answer["id"] == ident and answer["error"]["code"] == code, (line, answer)
        listed = ask(json.dumps({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}))
        assert "story" in {t["name"] for t in listed["result"]["tools"]}  # still serving
    finally:
        process.kill()
        process.wait()
