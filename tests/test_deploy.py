"""The deployment files: commands the CLI has, and the stacks they make, run as written.

The compose stack and the systemd units are run without containers or
systemd (neither is on a test machine): their own commands, read from the
files, in their order, as processes, on a fresh PostgreSQL database, with a
local server answering as arXiv's API. The stack must come up working: the
setup makes the first admin, the web processes serve pages to them, and the
worker refreshes a source added while it runs within its tick.
"""

from __future__ import annotations

import configparser
import itertools
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT, RecordedServer
from lightnews.cli import cli
from lightnews.worker.test_worker import SlowArxiv

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def parses(argv: list[str]) -> None:
    """``argv`` names a command the CLI has, with options it takes (``--help`` added, so
    nothing runs: click checks every option before it answers the help)."""
    assert argv and Path(argv[0]).name == "lightnews", argv
    result = CliRunner().invoke(cli, [*argv[1:], "--help"])
    assert result.exit_code == 0, f"{argv}: {result.output}"


def compose_commands() -> list[list[str]]:
    document = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    commands = [s["command"] for s in document["services"].values() if "command" in s]
    assert {"db", "setup", "web", "worker", "listen"} <= set(document["services"])
    web = document["services"]["web"]
    assert "LIGHTNEWS_DB" in web["environment"] and web["environment"]["LIGHTNEWS_DB"].startswith(
        "postgresql://"
    )
    return commands


def unit_commands() -> list[list[str]]:
    found = []
    for unit in sorted((DEPLOY / "systemd").glob("*.service")):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read(unit)
        for key in ("ExecStartPre", "ExecStart"):
            if parser.has_option("Service", key):
                found.append(shlex.split(parser.get("Service", key)))
    return found


def container_command() -> list[str]:
    for line in (DEPLOY / "Containerfile").read_text().splitlines():
        if line.startswith("CMD "):
            return list(yaml.safe_load(line[4:]))
    raise AssertionError("the Containerfile has no CMD")


@pytest.mark.parametrize(
    "argv", [*compose_commands(), *unit_commands(), container_command()], ids=" ".join
)
def test_every_deployed_command_exists(argv: list[str]) -> None:
    parses(argv)


def test_a_command_the_cli_lacks_is_caught() -> None:
    with pytest.raises(AssertionError):
        parses(["lightnews", "serve", "--no-such-option"])
    with pytest.raises(AssertionError):
        parses(["lightnews", "no-such-command"])


# -- the stacks, run -------------------------------------------------------------------------

ADMIN, PASSWORD = "ada", "a long passphrase"
TICK = 10  # a small worker_tick, as an operator may set one (the deployed default is 60)


@pytest.fixture
def empty_db(pg_server: str) -> Iterator[str]:
    """A new PostgreSQL database with nothing in it: no schema, no accounts."""
    psycopg = pytest.importorskip("psycopg", reason="the stacks run on PostgreSQL")

    name = f"lightnews_stack_{os.getpid()}_{next(_stacks)}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield urlsplit(pg_server)._replace(path="/" + name).geturl()
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_stacks = itertools.count()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def as_run_here(argv: list[str], port: int) -> list[str]:
    """A deployed command as this machine runs it: this Python's lightnews, a free port."""
    assert Path(argv[0]).name == "lightnews", argv
    args = list(argv[1:])
    if "--port" in args:
        args[args.index("--port") + 1] = str(port)
    return [sys.executable, "-m", "lightnews", *args]


class Stack:
    """The processes of one stack, each writing to a log of its own."""

    def __init__(self, folder: Path, base_env: dict[str, str]) -> None:
        self.folder, self.base_env = folder, base_env
        self.running: list[tuple[str, subprocess.Popen[bytes]]] = []

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        return {
            **os.environ,
            **self.base_env,
            **extra,
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
        }

    def once(self, name: str, argv: list[str], extra: dict[str, str]) -> str:
        """A one-shot step, run to its end: it must succeed."""
        done = subprocess.run(argv, env=self.env(extra), cwd=ROOT, capture_output=True, timeout=120)
        said = (done.stdout + done.stderr).decode(errors="replace")
        assert done.returncode == 0, f"{name}: {argv}\n{said}"
        return said

    def start(self, name: str, argv: list[str], extra: dict[str, str]) -> None:
        with (self.folder / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                argv, env=self.env(extra), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
            )
        self.running.append((name, process))

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def alive(self) -> None:
        for name, process in self.running:
            if process.poll() is not None:
                raise AssertionError(f"{name} exited ({process.returncode}):\n{self.log(name)}")

    def stop(self) -> dict[str, int | None]:
        statuses: dict[str, int | None] = {}
        for name, process in reversed(self.running):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                statuses[name] = process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)
                statuses[name] = None
        self.running.clear()
        return statuses


