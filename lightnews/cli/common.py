"""What every ``lightnews`` command shares: the library it acts on, output, errors and exit codes.

Kept apart from the root group (:mod:`lightnews.cli`) so that each command
module imports this and nothing above it: the root group imports the command
modules to register them, and no command module imports the root group back.

Exit codes a cron job can act on:

    0  done
    1  the thing asked for is not there (``show`` of an unknown paper)
    2  the command was used wrongly (bad option, bad value): ``click.UsageError``
    3  done, but some sources failed (their errors are recorded on them)
    4  nothing could be done (every source failed, unreadable input)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from lightnews.errors import LightnewsError, NotFound, UsageError
from lightnews.normalize import validate
from lightnews.normalize.times import utc_now
from lightnews.settings import Settings, with_reader_settings
from lightnews.store import (
    LOCAL_READER,
    ReaderId,
    Store,
    default_db_path,
    is_postgres_url,
    open_store,
)
from lightnews.store.readers import UserView

__all__ = [
    "EXIT_FAILED",
    "EXIT_NOT_FOUND",
    "EXIT_PARTIAL",
    "App",
    "audit_name",
    "checked",
    "emit_json",
    "err",
    "errors_as_exit",
    "moment_typed",
    "out",
    "pass_app",
    "progress_bar",
    "shown",
]

EXIT_NOT_FOUND = 1
EXIT_PARTIAL = 3
EXIT_FAILED = 4

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)


class App:
    """What every command needs: where the database is, the store, the settings."""

    def __init__(self, db: str | Path | None, as_user: str | None = None) -> None:
        self.db_path: str | Path = (
            (str(db) if is_postgres_url(db) else Path(db).expanduser()) if db else default_db_path()
        )
        self.as_user = as_user
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.db_path)
            self._store.write_wait = float(self.settings.write_wait)
        return self._store

    @property
    def opened(self) -> bool:
        """Whether the store is open already (``demo`` picks its own file only before)."""
        return self._store is not None

    @property
    def settings(self) -> Settings:
        return Settings(self.store.saved_settings())

    def in_background(self) -> None:
        """A command that writes in bulk: readers of the web pages go first
        (``background_nice``; see :mod:`lightnews.ingest.priority`)."""
        from lightnews.ingest.priority import yield_cpu

        with errors_as_exit():
            nice = int(self.settings.background_nice)
        yield_cpu(nice)

    @property
    def reader(self) -> ReaderId:
        """Whose follows, mutes and stories a reader's command reads and changes.

        ``--as NAME`` (or ``LIGHTNEWS_USER``); without it the local reader when
        the library has no accounts, its one account when it has one, and a
        usage error when it has several (nobody's state is read by guess).
        """
        return self.user.reader if self.user is not None else LOCAL_READER

    @property
    def user(self) -> UserView | None:
        """The account ``reader`` belongs to (None: the local reader of a library without any)."""
        store = self.store
        if self.as_user:
            try:
                return store.get_user(self.as_user)
            except NotFound as error:
                raise UsageError(str(error)) from None
        users = store.user_count()
        if users == 0:
            return None
        if users == 1:
            return store.list_users()[0]
        raise UsageError(
            f"this library has {users} accounts: say whose feed and state to use with "
            "--as NAME (or LIGHTNEWS_USER=NAME)"
        )

    @property
    def reader_settings(self) -> Settings:
        """The instance's settings with the reader's own (digest address, half-life) over them."""
        store = self.store
        return with_reader_settings(
            Settings(store.saved_settings()), store.reader_settings(self.reader)
        )

    def learn(self) -> None:
        """The reader did something their learned model learns from (a save, a read, their
        word on a paper, a mute): train it now, after the write (:mod:`lightnews.rank.trained`;
        nothing when what it learns from did not change)."""
        from lightnews.rank.trained import TRAINER

        with errors_as_exit():
            TRAINER.train_now(self.store, self.reader, self.settings)

    def close(self) -> None:
        if self._store is not None:
            from lightnews.rank.trained import TRAINER

            TRAINER.drain()  # a training a feed asked for ends before the store does
            self._store.close()


pass_app = click.make_pass_decorator(App)


def emit_json(data: Any) -> None:
    click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))


@contextmanager
def errors_as_exit() -> Iterator[None]:
    """Turn Lightnews errors into a message on stderr and the matching exit code."""
    try:
        yield
    except NotFound as error:
        err.print(f"[red]not found:[/red] {error}")
        sys.exit(EXIT_NOT_FOUND)
    except UsageError as error:
        raise click.UsageError(str(error)) from None
    except LightnewsError as error:
        err.print(f"[red]error:[/red] {error}")
        sys.exit(EXIT_FAILED)


T = TypeVar("T")


def checked(check: Callable[[str], T]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback that runs a :mod:`~lightnews.normalize.validate` check on a value.

    What the check refuses is a usage error naming the option (exit status 2),
    before anything is read or written; repeated options are checked one by one.
    """

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return None
        try:
            if isinstance(value, tuple):
                return tuple(check(v) for v in value)
            return check(value)
        except UsageError as error:
            raise click.BadParameter(str(error), ctx, param) from None

    return callback


def moment_typed(text: str) -> str:
    """A moment as typed, checked now and read later against the library's clock."""
    validate.moment(text, utc_now())
    return text


def progress_bar(console: Console) -> Progress:
    """The progress bar of a long command (on stderr: stdout stays the command's output)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def audit_name(app: App) -> str:
    """Who an admin command is recorded as in the audit log (the CLI runs with the database's
    own rights: ``--as NAME`` names the person, else the system user)."""
    import getpass

    if app.as_user:
        user = app.user  # an account that exists (a usage error otherwise), not free text
        return user.name if user is not None else app.as_user
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:
        return "cli"


def shown(location: str | Path) -> str:
    """Where the library is, as it can be shown (a server URL without its password)."""
    from lightnews.store.postgres import redact

    return redact(str(location))
