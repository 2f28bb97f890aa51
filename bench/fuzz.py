"""Fuzzing the parsers: a bounded, fresh run of mutated real inputs through every parser.

Every parser must be total over its input type: bad bytes are a ParseError
with a message (the whole document is unreadable) or cost the field or item
they are in, never an uncaught exception. This script takes the real
recordings in ``../shared/fixtures`` and the demo snapshot
(``lightnews/demo/snapshot``) as seeds, mutates them (cuts, deleted and
repeated spans, spliced seeds, hostile tokens such as ``&#x110000;``, dates
past year 9999, control characters, 4,301-digit numbers and ``javascript:``
links put inside text, and, for JSON seeds, any value of the document
replaced by a value of another type), and feeds ``--inputs`` of them to the
parsers in turn, each under a time limit. For every output it also checks
what the store relies on: every stored URL is http(s) and every string can
be written as UTF-8.

It reports, per parser, how many inputs were read, refused with a
ParseError, or raised anything else (with the exception types and a saved
example each, in ``--save``), and exits 1 when anything raised::

    .venv/bin/python bench/fuzz.py --inputs 50000 --seed 1 --save bench/out/fuzz

``--adversarial`` instead times hostile bodies as large as a response may be
(``http_max_bytes``, 15 MB): one field made huge (author, title, text, link,
date, attribute values), deep nesting, many entries, many links, categories
or attributes, in RSS, Atom and JSON Feed, and the longest string or the
longest list of real Bluesky and Daily Papers responses blown up. Each is
read as a refresh reads it, and its CPU time is reported; it exits 1 when one
takes over 5 s or raises::

    .venv/bin/python bench/fuzz.py --adversarial

The in-suite property tests (``lightnews/sources/test_fuzz.py``) run the
same kind of inputs, bounded to a few seconds per parser.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from lightnews.errors import LightnewsError  # noqa: E402
from lightnews.model import Batch, Item, SourceState  # noqa: E402
from lightnews.normalize import (  # noqa: E402
    clean_text,
    html_to_text,
    iso_utc,
    parse_arxiv_id,
    sanitize_html,
    tex_to_unicode,
)
from lightnews.normalize.names import split_author_list  # noqa: E402
from lightnews.normalize.urls import safe_url  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.sources import get_source_class  # noqa: E402
from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot  # noqa: E402
from lightnews.sources.opml import parse_opml  # noqa: E402

SHARED = ROOT.parent / "shared" / "fixtures"
DEMO = ROOT / "lightnews" / "demo" / "snapshot"
DATA = ROOT / "tests" / "data"
MAX_SEED = 120_000
SECONDS_PER_INPUT = 5.0

TOKENS = [
    b"&#x110000;",
    b"&#xD800;",
    b"&#99999999999999999999;",
    b"&#0;",
    b"&#x1F600;",
    b"\x00",
    b"\x01",
    b"\x0b",
    b"\x0c",
    b"\x1b",
    b"\x7f",
    b"\xff\xfe",
    b"\xc3",
    b"\xed\xa0\x80",
    b"9999-12-31T23:59:59-05:00",
    b"0001-01-01T00:00:00+05:00",
    b"Fri, 31 Dec 9999 23:59:59 -0500",
    b"10000-01-01",
    b"9" * 4301,
    b"v" + b"9" * 4301,
    b"-1",
    b"1e400",
    b"javascript:alert(1)",
    b"JaVaScRiPt:alert(1)",
    b"data:text/html,<script>x</script>",
    b" java\tscript:alert(1)",
    b"HTTP://EXAMPLE.ORG/",
    b"https://user@evil.example/",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"<!DOCTYPE x [<!ENTITY a 'b'>]>",
    b"&a;",
    b"&amp;",
    b"<",
    b">",
    b'"',
    b"'",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"null",
    b"true",
    b"\n# ",
    b"\n## Snell: ",
    b"<h2>",
    b"</h2>",
    b"<georss:point>1 2 3</georss:point>",
    b"<georss:polygon>a b c</georss:polygon>",
    b"<georss:box>1</georss:box>",
    b'xmlns:georss="http://www.georss.org/georss"',
    b'xmlns:gml="http://www.opengis.net/gml"',
    b"<georss:where><gml:Polygon><gml:exterior><gml:LinearRing><gml:posList>a b"
    b"</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon></georss:where>",
    b"<georss:where><gml:Point srsDimension='x'><gml:pos>1 2</gml:pos></gml:Point></georss:where>",
    b"\\\\",
    b"arXiv:",
    b"Date: ",
    b"Date (revised v2): ",
    b"\xf0\x9f\x98\x80",
    b"\xe2\x80\xae",
]
STRINGS = [
    "",
    " ",
    "x" * 5000,
    "9999-12-31T23:59:59-05:00",
    "0001-01-01T00:00:00+05:00",
    "Fri, 31 Dec 9999 23:59:59 -0500",
    "javascript:alert(1)",
    "HTTP://EXAMPLE.ORG/a",
    "data:text/html,x",
    "\x00",
    "\x0b\x0c",
    "v" + "9" * 4301,
    "2501.00001",
    "2501.00001v" + "9" * 50,
    "https://user@evil.example/",
    "at://did:plc:x/app.bsky.feed.post/y",
    "did:plc:x",
    "\u202e",
]


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(12 if depth < 2 else 10)
    if pick == 10:
        return [_random_json(rng, depth + 1)]
    if pick == 11:
        return {"k": _random_json(rng, depth + 1)}
    return [None, True, 0, -1, 10**30, 1.5, rng.choice(STRINGS), "x", [], {}][pick]


def _paths(
    value: Any,
    path: tuple[Any, ...] = (),
    out: list[tuple[Any, ...]] | None = None,
    limit: int = 3000,
) -> list[tuple[Any, ...]]:
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    out.append(path)
    if isinstance(value, dict):
        for key, child in value.items():
            _paths(child, (*path, key), out, limit)
    elif isinstance(value, list):
        for index, child in enumerate(value[:50]):
            _paths(child, (*path, index), out, limit)
    return out


def _mutate_json(document: Any, rng: random.Random) -> bytes:
    doc = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        paths = _paths(doc)
        path = rng.choice(paths)
        if not path:
            doc = _random_json(rng)
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if rng.random() < 0.15 and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = _random_json(rng)
    return json.dumps(doc).encode()  # json, not orjson: it writes lone surrogates escaped


def _mutate_bytes(data: bytes, rng: random.Random, seeds: list[bytes]) -> bytes:
    for _ in range(rng.randint(1, 3)):
        size = len(data)
        at = rng.randrange(size + 1)
        kind = rng.randrange(8)
        texts = list(re.finditer(rb">([^<>]{1,300})<", data[:200_000])) if kind == 7 else []
        if texts:
            # An XML or HTML text node replaced by a hostile value, escaped or not.
            node = rng.choice(texts)
            value = rng.choice(STRINGS).encode("utf-8", "surrogatepass")
            if rng.random() < 0.5:
                value = value.replace(b"&", b"&amp;").replace(b"<", b"&lt;")
            data = data[: node.start(1)] + value + data[node.end(1) :]
        elif kind == 0:
            data = data[:at]
        elif kind == 1 and size:
            end = min(size, at + rng.randint(1, 200))
            data = data[:at] + data[end:]
        elif kind == 2 and size:
            end = min(size, at + rng.randint(1, 200))
            data = data[:end] + data[at:end] * rng.randint(1, 20) + data[end:]
        elif kind == 3:
            other = rng.choice(seeds)
            cut = rng.randrange(len(other) + 1)
            data = data[:at] + other[cut:]
        elif kind == 4 and size:
            flips = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                flips[rng.randrange(size)] = rng.randrange(256)
            data = bytes(flips)
        else:
            # Hostile tokens, preferably inside text (just after a '>' or a '"').
            text_at = [m.end() for m in re.finditer(rb'[>"]', data[:200_000])]
            place = rng.choice(text_at) if text_at and rng.random() < 0.7 else at
            data = data[:place] + rng.choice(TOKENS) + data[place:]
    return data


# -- targets -----------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    run: Callable[[bytes], Any]
    seeds: list[bytes] = field(default_factory=list)
    json_seeds: list[Any] = field(default_factory=list)


def _source(kind: str, address: str = "https://example.org/x") -> Callable[[bytes], Any]:
    source = get_source_class(kind)(address, {}, Settings(environ={}))

    def run(body: bytes) -> Batch:
        return source.read(body, SourceState(), url=address)

    return run


def _snapshot(body: bytes) -> Any:
    import io

    return list(iter_snapshot(io.BytesIO(body), SnapshotErrors()))


def _text(function: Callable[[str], Any]) -> Callable[[bytes], Any]:
    def run(body: bytes) -> Any:
        return function(body.decode("utf-8", "replace"))

    return run


def _files(*patterns: tuple[Path, str]) -> list[bytes]:
    found: list[bytes] = []
    for folder, pattern in patterns:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and path.stat().st_size <= MAX_SEED:
                found.append(path.read_bytes())
    return found


def _first_items(path: Path, tag: bytes, keep: int, close: bytes) -> list[bytes]:
    """A big feed cut to its first ``keep`` entries (so that a seed parses in milliseconds)."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    starts = [m.start() for m in re.finditer(b"<" + tag + b"[ >]", data)]
    if len(starts) <= keep:
        return [data]
    return [data[: starts[keep]] + close]