def compose_env(value: object) -> str:
    """A compose value with its ``${NAME:-default}`` read as compose reads it, without a
    ``.env``: each name from this test's choices, else its default."""
    chosen = {"LIGHTNEWS_ADMIN_USER": ADMIN, "LIGHTNEWS_ADMIN_PASSWORD": PASSWORD}
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: chosen.get(m[1], m[2]), str(value))


def lab(api_url: str) -> dict[str, str]:
    """What an operator of this test's lab sets beside the files: its small tick, a local
    arXiv and Jetstream (loopback addresses allowed), and no model to download."""
    return {
        "LIGHTNEWS_WORKER_TICK": str(TICK),
        "LIGHTNEWS_ARXIV_API_URL": api_url,
        "LIGHTNEWS_ALLOW_PRIVATE_ADDRESSES": "true",
        "LIGHTNEWS_ARXIV_INTERVAL": "0",
        "LIGHTNEWS_RESOLVE_ONLINE": "false",
        "LIGHTNEWS_SEMANTIC": "off",
        "LIGHTNEWS_JETSTREAM_URL": "ws://127.0.0.1:9/subscribe",
    }


def sign_in_and_read(base: str) -> str:
    """Sign in as the first admin through the pages; the home page then shown."""
    import httpx

    with httpx.Client(base_url=base, headers={"Host": "localhost"}, timeout=30) as client:
        page = client.get("/signin")
        assert page.status_code == 200, page.text
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
        assert token, page.text
        done = client.post(
            "/signin",
            data={"name": ADMIN, "password": PASSWORD, "csrf_token": token[1], "next": "/"},
        )
        assert done.status_code == 303, done.text
        home = client.get("/")
        assert home.status_code == 200, home.text
        return home.text


def wait_for(check: Callable[[], bool], what: str, timeout: float, stack: Stack) -> float:
    began = time.monotonic()
    while not check():
        stack.alive()
        if time.monotonic() - began > timeout:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.2)
    return time.monotonic() - began


def serving(base: str) -> bool:
    import httpx

    try:
        return httpx.get(base + "/signin", headers={"Host": "localhost"}, timeout=2).is_success
    except httpx.HTTPError:
        return False


def refreshed(url: str, address: str) -> bool:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT last_success FROM sources WHERE address = %s", (address,)
        ).fetchone()
    return row is not None and row[0] is not None


def check_running_stack(stack: Stack, url: str, base: str, add_source: Callable[[], str]) -> None:
    """The stack up: pages served to the first admin, a source added now refreshed in a tick."""
    wait_for(lambda: serving(base), "the web processes answer", 60, stack)
    assert "Sign out" in sign_in_and_read(base)
    wait_for(
        lambda: "looking for due sources every" in stack.log("worker"),
        "the worker has started",
        60,
        stack,
    )
    time.sleep(1)  # the worker's first look (at its start) is past: the source waits a tick
    said = add_source()
    assert "all:stack" in said, said
    took = wait_for(lambda: refreshed(url, "all:stack"), "the first refresh", TICK + 20, stack)
    assert took <= TICK + 5, f"the first refresh came {took:.1f} s after the source was added"
    print(f"first refresh {took:.1f} s after the source was added (tick {TICK} s)")
    wait_for(
        lambda: "arxiv-api all:stack: 2 new papers" in stack.log("worker"),
        "the worker says the job's end",
        10,
        stack,
    )
    assert "queued #" in stack.log("worker")
    stack.alive()  # the listener too, though its Jetstream refuses it
    statuses = stack.stop()
    assert statuses["worker"] == 0 and statuses["listen"] == 0, statuses


