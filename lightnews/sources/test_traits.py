"""Source traits: each kind declares what the core needs, and the core never names a kind."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lightnews.sources import (
    NO_NETWORK,
    SourceTraits,
    all_traits,
    kind_traits,
    kinds_where,
    network,
    registry,
)

PACKAGE = Path(__file__).resolve().parent.parent
#: The core: ranking, storage and pages learn about kinds only through their traits.
CORE = ("rank", "store", "serve", "deliver", "mcp")


def test_traits_say_what_the_core_needs() -> None:
    assert kind_traits("bluesky").social and kind_traits("hf-daily").daily_papers
    assert kinds_where(lambda t: t.in_opml) == ["feed"]
    assert kinds_where(lambda t: t.note_pages) == ["notes"]
    assert kind_traits("no-such-kind") == SourceTraits()
    assert set(all_traits()) == set(registry())


def test_repost_keys_and_topics_round_trip() -> None:
    social = kind_traits("bluesky")
    key = social.repost_key("did:plc:abc", "at://did:plc:xyz/app.bsky.feed.post/1")
    assert social.reposter(key) == "did:plc:abc"
    assert social.reposter("at://did:plc:xyz/app.bsky.feed.post/1") is None
    low, high = social.reposts_by("did:plc:abc") or ("", "")
    assert low <= key < high and not low <= "repost:did:plc:abcd:x" < high
    assert kind_traits("feed").reposts_by("did:plc:abc") is None
    topics = kind_traits("arxiv-api")
    assert topics.topic(topics.topic_address("cs.LG")) == "cs.LG"
    assert topics.topic('au:"Sepp Hochreiter"') is None


def _python_literals(path: Path) -> list[tuple[int, str]]:
    """String constants of a module, except form field names (``form.get("feed")``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fields = {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "form"
        and node.args
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in fields
    ]


def _template_code(path: Path) -> list[tuple[int, str]]:
    """What a template computes: the insides of ``{% ... %}`` and ``{{ ... }}``."""
    text = path.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m[1])
        for m in re.finditer(r"\{[%{](.*?)[%}]\}", text, re.S)
    ]


def test_no_source_kind_is_named_in_ranking_storage_or_pages() -> None:
    kinds = sorted(registry(), key=len, reverse=True)
    alternatives = "|".join(re.escape(k) for k in kinds)
    named = re.compile(rf"""(?:^|['"])(?:{alternatives})(?:$|['"])|repost:""")
    found = []
    for package in CORE:
        for path in sorted((PACKAGE / package).rglob("*")):
            if path.name.startswith("test_"):
                continue
            if path.suffix == ".py":
                pieces = _python_literals(path)
            elif path.suffix == ".html":
                pieces = _template_code(path)
            else:  # migrations are history: applied as they were written
                continue
            found += [
                f"{path.relative_to(PACKAGE)}:{line}: {text[:80]!r}"
                for line, text in pieces
                if named.search(text)
            ]
    assert found == [], "kind-specific rules belong on the source's traits:\n" + "\n".join(found)


def test_the_network_is_declared_by_its_kind() -> None:
    posts = network()
    assert posts is kind_traits("bluesky").network and posts.service == "bluesky"
    uri = "at://did:plc:abc/app.bsky.feed.post/3k"
    assert posts.author(uri) == "did:plc:abc" and posts.author("https://example.org/") == ""
    assert posts.post_url(uri, "ada.bsky.social") == (
        "https://bsky.app/profile/ada.bsky.social/post/3k"
    )
    assert NO_NETWORK.post_url(uri, "") is None and NO_NETWORK.author(uri) == ""


def test_ranking_and_storage_import_no_source_kind() -> None:
    """Bluesky's names reach the ranker and the store through its traits, not its modules."""
    allowed = {"lightnews.sources", "lightnews.sources.libraries"}  # traits; reference libraries
    found = []
    for package in ("rank", "store"):
        for path in sorted((PACKAGE / package).rglob("*.py")):
            if path.name.startswith("test_"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                where = f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)}"
                kinds = [n for n in names if n.startswith("lightnews.sources") and n not in allowed]
                found += [f"{where}: {name}" for name in kinds]
    assert found == [], "read the source's traits instead:\n" + "\n".join(found)
