"""The links between the project's documents lead somewhere.

README.md and docs/*.md link to each other and to sections of each other
(``benchmarks.md`` points into ``benchmarks-history.md`` section by section).
A renamed heading or a moved file breaks such a link silently; this test
resolves every relative link, and every ``#anchor`` the way GitHub makes one
from a heading, so the break shows in the suite instead of in a reader's
browser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a ``#`` in a shell block is no heading)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file, repeated headings numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The relative links of a Markdown file (web addresses and mail are left out)."""
    return [
        target
        for line in prose_lines(path.read_text(encoding="utf-8"))
        for target in LINK.findall(line)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)
    ]


def test_the_slug_is_githubs() -> None:
    assert slug("Snapshot import (`bench/snapshot_import.py`)") == (
        "snapshot-import-benchsnapshot_importpy"
    )
    assert slug("Re-measured (2026-12-03, 14:33–14:39 UTC)") == (
        "re-measured-2026-12-03-14331439-utc"
    )


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_between_documents_resolves(doc: Path) -> None:
    broken = []
    for target in links(doc):
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading makes #{anchor}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)
