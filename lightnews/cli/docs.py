"""Print the Markdown reference of every ``lightnews`` command, from the CLI itself.

``make docs`` (``python -m lightnews.cli.docs``) writes it to ``docs/cli.md``;
a test fails when that file drifts from what the commands say about themselves.
"""

from __future__ import annotations

import click

from lightnews.cli import cli


def _walk(command: click.Command, path: list[str]) -> list[str]:
    ctx = click.Context(
        command,
        info_name=" ".join(path),
        max_content_width=100,
        terminal_width=100,
        help_option_names=["-h", "--help"],
    )
    lines = [
        f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`",
        "",
        "```text",
        command.get_help(ctx).rstrip(),
        "```",
        "",
    ]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _walk(sub, [*path, name])
    return lines


def render() -> str:
    head = [
        "# Command reference",
        "",
        "Generated from the command line itself by `make docs`; do not edit.",
        "",
    ]
    return "\n".join(head + _walk(cli, ["lightnews"])).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
