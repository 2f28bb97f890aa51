"""Accounts of a shared instance: ``users`` (add, list, passwd, remove) and ``tokens``
(the API tokens of your account)."""

from __future__ import annotations

import sys

import click
from rich.table import Table

from lightnews.cli.common import App, audit_name, emit_json, errors_as_exit, out, pass_app
from lightnews.errors import NotFound, UsageError
from lightnews.normalize.times import now_iso
from lightnews.store.readers import UserView

__all__ = ["tokens", "users"]


def _new_password(from_stdin: bool) -> str:
    """A password from one line of standard input, or typed twice at a hidden prompt."""
    from lightnews.store.secrets import check_password

    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True, err=True)
    return check_password(password)


@click.group()
def users() -> None:
    """Accounts of a shared instance: add, list, change passwords, remove.

    A library without accounts has one local reader and needs no sign-in (on
    loopback). The first account created is an admin and takes over the local
    reader's follows, mutes, saved and read stories and settings.
    """


@users.command("add")
@click.argument("name")
@click.option("--admin", is_flag=True, help="May manage sources and accounts.")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from one line of standard input."
)
@pass_app
def users_add(app: App, name: str, admin: bool, password_stdin: bool) -> None:
    """Add an account (asks for its password)."""
    from lightnews.store.secrets import check_user_name, hash_password

    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        check_user_name(name)
        password = _new_password(password_stdin)
        first = app.store.user_count() == 0
        user = app.store.add_user(name, hash_password(password), admin=admin, now=now_iso())
        app.store.audit(actor, "users.add", name + (" (admin)" if user.admin else ""), now_iso())
    role = "admin" if user.admin else "reader"
    out.print(f"added {role} {user.name} (#{user.id})")
    if first:
        out.print(
            "the first account: it has the local reader's follows, mutes and stories; "
            "the web UI now asks to sign in"
        )


@users.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def users_list(app: App, as_json: bool) -> None:
    """Accounts, admins marked."""
    with errors_as_exit():
        rows = app.store.list_users()
    if as_json:
        emit_json([u.to_json() for u in rows])
        return
    if not rows:
        out.print("no accounts: one local reader, no sign-in (`lightnews users add NAME`)")
        return
    table = Table("id", "name", "role", "created", "shares")
    for user in rows:
        table.add_row(
            str(user.id),
            user.name,
            "admin" if user.admin else "reader",
            user.created_at[:10],
            "yes" if user.shares else "no",
        )
    out.print(table)


@users.command("passwd")
@click.argument("name")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from one line of standard input."
)
@pass_app
def users_passwd(app: App, name: str, password_stdin: bool) -> None:
    """Set an account's password (every session of it ends)."""
    from lightnews.store.secrets import hash_password

    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        user = _named_user(app, name)
        app.store.set_password(user.id, hash_password(_new_password(password_stdin)))
        app.store.audit(actor, "users.passwd", name, now_iso())
    out.print(f"password of {name} changed; its sessions have ended")


@users.command("remove")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask to confirm.")
@pass_app
def users_remove(app: App, name: str, yes: bool) -> None:
    """Remove an account with its follows, mutes, stories, tokens and feed key."""
    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        user = _named_user(app, name)
        if not yes and not click.confirm(f"remove {name} and everything that is theirs?", err=True):
            raise UsageError("nothing removed")
        app.store.remove_user(user.id)
        app.store.audit(actor, "users.remove", name, now_iso())
    out.print(f"removed {name}")


def _named_user(app: App, name: str) -> UserView:
    """An account by name; an unknown name is a usage error (exit 2)."""
    try:
        return app.store.get_user(name)
    except NotFound as error:
        raise UsageError(str(error)) from None


@click.group()
def tokens() -> None:
    """API tokens of your account (for the JSON API's writes and for scripts).

    A token is shown once, when created; only its digest is stored. Send it as
    ``Authorization: Bearer TOKEN``.
    """


def _token_user(app: App) -> UserView:
    user = app.user
    if user is None:
        raise UsageError("API tokens belong to accounts: add one with `lightnews users add NAME`")
    return user


@tokens.command("create")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def tokens_create(app: App, name: str, as_json: bool) -> None:
    """Create a token named NAME (what it is for: "laptop", "zotero sync")."""
    from lightnews.store.secrets import digest, new_token

    label = " ".join(name.split())
    if not label or len(label) > 100:
        raise click.UsageError("a token's name has 1-100 characters")
    with errors_as_exit():
        user = _token_user(app)
        token = new_token()
        made = app.store.create_token(user.id, label, digest(token), now_iso())
    if as_json:
        emit_json({**made.to_json(), "token": token})
        return
    out.print(f"token #{made.id} {label} for {user.name} (shown once, keep it safe):")
    click.echo(token)


@tokens.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def tokens_list(app: App, as_json: bool) -> None:
    """Your tokens (never their secrets): created, last used, revoked."""
    with errors_as_exit():
        rows = app.store.list_tokens(_token_user(app).id)
    if as_json:
        emit_json([t.to_json() for t in rows])
        return
    table = Table("id", "name", "created", "last used", "revoked")
    for t in rows:
        table.add_row(str(t.id), t.name, t.created_at, t.last_used or "", t.revoked_at or "")
    out.print(table)


@tokens.command("revoke")
@click.argument("token_id", type=int)
@pass_app
def tokens_revoke(app: App, token_id: int) -> None:
    """Revoke a token: it is refused from now on."""
    with errors_as_exit():
        user = _token_user(app)
        try:
            app.store.revoke_token(user.id, token_id, now_iso())
        except NotFound as error:
            raise UsageError(str(error)) from None
    out.print(f"token #{token_id} revoked")
