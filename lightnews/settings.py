"""Every setting Lightnews reads, each declared once, typed, on :class:`Settings`.

A setting is a class attribute ``name: Setting[T] = Setting(default, parse, help)``: the
attribute gives its name (and ``LIGHTNEWS_<NAME>``, its environment variable), the parser
turns text (the environment, a saved value) into a ``T`` or says what it must be, and the
help is what ``lightnews settings`` and the documentation print. Reading ``settings.name``
is a ``T`` to mypy, so every read is checked; :data:`SETTINGS`, the table that the command,
the export and the validation errors read, is made from the same declarations.

A setting's value comes, in order of precedence, from the environment, from a value saved
in the database with ``lightnews settings set``, or from its default.

The digest's schedule (``daily 07:00``, ``weekly mon 07:00``) is parsed here, beside the
setting that holds it, so that this foundation module imports nothing above it; so is the
period the worker's tick really runs at (:func:`tick_period`), which the worker and the
follow's "first fetch in about N s" both read.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar, cast, overload

from lightnews.errors import SettingError

__all__ = [
    "SETTINGS",
    "Schedule",
    "Setting",
    "Settings",
    "env_name",
    "parse_schedule",
    "tick_period",
    "with_reader_settings",
]

T_co = TypeVar("T_co", covariant=True)

log = logging.getLogger("lightnews.settings")
#: Saved values already reported as unusable in this process (name, value): said once.
_SAID: set[tuple[str, str]] = set()

_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_SCHEDULE_RE = re.compile(
    r"(?:(?P<daily>daily)|weekly\s+(?P<day>[a-z]{3})[a-z]*)\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})"
)


def tick_period(seconds: int) -> int:
    """The period the periodic jobs really run at for a ``worker_tick`` of ``seconds``.

    A cron fires on the clock's divisions, so the tick is rounded down to one
    that divides the minute (under a minute), the hour (under an hour) or the
    day: 45 s runs every 30 s, 7 min every 6 min, 5 h every 4 h; past a day,
    daily. Every tick is then as long as the one before.
    """
    for unit, span in ((1, 60), (60, 60), (3600, 24)):
        count = max(1, seconds // unit)
        if count < span:
            return unit * max(d for d in range(1, count + 1) if span % d == 0)
    return 86400


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a digest is due: daily or weekly (``weekday`` 0 = Monday) at ``hour:minute`` UTC."""

    every: timedelta
    hour: int
    minute: int
    weekday: int | None = None

    def last_due(self, now: datetime) -> datetime:
        """The latest scheduled moment at or before ``now``."""
        now = now.astimezone(UTC)
        due = now.replace(hour=self.hour, minute=self.minute, second=0, microsecond=0)
        if self.weekday is not None:
            due -= timedelta(days=(due.weekday() - self.weekday) % 7)
        while due > now:
            due -= self.every
        return due

    def __str__(self) -> str:
        at = f"{self.hour:02d}:{self.minute:02d}"
        return f"weekly {_DAYS[self.weekday]} {at}" if self.weekday is not None else f"daily {at}"


def parse_schedule(text: str) -> Schedule | None:
    """``off`` (None), ``daily HH:MM`` or ``weekly DAY HH:MM`` (UTC); ValueError otherwise."""
    spoken = " ".join(text.lower().split())
    if spoken in ("", "off"):
        return None
    match = _SCHEDULE_RE.fullmatch(spoken)
    if match is None:
        raise ValueError(f"not a digest schedule: {text!r}")
    hour, minute = int(match["hour"]), int(match["minute"])
    if hour > 23 or minute > 59:
        raise ValueError(f"not a time of day: {hour}:{minute:02d}")
    if match["daily"]:
        return Schedule(timedelta(days=1), hour, minute)
    if match["day"] not in _DAYS:
        raise ValueError(f"not a day of the week: {match['day']!r}")
    return Schedule(timedelta(days=7), hour, minute, _DAYS.index(match["day"]))


def _positive_int(raw: str) -> int:
    value = int(raw)
    if value <= 0:
        raise ValueError
    return value


def _digest_schedule(raw: str) -> str:
    """A digest schedule, checked and spelled one way (see :func:`parse_schedule`)."""
    schedule = parse_schedule(raw)
    return str(schedule) if schedule else "off"


def _non_negative_float(raw: str) -> float:
    value = float(raw)
    if value < 0 or value != value:
        raise ValueError
    return value