def _api_bodies() -> list[bytes]:
    bodies = []
    folder = SHARED / "arxiv" / "api-2026"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            body = json.loads(path.read_text())["body"].encode("latin-1")
            if len(body) <= MAX_SEED:
                bodies.append(body)
    return bodies


def targets() -> list[Target]:
    feeds = SHARED / "feeds"
    tests = feeds / "feedparser-tests" / "tests"
    lab = sorted((feeds / "lab-blogs").glob("*.xml")) if (feeds / "lab-blogs").is_dir() else []
    feed_seeds = _files(
        (DEMO, "blog-*"),
        (SHARED / "seed-pages" / "blog", "*.xml"),
        (tests / "illformed", "*.xml"),
        (tests / "wellformed" / "rss", "*.xml"),
        (tests / "wellformed" / "atom10", "*.xml"),
        (tests / "wellformed" / "geo", "*.xml"),
        (tests / "entities", "*.xml"),
    )
    for path in lab:
        feed_seeds += _first_items(path, b"item", 3, b"</channel></rss>")
    abs_folder = SHARED / "arxiv" / "abs"
    abs_seeds = (
        [p.read_bytes() for p in sorted(abs_folder.rglob("*.abs"))[::20]]
        if (abs_folder.is_dir())
        else []
    )
    abs_seeds += _files((DATA / "arxiv", "*.abs"))
    hf_feed = _files(
        (SHARED / "corpus" / "hf-papers" / "snapshots", "*.json"), (DATA / "hf", "papers*")
    )
    hf_feed = [
        json.dumps({**d, "items": d.get("items", [])[:20]}).encode()
        if isinstance(d := json.loads(b), dict)
        else b
        for b in hf_feed
    ]
    snapshot_lines = (DATA / "arxiv" / "snapshot-small.jsonl").read_bytes().splitlines(True)[:40]
    all_targets = [
        Target("feed", _source("feed"), feed_seeds),
        Target(
            "arxiv-api",
            _source("arxiv-api", "cat:cs.LG"),
            _api_bodies() + _files((SHARED / "arxiv" / "api-2016", "*.xml"), (DEMO, "arxiv-api-*")),
        ),
        Target(
            "arxiv-oai",
            _source("arxiv-oai", "cs"),
            _files((SHARED / "arxiv" / "oai-pmh", "*.xml"), (DEMO, "arxiv-oai-*")),
        ),
        Target("arxiv-abs", _source("arxiv-abs", "file:///x.abs"), abs_seeds),
        Target("arxiv-snapshot", _snapshot, [b"".join(snapshot_lines)]),
        Target(
            "bluesky",
            _source("bluesky", "someone.bsky.social"),
            _files(
                (SHARED / "bluesky" / "atproto-recorded", "*.json"),
                (SHARED / "seed-pages" / "bluesky", "*.json"),
                (DEMO, "bluesky-*"),
                (DATA / "bluesky", "get[APT]*.json"),
            ),
        ),
        Target(
            "bluesky-starter-pack",
            _source("bluesky-starter-pack", "https://bsky.app/starter-pack/a/b"),
            _files((DATA / "bluesky", "get[SL]*.json")),
        ),
        Target(
            "hf-daily",
            _source("hf-daily", ""),
            _files((DEMO, "hf-daily-*"), (DATA / "hf", "daily*")),
        ),
        Target("hf-papers-feed", _source("hf-papers-feed"), hf_feed),
        Target(
            "notes",
            _source("notes", "https://example.org/notes"),
            _files(
                (DEMO, "notes-*"), (SHARED / "seed-pages" / "notes", "*"), (DATA / "notes", "*[ld]")
            ),
        ),
        Target("opml", parse_opml, _files((DEMO, "*.opml"))),
    ]
    texts = [s.encode() for s in STRINGS] + [
        b'J\\"urgen M{\\"u}ller and {\\L}ukasz',
        b"<p>a <b>b</b><a href='javascript:x'>c</a></p>",
    ]
    for name, function in (
        ("normalize.iso_utc", iso_utc),
        ("normalize.safe_url", safe_url),
        ("normalize.parse_arxiv_id", parse_arxiv_id),
        ("normalize.tex_to_unicode", tex_to_unicode),
        ("normalize.split_author_list", split_author_list),
        ("normalize.html_to_text", html_to_text),
        ("normalize.sanitize_html", sanitize_html),
        ("normalize.clean_text", clean_text),
    ):
        all_targets.append(Target(name, _text(function), texts))
    for target in all_targets:
        for seed in target.seeds:
            with contextlib.suppress(ValueError):
                target.json_seeds.append(orjson.loads(seed))
    return [t for t in all_targets if t.seeds]


