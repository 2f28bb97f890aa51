"""Every setting Lightnews reads, in one declarative table.

The same table feeds ``lightnews settings``, the documentation and the
validation errors. A setting's value comes, in order of precedence, from the
environment (``LIGHTNEWS_<NAME>``), from a value saved in the database with
``lightnews settings set``, or from its default.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lightnews.errors import SettingError

__all__ = ["SETTINGS", "Setting", "Settings", "env_name"]


def _positive_int(raw: str) -> int:
    value = int(raw)
    if value <= 0:
        raise ValueError
    return value


def _digest_schedule(raw: str) -> str:
    """A digest schedule, checked and spelled one way (see ``lightnews.serve.digest``)."""
    from lightnews.deliver.digest import parse_schedule

    schedule = parse_schedule(raw)
    return str(schedule) if schedule else "off"


def _non_negative_float(raw: str) -> float:
    value = float(raw)
    if value < 0 or value != value:
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


_KIND_WORDS: dict[Callable[[str], Any], str] = {
    _positive_int: "a positive integer",
    _niceness: "a whole number from 0 to 19",
    _non_negative_float: "a non-negative number",
    _positive_float: "a positive number",
    _boolean: "true or false",
    _host_list: "host names separated by commas",
    _proxy_list: "addresses or networks separated by commas (127.0.0.1, 10.0.0.0/8), or *",
    _digest_schedule: "off, `daily HH:MM` or `weekly DAY HH:MM` (UTC)",
    _moment_text: "a moment (2025-11-28T12:00:00Z) or nothing",
    str: "text",
}


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its name, default, how to read it and what it is for."""

    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str
    secret: bool = False

    @property
    def env(self) -> str:
        return env_name(self.name)

    @property
    def kind(self) -> str:
        return getattr(self.parse, "words", None) or _KIND_WORDS.get(self.parse, "a value")

    def convert(self, raw: str, origin: str) -> Any:
        try:
            return self.parse(raw)
        except (TypeError, ValueError):
            raise SettingError(f"{origin} must be {self.kind}, got {raw!r}") from None