def _probability(raw: str) -> float:
    """A confidence a link or an attribution must reach: 0 to 1 (above 1 nothing would)."""
    value = float(raw)
    if not 0 <= value <= 1:
        raise ValueError
    return value


def _positive_float(raw: str) -> float:
    value = float(raw)
    if not value > 0 or value == float("inf"):
        raise ValueError
    return value


def _niceness(raw: str) -> int:
    value = int(raw)
    if not 0 <= value <= 19:
        raise ValueError
    return value


def _boolean(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError


def _moment_text(raw: str) -> str:
    """Empty, or a moment in ISO 8601 (kept as written, in UTC)."""
    text = raw.strip()
    if not text:
        return ""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text[:40]!r} is not a moment (2025-11-28T12:00:00Z)") from None
    moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _public_url(raw: str) -> str:
    """Empty, or the absolute http(s) address readers reach this instance at (no trailing
    slash), such as ``https://news.example.org`` or ``https://example.org/lightnews``."""
    from urllib.parse import urlsplit

    text = raw.strip().rstrip("/")
    if not text:
        return ""
    try:
        parts = urlsplit(text)
    except ValueError:
        raise ValueError from None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or (parts.fragment or any(c.isspace() for c in text))
    ):
        raise ValueError
    return text


def _database_urls(raw: str) -> tuple[str, ...]:
    """PostgreSQL URLs separated by spaces or commas (a read replica's each)."""
    urls = tuple(u for u in re.split(r"[\s,]+", raw.strip()) if u)
    for url in urls:
        if not url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"{url[:40]!r} is not a postgresql:// URL")
    return urls


def _proxy_list(raw: str) -> tuple[str, ...]:
    """Addresses or networks (or ``*``), each checked: a typo would trust nobody, or anybody."""
    import ipaddress

    items = tuple(p.strip() for p in raw.split(",") if p.strip())
    for item in items:
        if item == "*":
            continue
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ValueError(
                f"{item[:60]!r} is not an address or network (127.0.0.1, 10.0.0.0/8, or *)"
            ) from None
    return items


def _host_list(raw: str) -> tuple[str, ...]:
    hosts = tuple(h.strip().lower() for h in raw.split(",") if h.strip())
    if not hosts or any(" " in h or "/" in h for h in hosts):
        raise ValueError
    return hosts


class _Choice:
    """A parser accepting one of a few words."""

    def __init__(self, *options: str) -> None:
        self.options = options
        self.words = "one of " + ", ".join(options)

    def __call__(self, raw: str) -> str:
        value = raw.strip().lower()
        if value not in self.options:
            raise ValueError
        return value


_KIND_WORDS: dict[Callable[[str], object], str] = {
    _positive_int: "a positive integer",
    _niceness: "a whole number from 0 to 19",
    _non_negative_float: "a non-negative number",
    _probability: "a number from 0 to 1",
    _positive_float: "a positive number",
    _boolean: "true or false",
    _host_list: "host names separated by commas",
    _database_urls: "postgresql:// URLs separated by commas",
    _proxy_list: "addresses or networks separated by commas (127.0.0.1, 10.0.0.0/8), or *",
    _digest_schedule: "off, `daily HH:MM` or `weekly DAY HH:MM` (UTC)",
    _moment_text: "a moment (2025-11-28T12:00:00Z) or nothing",
    _public_url: "an absolute http(s) address (https://news.example.org) or nothing",
    str: "text",
}