@pytest.fixture
def arxiv(server: RecordedServer) -> SlowArxiv:
    return SlowArxiv(server, per_query=2, page=2, delay=0.0)


def test_the_compose_stack_comes_up_working(
    empty_db: str, arxiv: SlowArxiv, tmp_path: Path
) -> None:
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    stack = Stack(tmp_path, lab(arxiv.url))
    port = free_port()

    def env_of(service: dict[str, Any]) -> dict[str, str]:
        env = {k: compose_env(v) for k, v in service.get("environment", {}).items()}
        assert env.pop("LIGHTNEWS_DB").startswith("postgresql://")  # host `db`: ours instead
        return {**env, "LIGHTNEWS_DB": empty_db, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    # In compose's order: the setup to its end (the others wait for it), then the services.
    order = [name for name in services if name != "db"]
    assert order[0] == "setup" and services["setup"]["restart"] == "no"
    for name in order[1:]:
        assert services[name]["depends_on"]["setup"]["condition"] == (
            "service_completed_successfully"
        )
    setup = stack.once(
        "setup", as_run_here(services["setup"]["command"], port), env_of(services["setup"])
    )
    assert f"added admin {ADMIN}" in setup, setup
    again = stack.once(
        "setup", as_run_here(services["setup"]["command"], port), env_of(services["setup"])
    )
    assert "exists: its password is left as it is" in again, again
    try:
        for name in order[1:]:
            stack.start(name, as_run_here(services[name]["command"], port), env_of(services[name]))
        assert set(order) == {"setup", "web", "worker", "listen"}

        def add_source() -> str:  # as the compose file's comment says to
            return stack.once(
                "sources",
                as_run_here(["lightnews", "sources", "add", "--query", "all:stack"], port),
                env_of(services["setup"]),
            )

        check_running_stack(stack, empty_db, f"http://127.0.0.1:{port}", add_source)
    finally:
        stack.stop()


def test_the_systemd_units_come_up_working(empty_db: str, arxiv: SlowArxiv, tmp_path: Path) -> None:
    units = {}
    for path in sorted((DEPLOY / "systemd").glob("*.service")):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read(path)
        units[path.stem] = parser["Service"]
    assert set(units) == {"lightnews-web", "lightnews-worker@", "lightnews-listen"}
    assert units["lightnews-worker@"]["Restart"] == "always"
    assert units["lightnews-listen"]["Restart"] == "always"
    secret = tmp_path / "admin-password"
    secret.write_text(PASSWORD + "\n")
    secret.chmod(0o600)
    # /etc/lightnews.env as the web unit's comment says to write it.
    stack = Stack(
        tmp_path,
        {
            **lab(arxiv.url),
            "LIGHTNEWS_DB": empty_db,
            "LIGHTNEWS_ALLOWED_HOSTS": "localhost",
            "LIGHTNEWS_ADMIN_USER": ADMIN,
            "LIGHTNEWS_ADMIN_PASSWORD_FILE": str(secret),
        },
    )
    port = free_port()

    def env_of(service: Any) -> dict[str, str]:
        env = dict(line.split("=", 1) for line in service.get("Environment", "").split() if line)
        return {**env, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # CacheDirectory's stand-in

    try:
        for name in ("lightnews-web", "lightnews-worker@", "lightnews-listen"):
            service = units[name]
            if "ExecStartPre" in service:
                said = stack.once(
                    name, as_run_here(shlex.split(service["ExecStartPre"]), port), env_of(service)
                )
                assert f"added admin {ADMIN}" in said, said
            short = {"lightnews-web": "web", "lightnews-worker@": "worker"}.get(name, "listen")
            stack.start(
                short, as_run_here(shlex.split(service["ExecStart"]), port), env_of(service)
            )

        def add_source() -> str:
            return stack.once(
                "sources",
                as_run_here(["lightnews", "sources", "add", "--query", "all:stack"], port),
                {},
            )

        check_running_stack(stack, empty_db, f"http://127.0.0.1:{port}", add_source)
    finally:
        stack.stop()