def env_name(name: str) -> str:
    return "LIGHTNEWS_" + name.upper()


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "contact",
        "",
        str,
        "E-mail or URL put in the User-Agent so that services can reach whoever runs "
        "this instance (arXiv asks for one).",
    ),
    Setting(
        "http_timeout",
        30.0,
        _non_negative_float,
        "Seconds to wait for a server to connect or send data before giving up.",
    ),
    Setting(
        "http_max_bytes",
        15 * 1024 * 1024,
        _positive_int,
        "Largest response body accepted, in bytes, after decompression.",
    ),
    Setting(
        "http_retries",
        3,
        _positive_int,
        "How many times a request is retried after 429, 5xx or a network error.",
    ),
    Setting(
        "http_backoff",
        1.0,
        _non_negative_float,
        "Base delay in seconds of the exponential backoff between retries (jitter added).",
    ),
    Setting(
        "http_max_wait",
        120.0,
        _non_negative_float,
        "Longest Retry-After, in seconds, honoured inside one run; a longer one ends the "
        "run for that source and schedules its next attempt.",
    ),
    Setting(
        "allow_private_addresses",
        False,
        _boolean,
        "Allow fetching URLs on loopback or private networks (off: user-given URLs cannot "
        "reach private addresses).",
    ),
    Setting(
        "arxiv_interval",
        3.0,
        _non_negative_float,
        "Seconds between two requests to arXiv's API and OAI-PMH hosts (arXiv asks for 3).",
    ),
    Setting(
        "arxiv_api_url",
        "https://export.arxiv.org/api/query",
        str,
        "Endpoint of the arXiv query API.",
    ),
    Setting(
        "arxiv_oai_url",
        "https://oaipmh.arxiv.org/oai",
        str,
        "Endpoint of arXiv's OAI-PMH interface.",
    ),
    Setting(
        "arxiv_page_size",
        100,
        _positive_int,
        "Results asked for per arXiv API page (arXiv allows up to 2000).",
    ),
    Setting(
        "arxiv_max_results",
        500,
        _positive_int,
        "Most results one refresh of an arXiv query source reads (arXiv stops at 30000).",
    ),
    Setting(
        "resolve_online",
        True,
        _boolean,
        "After a refresh, fetch from arXiv the papers that items mention by id but that are "
        "not stored yet (in batches, politely); offline they wait for the next refresh.",
    ),
    Setting(
        "half_life_hours",
        36.0,
        _non_negative_float,
        "Hours after which a story's score in the feed is halved (newer counts more).",
    ),
    Setting(
        "horizon_half_lives",
        4.0,
        _non_negative_float,
        "How far back a reader's own candidates reach, in half-lives: papers by scholars "
        "they follow, their posts, watched papers (older ones weigh little anyway).",
    ),
    Setting(
        "clock",
        "",
        _moment_text,
        "Treat this moment (ISO 8601, UTC) as now (empty: the real clock): relative times "
        "on the web ('3 hours ago'), periods such as `digest --since 1d`, `--since 2w` of a "
        "search and the Discussed page's 24 hours read it. The demo sets it to its "
        "snapshot's last moment, so the demo reads as on its own day.",
    ),
    Setting("smtp_host", "", str, "SMTP server the digest is e-mailed through (empty: no e-mail)."),
    Setting("smtp_port", 25, _positive_int, "Port of the SMTP server."),
    Setting("smtp_starttls", False, _boolean, "Upgrade the SMTP connection with STARTTLS."),
    Setting("smtp_user", "", str, "SMTP login, if the server asks for one."),
    Setting("smtp_password", "", str, "SMTP password.", secret=True),
    Setting("smtp_from", "", str, "From address of the digest."),
    Setting("digest_to", "", str, "Where `lightnews digest --email` sends the digest."),
    Setting(
        "digest_schedule",
        "off",
        _digest_schedule,
        "When workers e-mail the digest to digest_to (UTC): off, `daily HH:MM` or "
        "`weekly DAY HH:MM` (DAY: mon ... sun); each period's digest is sent once.",
    ),
    Setting(
        "link_bar",
        0.8,
        _non_negative_float,
        "Confidence a link from an item to a paper found by its title needs to be asserted; "
        "below it nothing is linked.",
    ),
    Setting(
        "attribution_bar",
        0.6,
        _non_negative_float,
        "Confidence at or above which a paper counts as a scholar's record "
        '("at least N records"); below it a match is only a candidate.',
    ),
    Setting(
        "semantic",
        "minilm-int8",
        _Choice("minilm-int8", "static", "minilm", "off"),
        "Encoder of the sentence vectors that search and related papers fuse with words: "
        "minilm-int8 (all-MiniLM-L6-v2 with int8 weights on ONNX Runtime, made once on this "
        "machine: the model's neighbours at about twice its PyTorch speed), static (a "
        "distillation of it: fifty times faster again, far weaker when no word is shared), "
        "minilm (the model on PyTorch, about 45 papers/s on two cores) or off. Needs the "
        "semantic extra; changing it re-embeds the "
        "library at the next `lightnews embed`.",
    ),
    Setting(
        "index_build_memory",
        2048,
        _positive_int,
        "Most memory, in MB, that building a PostgreSQL library's vector index (pgvector's "
        "HNSW graph) may use: the build is given what its vectors need (about 1.8 GB for a "
        "million 384-dimension vectors), up to this. Below that need the build spills to disk "
        "and takes many times longer. No effect on SQLite.",
    ),
    Setting(
        "allowed_hosts",
        ("localhost", "127.0.0.1", "::1"),
        _host_list,
        "Host names the web server answers to, separated by commas (a request naming any "
        "other host gets 400, which stops DNS-rebinding pages); add the public name when "
        "serving beyond this machine, or * for any.",
    ),
    Setting(
        "trusted_proxies",
        ("127.0.0.1", "::1"),
        _proxy_list,
        "Addresses (or networks, 10.0.0.0/8) of the reverse proxies in front of `serve`, "
        "separated by commas, or * for any. From these only, X-Forwarded-For and "
        "X-Forwarded-Proto are believed: the sign-in limit counts the reader's own address, "
        "and cookies are marked Secure behind a TLS proxy. A proxy on another machine (a "
        "container network) must be named here.",
    ),
    Setting(
        "session_hours",
        336.0,
        _positive_float,
        "Hours a web sign-in lasts before the reader is asked to sign in again.",
    ),
    Setting(
        "readers_add_sources",
        False,
        _boolean,
        "Whether a reader who is not an admin adds what the instance fetches when they follow "
        "someone new (a Bluesky account, an arXiv author); off, they follow what is already "
        "fetched and an admin adds sources.",
    ),
    Setting(
        "sign_in_attempts",
        5,
        _positive_int,
        "Failed sign-ins allowed per account in 15 minutes (and 4 times as many per address) "
        "before sign-in waits; counted in the library, so every web process shares the count.",
    ),
    Setting(
        "secret_key",
        "",
        str,
        "Key that signs form tokens (and sessions). Made at random and saved on first use; "
        "set it to share one key between several web processes.",
        secret=True,
    ),
    Setting(
        "search_budget_ms",
        500,
        _positive_int,
        "Most work a search may do reading the database, in milliseconds (CPU time on "
        "SQLite, where waiting for a busy CPU counts only past four times this; time in "
        'the server on PostgreSQL); a search that needs more answers "too expensive: '
        'narrow it" instead of keeping the server busy.',
    ),
    Setting(
        "write_wait",
        30.0,
        _non_negative_float,
        "Seconds a write waits for another writer of the database (a refresh, an import) "
        'before giving up with "the database is busy: try again".',
    ),
    Setting(
        "background_nice",
        10,
        _niceness,
        "Priority the commands that write in bulk (import, ingest, refresh, embed, worker) "
        "lower themselves to, so that readers of the web pages go first: a nice value "
        "(0 leaves it alone); a command that leads its own session (cron, setsid) lowers "
        "its Linux autogroup's too.",
    ),
    Setting(
        "max_title_chars",
        1000,
        _positive_int,
        "Longest title, author line or name stored; a longer one is cut and the cut is "
        "recorded on the source.",
    ),
    Setting(
        "max_text_chars",
        100_000,
        _positive_int,
        "Longest abstract or item text stored (characters); longer ones are cut, recorded.",
    ),
    Setting(
        "max_html_chars",
        300_000,
        _positive_int,
        "Longest sanitized HTML of an item stored (characters); longer HTML is cut, recorded.",
    ),
    Setting(
        "max_url_chars",
        4096,
        _positive_int,
        "Longest URL stored; a longer one is dropped (a cut URL leads nowhere), recorded.",
    ),
    Setting(
        "max_payload_chars",
        1_000_000,
        _positive_int,
        "Longest original record kept beside an item (characters); a longer one is cut, recorded.",
    ),
    Setting(
        "refresh_minutes", 60, _positive_int, "Minutes between two refreshes of a healthy source."
    ),
    Setting(
        "retry_max_hours",
        24,
        _positive_int,
        "Longest wait, in hours, before retrying a failing source (backoff doubles up to it).",
    ),
    Setting(
        "worker_tick",
        60,
        _positive_int,
        "Seconds between two looks of `lightnews worker` for due sources, new papers to embed "
        "and stubs to resolve (one look for the whole cluster, whichever worker makes it). "
        "Looks fall on the clock's divisions: the tick is rounded down to one dividing the "
        "minute, the hour or the day (45 runs every 30 s, 420 every 6 min).",
    ),
    Setting(
        "worker_heartbeat",
        10.0,
        _positive_float,
        "Seconds between two heartbeats of a worker; the jobs of a worker silent for three "
        "of them run again on another, unless its connection still holds them (a slow "
        "machine, not a dead worker).",
    ),
    Setting(
        "worker_reconnect_seconds",
        300.0,
        _positive_float,
        "Seconds a worker that lost its database tries to reach it again (with a growing "
        "pause) before it exits with an error, for its supervisor to restart it.",
    ),
    Setting(
        "jetstream_url",
        "wss://jetstream2.us-east.bsky.network/subscribe",
        str,
        "Bluesky Jetstream address `lightnews listen` subscribes to (ws:// or wss://).",
    ),
    Setting(
        "listen_in_worker",
        False,
        _boolean,
        "Whether `lightnews worker` listens to the Jetstream (one worker of the cluster at a "
        "time, resuming from the saved cursor).",
    ),
    Setting(
        "listen_max_backoff",
        60.0,
        _positive_float,
        "Longest wait, in seconds, before reconnecting to the Jetstream (doubles from 1 s).",
    ),
    Setting(
        "discussed_bot_weight",
        0.05,
        _non_negative_float,
        "What an automated account (a bot, a mirror, a listing feed) counts for on the "
        "Discussed page, against 1 for a person.",
    ),
)