# -- what every output must satisfy ------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from _strings(key)
            yield from _strings(child)
    elif isinstance(value, list | tuple):
        for child in value:
            yield from _strings(child)


def stored_urls(item: Item) -> list[str | None]:
    """Every URL of ``item`` the store keeps and a page may link: common and typed fields."""
    urls: list[str | None] = [item.url, *item.links, *item.code_links]
    if item.post is not None:
        urls += [item.post.card.uri if item.post.card else None]
        urls += [item.post.quote.url if item.post.quote else None]
    if item.daily is not None:
        daily = item.daily
        urls += [daily.github, daily.project_page, daily.thumbnail]
        urls += [daily.submitter.avatar_url if daily.submitter else None]
    return urls


def check_output(result: Any) -> str | None:
    """What is wrong with a parser's output for the store, or None."""
    if isinstance(result, Batch):
        urls = [u for item in result.items for u in stored_urls(item)]
        for url in urls + [a.avatar for a in result.accounts]:
            if url is not None and safe_url(url) != url:
                return f"unsafe URL stored: {url[:80]!r}"
    for text in _strings(result):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "a string that cannot be stored (lone surrogate)"
    return None


# -- the run -----------------------------------------------------------------------------


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


@dataclass
class Tally:
    inputs: int = 0
    read: int = 0
    refused: int = 0
    seconds: float = 0.0
    raised: Counter[str] = field(default_factory=Counter)
    slow: int = 0


