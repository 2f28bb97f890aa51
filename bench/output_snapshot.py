"""Every page, API answer and CLI output of the demo, saved and compared across versions.

A refactor that must change nothing a user sees (the typed store, issue 9)
is checked by building the demo with each version and comparing everything
it shows: every web page and ``/api`` answer for every paper, item, scholar,
source and day, searches with filters, feeds as Atom and JSON Feed, and the
``--json`` and text output of the read commands. Times stamped at build
(``first_seen``), form tokens and folder names are normalized away.

    git worktree add --detach /tmp/before main
    PYTHONPATH=/tmp/before .venv/bin/python bench/output_snapshot.py save /tmp/snap-before
    PYTHONPATH=$PWD .venv/bin/python bench/output_snapshot.py save /tmp/snap-after
    .venv/bin/python bench/output_snapshot.py compare /tmp/snap-before /tmp/snap-after

``PYTHONPATH`` chooses the version whose code builds the snapshot.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

QUERIES = ("attention", "benchmark", "2510.03172", "sparse attention -ring", "model")


def _cli(db: Path, *args: str) -> str:
    env = dict(os.environ, LIGHTNEWS_RESOLVE_ONLINE="false")
    done = subprocess.run(
        [sys.executable, "-m", "lightnews", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return done.stdout


def save(out: Path) -> None:
    from starlette.testclient import TestClient

    from lightnews.settings import Settings

    try:
        from lightnews.serve.app import create_app
    except ImportError:  # a version before the web split (issue 28) builds the "before"
        from lightnews.serve.web import create_app  # type: ignore[import-not-found,no-redef]

    out.mkdir(parents=True, exist_ok=True)
    db = out / "demo.db"
    for old in out.glob("demo.db*"):
        old.unlink()
    (out / "demo.txt").write_text(_cli(db, "demo"))
    con = sqlite3.connect(db)
    papers = [r[0] for r in con.execute("SELECT arxiv_id FROM papers ORDER BY arxiv_id")]
    items = [r[0] for r in con.execute("SELECT id FROM items ORDER BY id")]
    scholars = [r[0] for r in con.execute("SELECT id FROM scholars ORDER BY id")]
    sources = [r[0] for r in con.execute("SELECT id FROM sources ORDER BY id")]
    days = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT json_extract(extra, '$.featured_day') FROM items WHERE kind = 'daily'"
        )
        if r[0]
    ]
    urls = [
        "/",
        "/api/feed",
        "/?format=atom",
        "/?format=jsonfeed",
        "/sources",
        "/api/sources",
        "/daily",
        "/api/daily",
        "/search",
        "/api/openapi.json",
    ]
    for q in QUERIES:
        urls += [f"/search?q={q}", f"/api/search?q={q}", f"/api/search?q={q}&subject=cs.LG"]
        urls += [f"/api/search?q={q}&source_kind={k}" for k in ("bluesky", "hf-daily", "notes")]
    for p in papers:
        urls += [f"/paper/{p}", f"/api/paper/{p}", f"/paper/{p}?format=bibtex"]
    urls += [u for i in items for u in (f"/item/{i}", f"/api/item/{i}")]
    for s in scholars:
        urls += [
            f"/scholar/{s}",
            f"/api/scholar/{s}",
            f"/scholar/{s}?tab=papers",
            f"/api/scholar/{s}?tab=papers",
            f"/scholar/{s}?format=atom",
        ]
    urls += [u for s in sources for u in (f"/notes/{s}", f"/api/notes/{s}")]
    urls += [u for d in days for u in (f"/daily/{d}", f"/api/daily/{d}")]
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    web: dict[str, Any] = {}
    with TestClient(create_app(db, settings), base_url="http://127.0.0.1") as client:
        for url in urls:
            answer = client.get(url)
            web[url] = [answer.status_code, answer.text]
    cli: dict[str, str] = {}
    commands = [
        ["feed", "--json"],
        ["feed", "--json", "--newest"],
        ["feed"],
        ["export"],
        ["scholars", "list", "--json"],
        ["scholars", "list"],
        ["sources", "list", "--json"],
        ["search", "attention", "--json"],
        ["related", "2511.18342", "--json"],
    ]
    commands += [["show", p, *extra] for p in papers for extra in ([], ["--json"], ["--bibtex"])]
    commands += [["scholar", str(s), *extra] for s in scholars for extra in ([], ["--json"])]
    for command in commands:
        cli[" ".join(command)] = _cli(db, *command)
    (out / "web.json").write_text(json.dumps(web, indent=1, sort_keys=True, ensure_ascii=False))
    (out / "cli.json").write_text(json.dumps(cli, indent=1, sort_keys=True, ensure_ascii=False))
    print(f"{len(web)} pages and answers, {len(cli)} command outputs in {out}")


_STAMP = re.compile(r"(\d{4}-\d\d-\d\d)[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|\+00:00)?")


def _normal(value: Any, folder: str, today: str) -> Any:
    """Build-time stamps, form tokens and the snapshot's folder made equal; JSON text parsed."""
    if isinstance(value, str):
        text = value.replace(folder, "DIR")
        text = re.sub(r'name="csrf_token" value="[0-9a-f]+"', "CSRF", text)
        text = re.sub(r"<updated>[^<]*</updated>", "<updated/>", text)
        text = re.sub(r'"(?:exported|date_modified)": ?"[^"]*"', '"STAMP"', text)
        if text.lstrip().startswith(("{", "[")):
            try:
                return _normal(json.loads(text), folder, today)
            except ValueError:
                pass
        return _STAMP.sub(lambda m: "NOW" if m[1] == today else m[0], text)
    if isinstance(value, list):
        return [_normal(v, folder, today) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v, folder, today) for k, v in value.items()}
    return value


def compare(before: Path, after: Path) -> int:
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    differences = 0
    for name in ("web.json", "cli.json"):
        old = _normal(json.loads((before / name).read_text()), str(before), today)
        new = _normal(json.loads((after / name).read_text()), str(after), today)
        for key in sorted(set(old) | set(new)):
            if old.get(key) == new.get(key):
                continue
            differences += 1
            print(f"DIFFERS {name} {key}")
            lines = [
                json.dumps(side.get(key), indent=1, sort_keys=True, ensure_ascii=False).splitlines()
                for side in (old, new)
            ]
            for line in list(difflib.unified_diff(*lines, lineterm="", n=0))[2:12]:
                print("   ", line[:200])
    demo = [
        (folder / "demo.txt").read_text().replace(str(folder), "DIR") for folder in (before, after)
    ]
    if demo[0] != demo[1]:
        differences += 1
        print("DIFFERS demo.txt")
    print(f"{differences} differences")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("save").add_argument("out", type=Path)
    both = commands.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "save":
        save(args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
