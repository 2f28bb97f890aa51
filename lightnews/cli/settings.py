"""``lightnews settings``: every setting with its default, current value and help; ``set``
and ``unset`` (a reader's own settings for the reader, the instance's audited)."""

from __future__ import annotations

import click
from rich.table import Table

from lightnews.cli.common import App, audit_name, emit_json, errors_as_exit, out, pass_app
from lightnews.errors import LightnewsError, UsageError
from lightnews.normalize.times import now_iso
from lightnews.settings import SETTINGS, Settings
from lightnews.store.actions import save_setting

__all__ = ["settings"]


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def settings(ctx: click.Context, as_json: bool) -> None:
    """Every setting with its default, current value and help."""
    if ctx.invoked_subcommand is not None:
        return
    app = ctx.find_object(App)
    assert app is not None
    with errors_as_exit():
        try:  # the reader's own settings (digest address, half-life) over the instance's
            resolved = app.reader_settings
        except UsageError:  # several accounts and no --as: the instance's alone
            resolved = app.settings
    rows = []
    for s in SETTINGS:
        value = resolved.get(s.name)
        rows.append(
            {
                "name": s.name,
                "env": s.env,
                "default": s.default,
                "value": "********" if s.secret and value else value,
                "origin": resolved.origin(s.name),
                "help": s.help,
            }
        )
    if as_json:
        emit_json(rows)
        return
    table = Table("setting", "value", "default", "help", show_lines=False)
    for row in rows:
        table.add_row(
            f"{row['name']}\n[dim]{row['env']}[/dim]",
            str(row["value"]),
            str(row["default"]),
            str(row["help"]),
        )
    out.print(table)


@settings.command("set")
@click.argument("name")
@click.argument("value")
@pass_app
def settings_set(app: App, name: str, value: str) -> None:
    """Save a setting in the database (the environment still overrides it)."""
    try:
        setting = Settings.lookup(name)
        setting.convert(value, f"setting {setting.name}")
    except LightnewsError as error:
        raise click.BadParameter(str(error)) from None
    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        save_setting(app.store, app.reader, setting.name, value, by=actor, now=now_iso())
    out.print(f"{setting.name} = {value}")


@settings.command("unset")
@click.argument("name")
@pass_app
def settings_unset(app: App, name: str) -> None:
    """Forget a saved setting (back to its default)."""
    try:
        setting = Settings.lookup(name)
    except LightnewsError as error:
        raise click.BadParameter(str(error)) from None
    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        save_setting(app.store, app.reader, setting.name, None, by=actor, now=now_iso())
    out.print(f"{setting.name} reset to its default ({setting.default!r})")