_BY_NAME = {setting.name: setting for setting in SETTINGS}


class Settings:
    """Resolved settings: environment over saved values over defaults."""

    def __init__(
        self, saved: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
    ) -> None:
        self._saved = dict(saved or {})
        self._environ = os.environ if environ is None else environ
        self._values: dict[str, Any] = {}
        for setting in SETTINGS:
            self._values[setting.name] = self._resolve(setting)

    def _resolve(self, setting: Setting) -> Any:
        raw_env = self._environ.get(setting.env)
        if raw_env is not None:
            return setting.convert(raw_env, setting.env)
        if setting.name in self._saved:
            return setting.convert(self._saved[setting.name], f"setting {setting.name}")
        return setting.default

    def origin(self, name: str) -> str:
        setting = self.lookup(name)
        if setting.env in self._environ:
            return "environment"
        if name in self._saved:
            return "saved"
        return "default"

    @staticmethod
    def lookup(name: str) -> Setting:
        try:
            return _BY_NAME[name.replace("-", "_")]
        except KeyError:
            known = ", ".join(sorted(_BY_NAME))
            raise SettingError(f"no setting named {name!r}; known settings: {known}") from None

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str) -> Any:
        return self._values[self.lookup(name).name]

    def now(self) -> datetime:
        """Now for this library: the ``clock`` setting when set (the demo sets it to its
        snapshot's last moment), else the real clock. Relative times and periods
        ("3 hours ago", ``--since 1d``, the Discussed page's 24 hours) read it."""
        clock = str(self.clock or "")
        return datetime.fromisoformat(clock.replace("Z", "+00:00")) if clock else datetime.now(UTC)

    def with_overrides(self, **values: Any) -> Settings:
        """A copy with some values replaced (tests, the demo)."""
        copy = Settings(self._saved, self._environ)
        copy._values.update(self._values)
        for name, value in values.items():
            copy._values[self.lookup(name).name] = value
        return copy