class Setting(Generic[T_co]):
    """One setting, declared as an attribute of :class:`Settings`: its default, how to read
    it from text and what it is for. Its name is the attribute's.

    Read on a :class:`Settings` it is that instance's resolved value, a ``T_co``; read on
    the class it is the setting itself (``Settings.semantic.default``).
    """

    __slots__ = ("default", "help", "name", "parse", "secret")

    def __init__(
        self, default: T_co, parse: Callable[[str], T_co], help: str, *, secret: bool = False
    ) -> None:
        self.name = ""  # the attribute's, given by __set_name__
        self.default = default
        self.parse = parse
        self.help = help
        self.secret = secret

    def __set_name__(self, owner: type[Settings], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type[Settings]) -> Setting[T_co]: ...

    @overload
    def __get__(self, instance: Settings, owner: type[Settings]) -> T_co: ...

    def __get__(self, instance: Settings | None, owner: type[Settings]) -> Setting[T_co] | T_co:
        if instance is None:
            return self
        # Values are parsed by this setting or checked against its default's type when set.
        return cast(T_co, instance._values[self.name])

    def __repr__(self) -> str:
        return f"Setting({self.name!r}, default={self.default!r})"

    @property
    def env(self) -> str:
        return env_name(self.name)

    @property
    def kind(self) -> str:
        return getattr(self.parse, "words", None) or _KIND_WORDS.get(self.parse, "a value")

    def convert(self, raw: str, origin: str) -> T_co:
        try:
            return self.parse(raw)
        except (TypeError, ValueError):
            raise SettingError(f"{origin} must be {self.kind}, got {raw!r}") from None

    def fits(self, value: object) -> bool:
        """Whether ``value`` has this setting's type (that of its default; an integer for a
        number with a fraction), as a value given in code rather than parsed must."""
        kind = type(self.default)
        if isinstance(value, bool) and kind is not bool:
            return False  # True is an int to Python, not a count
        if kind is float and isinstance(value, int):
            return True
        return isinstance(value, kind)


def env_name(name: str) -> str:
    return "LIGHTNEWS_" + name.upper()


