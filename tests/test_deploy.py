"""The deployment files run only commands the CLI has, with options it takes."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from lightnews.cli import cli

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
    assert {"db", "web", "worker", "migrate"} <= set(document["services"])
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