def _schedule(chosen: list[Target], inputs: int, each: int) -> Iterator[Target]:
    """``inputs`` turns shared by the parsers in turn, then ``each`` per normalizer."""
    parsers = [t for t in chosen if not t.name.startswith("normalize.")]
    normalizers = [t for t in chosen if t.name.startswith("normalize.")]
    for number in range(inputs if parsers else 0):
        yield parsers[number % len(parsers)]
    for number in range(each * len(normalizers)):
        yield normalizers[number % len(normalizers)]


def run(
    inputs: int,
    seed: int,
    save: Path | None,
    budget: float | None,
    only: list[str] | None = None,
    normalize_inputs: int = 2000,
) -> dict[str, Tally]:
    rng = random.Random(seed)
    chosen = [t for t in targets() if not only or t.name in only]
    tallies = {t.name: Tally() for t in chosen}
    signal.signal(signal.SIGALRM, _alarm)
    started = time.monotonic()
    for target in _schedule(chosen, inputs, normalize_inputs):
        if budget is not None and time.monotonic() - started > budget:
            break
        tally = tallies[target.name]
        if target.json_seeds and rng.random() < 0.5:
            data = _mutate_json(rng.choice(target.json_seeds), rng)
        else:
            data = _mutate_bytes(rng.choice(target.seeds), rng, target.seeds)
        tally.inputs += 1
        begun = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_INPUT)
        problem: str | None = None
        try:
            problem = check_output(target.run(data))
            tally.read += 1
        except _Timeout:
            tally.slow += 1
        except LightnewsError:
            tally.refused += 1
        except Exception as error:  # what the fuzz is looking for
            problem = f"{type(error).__name__}: {str(error)[:120]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        tally.seconds += time.perf_counter() - begun
        if problem:
            kind = problem.split(":", 1)[0]
            first = kind not in tally.raised
            tally.raised[kind] += 1
            if first and save is not None:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{target.name}.{kind}.bin").write_bytes(data)
                print(f"  {target.name}: {problem}", file=sys.stderr)
    return tallies