class Settings:
    """Resolved settings: environment over saved values over defaults.

    Every setting is declared here, in the order ``lightnews settings`` lists them.
    """

    __slots__ = ("_environ", "_saved", "_values", "unusable")

    contact: Setting[str] = Setting(
        "",
        str,
        "E-mail or URL put in the User-Agent so that services can reach whoever runs "
        "this instance (arXiv asks for one).",
    )
    http_timeout: Setting[float] = Setting(
        30.0,
        _non_negative_float,
        "Seconds to wait for a server to connect or send data before giving up.",
    )
    http_max_bytes: Setting[int] = Setting(
        15 * 1024 * 1024,
        _positive_int,
        "Largest response body accepted, in bytes, after decompression.",
    )
    http_retries: Setting[int] = Setting(
        3,
        _positive_int,
        "How many times a request is retried after 429, 5xx or a network error.",
    )
    http_backoff: Setting[float] = Setting(
        1.0,
        _non_negative_float,
        "Base delay in seconds of the exponential backoff between retries (jitter added).",
    )
    http_max_wait: Setting[float] = Setting(
        120.0,
        _non_negative_float,
        "Longest Retry-After, in seconds, honoured inside one run; a longer one ends the "
        "run for that source and schedules its next attempt.",
    )
    allow_private_addresses: Setting[bool] = Setting(
        False,
        _boolean,
        "Allow fetching URLs on loopback or private networks (off: user-given URLs cannot "
        "reach private addresses).",
    )
    arxiv_interval: Setting[float] = Setting(
        3.0,
        _non_negative_float,
        "Seconds between two requests to arXiv's API and OAI-PMH hosts (arXiv asks for 3).",
    )
    arxiv_api_url: Setting[str] = Setting(
        "https://export.arxiv.org/api/query",
        str,
        "Endpoint of the arXiv query API.",
    )
    arxiv_oai_url: Setting[str] = Setting(
        "https://oaipmh.arxiv.org/oai",
        str,
        "Endpoint of arXiv's OAI-PMH interface.",
    )
    arxiv_page_size: Setting[int] = Setting(
        100,
        _positive_int,
        "Results asked for per arXiv API page (arXiv allows up to 2000).",
    )
    arxiv_max_results: Setting[int] = Setting(
        500,
        _positive_int,
        "Most results one refresh of an arXiv query source reads (arXiv stops at 30000).",
    )
    resolve_online: Setting[bool] = Setting(
        True,
        _boolean,
        "After a refresh, fetch from arXiv the papers that items mention by id but that are "
        "not stored yet (in batches, politely); offline they wait for the next refresh.",
    )
    half_life_hours: Setting[float] = Setting(
        36.0,
        _non_negative_float,
        "Hours after which a story's score in the feed is halved (newer counts more).",
    )
    horizon_half_lives: Setting[float] = Setting(
        4.0,
        _non_negative_float,
        "How far back a reader's own candidates reach, in half-lives: papers by scholars "
        "they follow, their posts, watched papers (older ones weigh little anyway).",
    )
    feed_category_slice: Setting[int] = Setting(
        80,
        _positive_int,
        "How many papers of your horizon in the arXiv categories you follow join your "
        "feed's candidates: those your learned ranker scores highest, or the newest while "
        "it has nothing to learn from (no saves yet).",
    )
    clock: Setting[str] = Setting(
        "",
        _moment_text,
        "Treat this moment (ISO 8601, UTC) as now (empty: the real clock): relative times "
        "on the web ('3 hours ago'), periods such as `digest --since 1d`, `--since 2w` of a "
        "search and the Discussed page's 24 hours read it. The demo sets it to its "
        "snapshot's last moment, so the demo reads as on its own day.",
    )
    smtp_host: Setting[str] = Setting(
        "",
        str,
        "SMTP server the digest is e-mailed through (empty: no e-mail).",
    )
    smtp_port: Setting[int] = Setting(25, _positive_int, "Port of the SMTP server.")
    smtp_starttls: Setting[bool] = Setting(
        False,
        _boolean,
        "Upgrade the SMTP connection with STARTTLS.",
    )
    smtp_user: Setting[str] = Setting("", str, "SMTP login, if the server asks for one.")
    smtp_password: Setting[str] = Setting("", str, "SMTP password.", secret=True)
    smtp_from: Setting[str] = Setting("", str, "From address of the digest.")
    digest_to: Setting[str] = Setting("", str, "Where `lightnews digest --email` sends the digest.")
    digest_schedule: Setting[str] = Setting(
        "off",
        _digest_schedule,
        "When workers e-mail the digest to digest_to (UTC): off, `daily HH:MM` or "
        "`weekly DAY HH:MM` (DAY: mon ... sun); each period's digest is sent once.",
    )
    public_url: Setting[str] = Setting(
        "",
        _public_url,
        "The address readers reach this instance's web UI at (https://news.example.org), "
        "for links that leave it: the digest links each story to its page here. Empty: the "
        "digest links stories to arXiv (or the item's own page) and `lightnews digest` says so.",
    )
    link_bar: Setting[float] = Setting(
        0.8,
        _probability,
        "Confidence a link from an item to a paper found by its title needs to be asserted; "
        "below it nothing is linked.",
    )
    attribution_bar: Setting[float] = Setting(
        0.6,
        _probability,
        "Confidence at or above which a paper counts as a scholar's record "
        '("at least N records"); below it a match is only a candidate.',
    )
    semantic: Setting[str] = Setting(
        "minilm-int8",
        _Choice("minilm-int8", "static", "minilm", "off"),
        "Encoder of the sentence vectors that search and related papers fuse with words: "
        "minilm-int8 (all-MiniLM-L6-v2 with int8 weights on ONNX Runtime, made once on this "
        "machine: the model's neighbours at about twice its PyTorch speed), static (a "
        "distillation of it: fifty times faster again, far weaker when no word is shared), "
        "minilm (the model on PyTorch, about 45 papers/s on two cores) or off. Needs the "
        "semantic extra; changing it re-embeds the "
        "library at the next `lightnews embed`.",
    )
    index_build_memory: Setting[int] = Setting(
        2048,
        _positive_int,
        "Most memory, in MB, that building a PostgreSQL library's vector index (pgvector's "
        "HNSW graph) may use: the build is given what its vectors need (about 1.8 GB for a "
        "million 384-dimension vectors), up to this. Below that need the build spills to disk "
        "and takes many times longer. No effect on SQLite.",
    )
    allowed_hosts: Setting[tuple[str, ...]] = Setting(
        ("localhost", "127.0.0.1", "::1"),
        _host_list,
        "Host names the web server answers to, separated by commas (a request naming any "
        "other host gets 400, which stops DNS-rebinding pages); add the public name when "
        "serving beyond this machine, or * for any.",
    )
    trusted_proxies: Setting[tuple[str, ...]] = Setting(
        ("127.0.0.1", "::1"),
        _proxy_list,
        "Addresses (or networks, 10.0.0.0/8) of the reverse proxies in front of `serve`, "
        "separated by commas, or * for any. From these only, X-Forwarded-For and "
        "X-Forwarded-Proto are believed: the sign-in limit counts the reader's own address, "
        "and cookies are marked Secure behind a TLS proxy. A proxy on another machine (a "
        "container network) must be named here.",
    )
    session_hours: Setting[float] = Setting(
        336.0,
        _positive_float,
        "Hours a web sign-in lasts before the reader is asked to sign in again.",
    )
    readers_add_sources: Setting[bool] = Setting(
        False,
        _boolean,
        "Whether a reader who is not an admin adds what the instance fetches when they follow "
        "someone new (a Bluesky account, an arXiv author); off, they follow what is already "
        "fetched and an admin adds sources.",
    )
    sign_in_attempts: Setting[int] = Setting(
        5,
        _positive_int,
        "Failed sign-ins allowed per account in 15 minutes (and 4 times as many per address) "
        "before sign-in waits; counted in the library, so every web process shares the count.",
    )
    read_url: Setting[tuple[str, ...]] = Setting(
        (),
        _database_urls,
        "PostgreSQL read replicas (streaming standbys of the library's server), separated by "
        "commas: the web's pages, searches and feeds are read from them in turn, while writes, "
        "sign-in checks and the workers' queue stay on the primary. Read at the web server's "
        "start.",
        secret=True,
    )
    read_own_writes: Setting[float] = Setting(
        10.0,
        _non_negative_float,
        "Seconds a browser or client reads from the primary after it changed something, so "
        "that its own change shows at once whatever a replica's lag (with read_url).",
    )
    secret_key: Setting[str] = Setting(
        "",
        str,
        "Key that signs form tokens (and sessions). Made at random and saved on first use; "
        "set it to share one key between several web processes.",
        secret=True,
    )
    search_budget_ms: Setting[int] = Setting(
        500,
        _positive_int,
        "Most work a search may do reading the database, in milliseconds (CPU time on "
        "SQLite, where waiting for a busy CPU counts only past four times this; on "
        "PostgreSQL, which can bound only a statement's duration, four times this in the "
        'server); a search that needs more answers "too expensive: narrow it" instead of '
        "keeping the server busy.",
    )
    write_wait: Setting[float] = Setting(
        30.0,
        _non_negative_float,
        "Seconds a write waits for another writer of the database (a refresh, an import) "
        'before giving up with "the database is busy: try again".',
    )
    background_nice: Setting[int] = Setting(
        10,
        _niceness,
        "Priority the commands that write in bulk (import, ingest, refresh, embed, worker) "
        "lower themselves to, so that readers of the web pages go first: a nice value "
        "(0 leaves it alone); a command that leads its own session (cron, setsid) lowers "
        "its Linux autogroup's too.",
    )
    max_title_chars: Setting[int] = Setting(
        1000,
        _positive_int,
        "Longest title, author line or name stored; a longer one is cut and the cut is "
        "recorded on the source.",
    )
    max_text_chars: Setting[int] = Setting(
        100_000,
        _positive_int,
        "Longest abstract or item text stored (characters); longer ones are cut, recorded.",
    )
    max_html_chars: Setting[int] = Setting(
        300_000,
        _positive_int,
        "Longest sanitized HTML of an item stored (characters); longer HTML is cut, recorded.",
    )
    max_url_chars: Setting[int] = Setting(
        4096,
        _positive_int,
        "Longest URL stored; a longer one is dropped (a cut URL leads nowhere), recorded.",
    )
    max_payload_chars: Setting[int] = Setting(
        1_000_000,
        _positive_int,
        "Longest original record kept beside an item (characters); a longer one is cut, recorded.",
    )
    refresh_minutes: Setting[int] = Setting(
        60,
        _positive_int,
        "Minutes between two refreshes of a healthy source.",
    )
    retry_max_hours: Setting[int] = Setting(
        24,
        _positive_int,
        "Longest wait, in hours, before retrying a failing source (backoff doubles up to it).",
    )
    worker_tick: Setting[int] = Setting(
        60,
        _positive_int,
        "Seconds between two looks of `lightnews worker` for due sources, new papers to embed "
        "and stubs to resolve (one look for the whole cluster, whichever worker makes it). "
        "Looks fall on the clock's divisions: the tick is rounded down to one dividing the "
        "minute, the hour or the day (45 runs every 30 s, 420 every 6 min).",
    )
    worker_heartbeat: Setting[float] = Setting(
        10.0,
        _positive_float,
        "Seconds between two heartbeats of a worker; the jobs of a worker silent for three "
        "of them run again on another, unless its connection still holds them (a slow "
        "machine, not a dead worker).",
    )
    worker_reconnect_seconds: Setting[float] = Setting(
        300.0,
        _positive_float,
        "Seconds a worker that lost its database tries to reach it again (with a growing "
        "pause) before it exits with an error, for its supervisor to restart it.",
    )
    jetstream_url: Setting[str] = Setting(
        "wss://jetstream2.us-east.bsky.network/subscribe",
        str,
        "Bluesky Jetstream address `lightnews listen` subscribes to (ws:// or wss://).",
    )
    listen_in_worker: Setting[bool] = Setting(
        False,
        _boolean,
        "Whether `lightnews worker` listens to the Jetstream (one worker of the cluster at a "
        "time, resuming from the saved cursor).",
    )
    listen_max_backoff: Setting[float] = Setting(
        60.0,
        _positive_float,
        "Longest wait, in seconds, before reconnecting to the Jetstream (doubles from 1 s).",
    )
    discussed_bot_weight: Setting[float] = Setting(
        0.05,
        _non_negative_float,
        "What an automated account (a bot, a mirror, a listing feed) counts for on the "
        "Discussed page, against 1 for a person.",
    )

    def __init__(
        self, saved: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
    ) -> None:
        self._saved = dict(saved or {})
        self._environ = os.environ if environ is None else environ
        self._values: dict[str, object] = {}
        #: Saved values this version refuses (name: why), each replaced by its default.
        self.unusable: dict[str, str] = {}
        for setting in SETTINGS:
            self._values[setting.name] = self._resolve(setting)

    def _resolve(self, setting: Setting[object]) -> object:
        raw_env = self._environ.get(setting.env)
        if raw_env is not None:
            return setting.convert(raw_env, setting.env)
        if setting.name in self._saved:
            try:
                return setting.convert(self._saved[setting.name], f"setting {setting.name}")
            except SettingError as error:
                # Saved by an older version that checked less (a link bar of 5), or by
                # hand: the library must still open, so that `settings set` can put it
                # right. An environment variable is refused: it was typed for this run.
                why = (
                    f"the saved {error}; its default, {setting.default!r}, is used until "
                    f"it is set again (lightnews settings set {setting.name} VALUE)"
                )
                self.unusable[setting.name] = why
                said = (setting.name, self._saved[setting.name])
                if said not in _SAID:  # once a process: the CLI, the server, each worker
                    _SAID.add(said)
                    log.warning("%s", why)
        return setting.default

    def origin(self, name: str) -> str:
        setting = self.lookup(name)
        if setting.env in self._environ:
            return "environment"
        if setting.name in self.unusable:
            return "default (the saved value is unusable)"
        if name in self._saved:
            return "saved"
        return "default"

    @staticmethod
    def lookup(name: str) -> Setting[object]:
        try:
            return _BY_NAME[name.replace("-", "_")]
        except KeyError:
            known = ", ".join(sorted(_BY_NAME))
            raise SettingError(f"no setting named {name!r}; known settings: {known}") from None

    def get(self, name: str) -> object:
        """The value of a setting named at run time (read a declared one as an attribute)."""
        return self._values[self.lookup(name).name]

    def now(self) -> datetime:
        """Now for this library: the ``clock`` setting when set (the demo sets it to its
        snapshot's last moment), else the real clock. Relative times and periods
        ("3 hours ago", ``--since 1d``, the Discussed page's 24 hours) read it."""
        clock = self.clock
        return datetime.fromisoformat(clock.replace("Z", "+00:00")) if clock else datetime.now(UTC)

    def with_overrides(self, **values: object) -> Settings:
        """A copy with some values replaced (tests, the demo), each of its setting's type."""
        copy = Settings(self._saved, self._environ)
        copy._values.update(self._values)
        for name, value in values.items():
            setting = self.lookup(name)
            if not setting.fits(value):
                raise TypeError(
                    f"{setting.name} must be {type(setting.default).__name__}, got {value!r}"
                )
            copy._values[setting.name] = value
        return copy


def with_reader_settings(base: Settings, own: Mapping[str, str]) -> Settings:
    """``base`` (the instance's settings) with a reader's own saved values over it. A value
    of the reader's that fails its check is set aside, reported as any saved value is, and
    the instance's value stands rather than the default."""
    if not own:
        return base
    typed = Settings(own)  # read and checked as saved settings are
    kept = {
        name: typed.get(name) for name in own if Settings.lookup(name).name not in typed.unusable
    }
    return base.with_overrides(**kept)


#: Every setting, in the order of their declarations.
SETTINGS: tuple[Setting[object], ...] = tuple(
    value for value in vars(Settings).values() if isinstance(value, Setting)
)
_BY_NAME = {setting.name: setting for setting in SETTINGS}