# -- adversarial bodies: the most a response may hold ------------------------------------

ADVERSARIAL_SECONDS = 5.0
_RSS = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" '
    b'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    b'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
    b'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>t</title>'
    b"<link>https://example.org/</link>",
    b"</channel></rss>",
)
_ATOM = (
    b'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
    b"<title>t</title><id>urn:feed</id>",
    b"</feed>",
)


def _fill(size: int, unit: bytes) -> bytes:
    return unit * max(1, size // len(unit))


def _rss_item(number: int, inner: bytes) -> bytes:
    return (
        (b"<item><guid>https://example.org/%d</guid><title>t</title>" % number)
        + inner
        + (b"</item>")
    )


def _atom_entry(number: int, inner: bytes) -> bytes:
    return (
        (
            b'<entry><id>urn:%d</id><title>t</title><link href="https://example.org/%d"/>'
            b"<updated>2025-01-01T00:00:00Z</updated>" % (number, number)
        )
        + inner
        + (b"</entry>")
    )


def _document(
    shell: tuple[bytes, bytes],
    entry: Callable[[int, bytes], bytes],
    inner: Callable[[int], bytes],
    size: int,
    per_entry: int,
) -> bytes:
    """A feed of entries whose ``inner(per_entry)`` parts add up to about ``size`` bytes."""
    part = inner(min(per_entry, size))
    count = max(1, size // len(entry(0, part)))
    return shell[0] + b"".join(entry(n, part) for n in range(count)) + shell[1]


def _xml_cases(size: int) -> Iterator[tuple[str, bytes]]:
    fields: dict[str, Callable[[int], bytes]] = {
        "rss author (one word)": lambda n: b"<author>" + _fill(n, b"a") + b"</author>",
        "rss author (e-mail dots)": lambda n: b"<author>a@" + _fill(n, b"a.") + b"</author>",
        "rss author (CDATA)": lambda n: b"<author><![CDATA[" + _fill(n, b"a") + b"]]></author>",
        "rss dc:creator": lambda n: b"<dc:creator>" + _fill(n, b"a") + b"</dc:creator>",
        "rss itunes:keywords": lambda n: (
            b"<itunes:keywords>" + _fill(n, b"k,") + b"</itunes:keywords>"
        ),
        "rss title": lambda n: b"<title>" + _fill(n, b"ab ") + b"</title>",
        "rss description (escaped html)": lambda n: (
            b"<description>"
            + _fill(n, b"&lt;p&gt;arXiv:2401.00001 &lt;a href='https://e.org/'&gt;x&lt;/a&gt;")
            + b"</description>"
        ),
        "rss content:encoded (CDATA html)": lambda n: (
            b"<content:encoded><![CDATA["
            + _fill(n, b"<p><b>x</b> <a href='https://e.org/'>y</a></p>")
            + b"]]></content:encoded>"
        ),
        "rss link": lambda n: b"<link>https://example.org/" + _fill(n, b"a") + b"</link>",
        "rss pubDate": lambda n: b"<pubDate>" + _fill(n, b"1 ") + b"</pubDate>",
        "rss categories": lambda n: b"".join(
            b"<category>c%d</category>" % i for i in range(n // 25)
        ),
        "atom author name": lambda n: b"<author><name>" + _fill(n, b"a") + b"</name></author>",
        "atom many links": lambda n: b"".join(
            b'<link rel="related" href="https://example.org/%d"/>' % i for i in range(n // 48)
        ),
        "atom deep nesting": lambda n: b"<x>" * (n // 7) + b"</x>" * (n // 7),
        "atom xhtml deep nesting": lambda n: (
            b'<content type="xhtml"><div '
            b'xmlns="http://www.w3.org/1999/xhtml">'
            + b"<b>" * (n // 7)
            + b"</b>" * (n // 7)
            + b"</div></content>"
        ),
        "atom huge href": lambda n: (
            b'<link rel="related" href="https://e.org/' + _fill(n, b"a") + b'"/>'
        ),
        "atom huge category term": lambda n: b'<category term="' + _fill(n, b"a") + b'"/>',
        "atom huge xml:base": lambda n: (
            b'<summary xml:base="https://e.org/' + _fill(n, b"a") + b'">x</summary>'
        ),
        "atom many attributes": lambda n: (
            b"<summary " + b"".join(b'a%d="x" ' % i for i in range(n // 10)) + b">x</summary>"
        ),
    }
    for name, inner in fields.items():
        atom = name.startswith("atom")
        shell, entry = (_ATOM, _atom_entry) if atom else (_RSS, _rss_item)
        for label, per_entry in (
            ("one entry", size),
            ("1 MB entries", 1 << 20),
            ("2 KB entries", 2048),
        ):
            yield f"feed: {name}, {label}", _document(shell, entry, inner, size, per_entry)
    yield "feed: rss many tiny entries", _document(_RSS, _rss_item, lambda n: b"", size, 0)
    yield "feed: atom many tiny entries", _document(_ATOM, _atom_entry, lambda n: b"", size, 0)
    yield "feed: header of categories", _RSS[0] + _fill(size, b"<category>c</category>") + _RSS[1]
    yield "feed: one unclosed item", _RSS[0] + b"<item><author>" + _fill(size, b"a")


def _json_feed_cases(size: int) -> Iterator[tuple[str, bytes]]:
    version = "https://jsonfeed.org/version/1.1"
    items: dict[str, Callable[[int], dict[str, Any]]] = {
        "author": lambda n: {"authors": [{"name": "a" * n}]},
        "many authors": lambda n: {"authors": [{"name": "a"}] * (n // 13)},
        "title": lambda n: {"title": "ab " * (n // 3)},
        "content_html": lambda n: {"content_html": "<p><b>x</b> arXiv:2401.00001</p>" * (n // 33)},
        "tags": lambda n: {"tags": ["t"] * (n // 4)},
        "deep nesting": lambda n: {"x": json.loads("[" * 250 + "]" * 250)},
    }
    for name, inner in items.items():
        for label, per_item in (("one item", size), ("2 KB items", 2048)):
            part = inner(min(per_item, size))
            count = max(1, size // max(1, len(json.dumps(part))))
            body = {"version": version, "items": [{"id": str(n), **part} for n in range(count)]}
            yield f"json feed: {name}, {label}", json.dumps(body).encode()


def _blown_up(seed: Any, size: int) -> Iterator[tuple[str, Any]]:
    """``seed`` with its longest string, then its longest list, made ``size`` bytes long."""
    paths = _paths(seed, limit=100_000)

    def at(path: tuple[Any, ...]) -> Any:
        value = seed
        for step in path:
            value = value[step]
        return value

    strings = [p for p in paths if p and isinstance(at(p), str)]
    lists = [p for p in paths if p and isinstance(at(p), list) and at(p)]
    for kind, chosen in (
        ("string", max(strings, key=lambda p: len(at(p)), default=None)),
        ("list", max(lists, key=lambda p: len(at(p)), default=None)),
    ):
        if chosen is None:
            continue
        doc = copy.deepcopy(seed)
        parent = doc
        for step in chosen[:-1]:
            parent = parent[step]
        old = parent[chosen[-1]]
        if kind == "string":
            parent[chosen[-1]] = _fill(size, b"a").decode()
        else:
            repeat = max(1, size // max(1, len(json.dumps(old))))
            parent[chosen[-1]] = old * repeat
        yield f"longest {kind} ({'.'.join(map(str, chosen))[:40]})", doc


def adversarial(size: int) -> Iterator[tuple[str, Callable[[bytes], Any], bytes]]:
    """Hostile bodies of about ``size`` bytes, with the parser that reads each."""
    feed = _source("feed")
    for name, body in _xml_cases(size):
        yield name, feed, body
    for name, body in _json_feed_cases(size):
        yield name, feed, body
    for kind, address, folder, pattern in (
        ("bluesky", "someone.bsky.social", DATA / "bluesky", "getAuthorFeed*.json"),
        ("hf-daily", "", DATA / "hf", "daily*"),
        ("hf-papers-feed", "https://example.org/x", DATA / "hf", "papers*"),
    ):
        seeds = _files((folder, pattern))[:1]
        for seed in seeds:
            for name, doc in _blown_up(orjson.loads(seed), size):
                yield f"{kind}: {name}", _source(kind, address), json.dumps(doc).encode()


def run_adversarial(size: int) -> int:
    """Time every adversarial body; 1 when one took over the limit or raised."""
    signal.signal(signal.SIGALRM, _alarm)
    worst = 0.0
    failed = 0
    print(f"{'case':62} {'MB':>6} {'CPU s':>6} {'items':>6}  outcome")
    for name, parse, body in adversarial(size):
        begun = time.process_time()
        signal.setitimer(signal.ITIMER_REAL, 60 * ADVERSARIAL_SECONDS)
        items, outcome = 0, "read"
        try:
            result = parse(body)
            items = len(result.items) if isinstance(result, Batch) else 0
        except _Timeout:
            outcome = "TIMED OUT"
        except LightnewsError as error:
            outcome = f"refused: {str(error)[:60]}"
        except Exception as error:  # what the run is looking for
            outcome = f"RAISED {type(error).__name__}: {str(error)[:60]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.process_time() - begun
        worst = max(worst, seconds)
        bad = seconds > ADVERSARIAL_SECONDS or outcome.isupper() or outcome.startswith("RAISED")
        failed += bad
        print(
            f"{name[:62]:62} {len(body) / 1e6:6.1f} {seconds:6.2f} {items:6}  "
            f"{'OVER: ' if bad else ''}{outcome}",
            flush=True,
        )
    print(f"worst {worst:.2f} s of CPU; {failed} over {ADVERSARIAL_SECONDS:g} s or raised")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=50_000, help="inputs shared by the parsers")
    parser.add_argument("--normalize-inputs", type=int, default=2000, help="inputs per normalizer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", type=Path, help="write one failing input per cause here")
    parser.add_argument("--budget", type=float, help="stop after this many seconds")
    parser.add_argument("--json", type=Path, help="write the tallies as JSON here")
    parser.add_argument("--only", action="append", help="fuzz only this target (repeatable)")
    parser.add_argument(
        "--adversarial",
        action="store_true",
        help="time hostile bodies as large as a response may be, instead",
    )
    parser.add_argument(
        "--size",
        type=int,
        default=int(Settings(environ={}).http_max_bytes),
        help="bytes of each adversarial body (default: http_max_bytes)",
    )
    args = parser.parse_args()
    if args.adversarial:
        return run_adversarial(args.size)
    started = time.monotonic()
    tallies = run(args.inputs, args.seed, args.save, args.budget, args.only, args.normalize_inputs)
    elapsed = time.monotonic() - started
    print(
        f"{'target':28} {'inputs':>7} {'read':>7} {'refused':>8} {'raised':>7} {'slow':>5} "
        f"{'ms/input':>9}  causes"
    )
    for name, t in tallies.items():
        causes = ", ".join(f"{k} ×{v}" for k, v in t.raised.most_common())
        per = 1000 * t.seconds / t.inputs if t.inputs else 0.0
        print(
            f"{name:28} {t.inputs:7} {t.read:7} {t.refused:8} {sum(t.raised.values()):7} "
            f"{t.slow:5} {per:9.2f}  {causes}"
        )
    for group, names in (
        ("parsers", [n for n in tallies if not n.startswith("normalize.")]),
        ("normalizers", [n for n in tallies if n.startswith("normalize.")]),
    ):
        inputs = sum(tallies[n].inputs for n in names)
        failed = sum(sum(tallies[n].raised.values()) for n in names)
        print(f"{group}: {inputs} inputs, {failed} uncaught exceptions or bad outputs")
    raised = sum(sum(t.raised.values()) for t in tallies.values())
    slow = sum(t.slow for t in tallies.values())
    print(f"in {elapsed:.0f}s; {slow} inputs over the {SECONDS_PER_INPUT:g}s limit")
    if args.json:
        args.json.write_text(
            json.dumps(
                {n: {**asdict(t), "raised": dict(t.raised)} for n, t in tallies.items()}, indent=1
            )
        )
    return 1 if raised else 0


if __name__ == "__main__":
    sys.exit(main())
