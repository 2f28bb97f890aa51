"""The ``lightnews`` command: every user-facing action from a terminal or a cron job.

Read commands take ``--json`` and print machine-readable output on stdout;
progress goes to stderr. Exit codes a cron job can act on:

    0  done
    1  the thing asked for is not there (``show`` of an unknown paper)
    2  the command was used wrongly (bad option, bad value)
    3  done, but some sources failed (their errors are recorded on them)
    4  nothing could be done (every source failed, unreadable input)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from lightnews import __version__
from lightnews.errors import LightnewsError, NotFound, ParseError, Unavailable, UsageError
from lightnews.normalize import validate
from lightnews.normalize.arxiv_ids import ArxivId
from lightnews.normalize.times import now_iso, utc_now
from lightnews.settings import SETTINGS, Settings, env_name
from lightnews.store import (
    BACKEND_ERRORS,
    LOCAL_READER,
    ReaderId,
    Store,
    default_db_path,
    is_postgres_url,
    open_store,
    unavailable,
)
from lightnews.store.readers import READER_SETTINGS, UserView

if TYPE_CHECKING:
    from lightnews.serve.conversation import SaidPost

__all__ = ["EXIT_FAILED", "EXIT_NOT_FOUND", "EXIT_PARTIAL", "cli", "main"]

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
        return Settings({**store.saved_settings(), **store.reader_settings(self.reader)})

    def close(self) -> None:
        if self._store is not None:
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


def _moment_typed(text: str) -> str:
    """A moment as typed, checked now and read later against the library's clock."""
    validate.moment(text, utc_now())
    return text


def _search_date(text: str) -> str:
    """A search date as typed, checked now and read later against the library's clock."""
    validate.search_date(text, utc_now())
    return text


def _any_category(text: str) -> str:
    return validate.arxiv_category(text, archives=True)


def _keyword(text: str) -> str:
    word = text.strip().lower()
    if not word:
        raise UsageError("give a word to mute, like benchmark")
    return word


def _source_kind(text: str) -> str:
    from lightnews.sources import registry

    return validate.source_kind(text, registry())


def _starter_pack(text: str) -> str:
    from lightnews.sources.bluesky import starter_pack_uri

    starter_pack_uri(text)  # refuses what is not a starter pack's address
    return text.strip()


_DATABASE_ERRORS: tuple[type[Exception], ...] = (Unavailable, *BACKEND_ERRORS)


class _Commands(click.Group):
    """The command group; a database that cannot answer ends any command with a message.

    Whatever the command, a busy or broken database prints what happened and
    what to do (``error: the database is busy ... try again``) and exits with
    ``EXIT_FAILED``, never a traceback.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _DATABASE_ERRORS as error:
            err.print(f"[red]error:[/red] {escape(str(unavailable(error)))}")
            sys.exit(EXIT_FAILED)


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--db",
    metavar="PATH|URL",
    envvar="LIGHTNEWS_DB",
    help="The library: an SQLite file (default: lightnews.db in the user data directory) or "
    "a postgresql://USER@HOST/DB URL for a group's server; env LIGHTNEWS_DB.",
)
@click.option(
    "--as",
    "as_user",
    metavar="NAME",
    envvar="LIGHTNEWS_USER",
    help="Act as this account for reader commands (feed, follow, mute, read, digest, export, "
    "tokens); env LIGHTNEWS_USER. Without accounts: the local reader.",
)
@click.version_option(__version__, prog_name="lightnews")
@click.pass_context
def cli(ctx: click.Context, db: str | None, as_user: str | None) -> None:
    """Lightnews: scholar-powered research news.

    Follow researchers across arXiv, their labs' blogs and other feeds, and read
    one deduplicated feed of the papers they write and discuss.
    """
    app = App(db, as_user)
    ctx.obj = app
    ctx.call_on_close(app.close)


@cli.command()
@click.option(
    "--admin-from-env", is_flag=True,
    help="On a library without accounts, create the first admin: LIGHTNEWS_ADMIN_USER, with "
    "the password in LIGHTNEWS_ADMIN_PASSWORD_FILE (a file) or LIGHTNEWS_ADMIN_PASSWORD. "
    "With accounts, nothing changes (no password is ever overwritten).",
)  # fmt: skip
@pass_app
def init(app: App, admin_from_env: bool) -> None:
    """Create the database (or bring its schema up to date).

    A deployment's setup step runs `lightnews init --admin-from-env` before the
    web processes start: the first time it makes the first admin from the
    environment; every time after, it only says that accounts exist.
    """
    with errors_as_exit():
        version = app.store.schema_version
        said = _admin_from_env(app) if admin_from_env else ""
    out.print(f"database ready at {_shown(app.db_path)} (schema version {version})")
    if said:
        out.print(escape(said))


ADMIN_ENV = ("LIGHTNEWS_ADMIN_USER", "LIGHTNEWS_ADMIN_PASSWORD", "LIGHTNEWS_ADMIN_PASSWORD_FILE")


def _admin_from_env(app: App) -> str:
    """The first admin, made from the environment when the library has no account; what was done.

    Only the *first* account is made: once accounts exist, an admin removed on
    purpose does not come back at the next start, and no password changes.
    """
    from lightnews.store.secrets import (
        check_password,
        check_user_name,
        hash_password,
        verify_password,
    )

    user_env, password_env, file_env = ADMIN_ENV
    name = os.environ.get(user_env, "").strip()
    accounts = app.store.user_count()
    if accounts:
        found = app.store.password_hash(name) if name else None
        if found is None:
            return f"{accounts} accounts exist: no admin made from the environment"
        user, stored = found
        given = _admin_password(required=False)
        if given and not verify_password(stored, given):
            err.print(f"note: the password in the environment is not {name}'s: left as it is "
                      f"(`lightnews users passwd {name}` changes it)")  # fmt: skip
        role = "admin" if user.admin else "reader (not made an admin)"
        return f"{role} {name} exists: its password is left as it is"
    if not name:
        raise UsageError(
            f"--admin-from-env: this library has no accounts; set {user_env} to the first "
            f"admin's name and {file_env} (or {password_env}) to its password"
        )
    check_user_name(name)
    password = check_password(_admin_password(required=True))
    try:
        user = app.store.add_user(name, hash_password(password), admin=True, now=now_iso())
    except UsageError:  # another setup made it meanwhile
        return f"admin {name} exists: its password is left as it is"
    app.store.audit(_actor(app), "users.add", f"{name} (admin, from the environment)", now_iso())
    return f"added admin {user.name} (#{user.id}) from the environment; the web UI asks to sign in"


def _admin_password(*, required: bool) -> str:
    """The first admin's password from the environment (a file's first line, or the value)."""
    _, password_env, file_env = ADMIN_ENV
    value, path = os.environ.get(password_env, ""), os.environ.get(file_env, "").strip()
    if value and path:
        raise UsageError(f"set {password_env} or {file_env}, not both")
    if path:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"{file_env}: cannot read {path}: {error}") from None
        value = lines[0] if lines else ""
    if not value and required:
        raise UsageError(f"no password for the first admin: set {file_env} (a file holding "
                         f"it) or {password_env}")  # fmt: skip
    return value


# -- sources -------------------------------------------------------------------


@cli.group()
def sources() -> None:
    """Add, list, remove and export the sources Lightnews reads."""


@sources.command("add")
@click.argument("url", required=False, callback=checked(validate.feed_address))
@click.option(
    "--category",
    "categories",
    multiple=True,
    metavar="CAT",
    callback=checked(validate.arxiv_category),
    help="An arXiv category to follow (cs.LG); repeatable.",
)
@click.option(
    "--author",
    "authors",
    multiple=True,
    metavar="NAME",
    callback=checked(validate.arxiv_author),
    help='An arXiv author to follow ("Sepp Hochreiter"); repeatable.',
)
@click.option("--query", help="Any arXiv API search_query (ti:diffusion AND cat:cs.CV).")
@click.option("--ids", help="Comma-separated arXiv ids to watch.")
@click.option(
    "--oai-set",
    metavar="SET",
    callback=checked(validate.oai_set),
    help="Harvest an OAI-PMH set (cs, math, physics:hep-th, ...).",
)
@click.option(
    "--oai-format",
    type=click.Choice(["arXiv", "arXivRaw"]),
    default="arXiv",
    show_default=True,
    help="OAI-PMH metadata format for --oai-set.",
)
@click.option(
    "--opml",
    "opml_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Add every feed listed in an OPML file, with its folder.",
)
@click.option(
    "--daily-papers",
    "daily_papers",
    is_flag=True,
    help="Follow Hugging Face Daily Papers (upvotes, comments, GitHub stars).",
)
@click.option(
    "--notes",
    "notes_url",
    metavar="URL",
    callback=checked(validate.notes_address),
    help="A page of someone's paper notes (HTML or Markdown), one note per heading.",
)
@click.option("--folder", help="Folder to file the source under.")
@click.option("--title", help="A title for the source.")
@click.option("--json", "as_json", is_flag=True, help="Print the added sources as JSON.")
@pass_app
def sources_add(
    app: App,
    url: str | None,
    categories: tuple[str, ...],
    authors: tuple[str, ...],
    query: str | None,
    ids: str | None,
    oai_set: str | None,
    oai_format: str,
    opml_file: Path | None,
    daily_papers: bool,
    notes_url: str | None,
    folder: str | None,
    title: str | None,
    as_json: bool,
) -> None:
    """Add a feed URL, arXiv categories, authors, queries or ids, an OAI set, or an OPML file.

    \b
    Examples:
      lightnews sources add https://example.org/blog/feed.xml --folder Labs
      lightnews sources add --category cs.LG --category cs.CL
      lightnews sources add --author "Sepp Hochreiter"
      lightnews sources add --opml subscriptions.opml
    """
    wanted: list[tuple[str, str, str | None, str | None, dict[str, Any]]] = []
    if url:
        wanted.append(("feed", url, title, folder, {}))
    wanted += [("arxiv-api", f"cat:{c}", title, folder, {}) for c in categories]
    wanted += [("arxiv-api", f'au:"{a}"', title or a, folder, {}) for a in authors]
    if query is not None:
        if not query.strip():
            raise click.BadParameter("give an arXiv search query", param_hint="--query")
        wanted.append(("arxiv-api", query.strip(), title, folder, {}))
    if ids:
        try:
            parsed = [validate.paper_id(i) for i in ids.split(",") if i.strip()]
        except UsageError as error:
            raise click.BadParameter(str(error), param_hint="--ids") from None
        if not parsed:
            raise click.BadParameter("give arXiv ids separated by commas", param_hint="--ids")
        cleaned = ",".join(dict.fromkeys(p.base for p in parsed))
        wanted.append(("arxiv-api", f"id:{cleaned}", title, folder, {}))
    if oai_set:
        wanted.append(("arxiv-oai", oai_set, title, folder, {"metadataPrefix": oai_format}))
    if daily_papers:
        wanted.append(("hf-daily", "", title or "Hugging Face Daily Papers", folder, {}))
    if notes_url:
        wanted.append(("notes", notes_url, title, folder, {}))
    if opml_file:
        wanted += _opml_feeds(opml_file, folder, int(app.settings.max_title_chars))
    if not wanted:
        raise click.UsageError(
            "nothing to add: give a URL or one of --category, --author, "
            "--query, --ids, --oai-set, --daily-papers, --notes, --opml"
        )

    added: list[dict[str, Any]] = []
    with errors_as_exit():
        actor = _actor(app)  # checked before anything changes
        for kind, address, name, group, params in wanted:
            row, created = app.store.add_source(
                kind, address, now=now_iso(), title=name, folder=group, params=params
            )
            if created:
                app.store.audit(actor, "sources.add", f"#{row.id} {row.kind} {row.address}",
                                now_iso())  # fmt: skip
            added.append({**row.to_json(), "created": created})
    if as_json:
        emit_json(added)
        return
    for entry in added:
        state = "added" if entry["created"] else "already there"
        out.print(f"{state}: #{entry['id']} {entry['kind']} {entry['url']}")


#: An OPML file larger than this, or listing more feeds, is not a reader's subscriptions.
MAX_OPML_BYTES = 15 * 1024 * 1024
MAX_OPML_FEEDS = 5000


def _opml_feeds(
    path: Path, folder: str | None, title_chars: int
) -> list[tuple[str, str, str | None, str | None, dict[str, Any]]]:
    """The feeds of an OPML file, each address checked as ``sources add URL`` checks it
    (those refused are said and left out) and each title and folder cut to the title limit."""
    from lightnews.sources.opml import parse_opml

    with errors_as_exit():
        if path.stat().st_size > MAX_OPML_BYTES:
            raise UsageError(f"{path} is over {MAX_OPML_BYTES // (1024 * 1024)} MB: not an OPML "
                             "list of subscriptions")  # fmt: skip
        try:
            feeds = parse_opml(path.read_bytes())
        except ParseError as error:  # the user's file: wrong usage
            raise UsageError(f"{path}: {error}") from None
        if len(feeds) > MAX_OPML_FEEDS:
            raise UsageError(f"{path} lists {len(feeds):,} feeds: at most {MAX_OPML_FEEDS:,}")
    found: list[tuple[str, str, str | None, str | None, dict[str, Any]]] = []
    for feed in feeds:
        try:
            address = validate.feed_address(feed.url)
        except UsageError as error:
            err.print(f"skipped {escape(feed.url[:200])}: {escape(str(error))}")
            continue
        title = feed.title[:title_chars] if feed.title else None
        group = folder or (feed.folder[:title_chars] if feed.folder else None)
        found.append(("feed", address, title, group, {}))
    if feeds and not found:
        raise click.UsageError(f"no feed of {path} has an address that can be followed")
    return found


@sources.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def sources_list(app: App, as_json: bool) -> None:
    """List sources with their health: last success, last error, next attempt."""
    with errors_as_exit():
        rows = app.store.list_sources()
    incomplete = [r for r in rows if r.incomplete]
    if as_json:
        emit_json([r.to_json() for r in rows])
        if incomplete:  # a listing arXiv served short or stale: cron should know
            sys.exit(3)
        return
    if not rows:
        out.print("no sources yet: add one with `lightnews sources add`")
        return
    table = Table("id", "kind", "source", "folder", "last success", "errors", "next attempt")
    for r in rows:
        health = f"[red]{r.error_count}: {r.last_error}[/red]" if r.last_error else "0"
        table.add_row(
            str(r.id),
            r.kind,
            r.title or r.address,
            r.folder or "",
            r.last_success or "never",
            health,
            r.next_attempt or "now",
        )
    out.print(table)
    for r in incomplete:
        out.print(f"[red]#{r.id} {r.kind} {r.address}: {r.incomplete}[/red]")
    if incomplete:
        sys.exit(3)


@sources.command("remove")
@click.argument("source_ids", nargs=-1, type=int, required=True)
@pass_app
def sources_remove(app: App, source_ids: tuple[int, ...]) -> None:
    """Remove sources by id (their items go; papers stay)."""
    with errors_as_exit():
        actor = _actor(app)  # checked before anything changes
        for source_id in source_ids:
            row = app.store.remove_source(source_id)
            app.store.audit(actor, "sources.remove", f"#{row.id} {row.kind} {row.address}",
                            now_iso())  # fmt: skip
            out.print(f"removed #{row.id} {row.kind} {row.address}")


@sources.command("export")
@click.option("--opml", "as_opml", is_flag=True, default=True, help="OPML 2.0 (the default).")
@pass_app
def sources_export(app: App, as_opml: bool) -> None:
    """Print the feed sources as OPML, folders included."""
    from lightnews.deliver.export import sources_opml

    with errors_as_exit():
        click.echo(sources_opml(app.store).decode())


# -- ingest ----------------------------------------------------------------------


def _progress(console: Console) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


@cli.command()
@click.option("--force", is_flag=True, help="Refresh every source, due or not.")
@click.option("--kind", "kinds", multiple=True, help="Only sources of this kind; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report per source.")
@pass_app
def refresh(app: App, force: bool, kinds: tuple[str, ...], as_json: bool) -> None:
    """Fetch every due source politely, with progress and a summary.

    Exit status 3 when some sources failed, 4 when all did; each failure is
    recorded on its source (see `lightnews sources list`).
    """
    app.in_background()
    from lightnews.ingest.refresh import refresh as run_refresh

    with errors_as_exit():
        settings = app.settings
        due = len(app.store.list_sources())
        with _progress(err) as progress:
            task = progress.add_task("refreshing", total=due)

            def started(row: Any) -> None:
                progress.update(task, description=f"{row.kind} {row.title or row.address}")

            reports = run_refresh(
                app.store,
                settings,
                force=force,
                kinds=list(kinds) or None,
                on_start=started,
                on_done=lambda r: progress.advance(task),
            )
    failed = [r for r in reports if not r.ok]
    if as_json:
        emit_json([r.to_json() for r in reports])
    else:
        for r in reports:
            if r.ok:
                note = (
                    "not modified"
                    if r.not_modified
                    else (
                        f"{r.saved.papers_new} new papers, {r.saved.items_new} new items, "
                        f"{r.saved.papers_updated + r.saved.items_updated} updated"
                    )
                )
                out.print(f"[green]ok[/green]   #{r.source_id} {r.kind} {r.address}: {note}")
            else:
                out.print(
                    f"[red]fail[/red] #{r.source_id} {r.kind} {r.address}: {r.error} "
                    f"(next attempt {r.next_attempt})"
                )
        out.print(f"{len(reports)} sources refreshed, {len(failed)} failed")
    _embed_after(app, as_json)
    if reports and len(failed) == len(reports):
        sys.exit(EXIT_FAILED)
    if failed:
        sys.exit(EXIT_PARTIAL)


@cli.command()
@click.option(
    "--kind",
    required=True,
    help="Source kind that reads the file (arxiv-api, arxiv-oai, arxiv-abs, feed, ...).",
)
@click.option(
    "--from-file",
    "path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A saved response, exactly as the service sent it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def ingest(app: App, kind: str, path: Path, as_json: bool) -> None:
    """Read a saved response instead of the network (replay): same parser, same store."""
    app.in_background()
    from lightnews.ingest.replay import ingest_file

    with errors_as_exit():
        report = ingest_file(app.store, kind, path, app.settings)
    if as_json:
        emit_json(report.to_json())
    elif report.ok:
        s = report.saved
        out.print(
            f"{path.name}: {s.papers_new} new papers, {s.papers_updated} updated, "
            f"{s.items_new} new items, {s.items_updated} updated, "
            f"{s.mentions} mentions, {s.unchanged} unchanged"
        )
        for warning in s.warnings:
            err.print(f"[yellow]warning:[/yellow] {warning}")
    else:
        err.print(f"[red]error:[/red] {path.name}: {report.error}")
    if not report.ok:
        sys.exit(EXIT_FAILED)
    _embed_after(app, as_json)


def _embed_after(app: App, quiet: bool) -> None:
    """Embed what a refresh or an ingest brought, and say so (on stderr)."""
    from lightnews.embed import embed_new

    with errors_as_exit():
        result = embed_new(app.store, app.settings)
    if quiet:
        return
    if isinstance(result, str):
        err.print(f"[dim]search stays lexical: {result}[/dim]")
    elif result.embedded:
        err.print(f"[dim]{result.embedded:,} papers embedded for search by meaning[/dim]")


@cli.group("import")
def import_group() -> None:
    """Bulk imports."""


@import_group.command("library")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--list", "list_name", metavar="NAME",
              help="File the saves in this saved list (an interest of its own).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_app
def import_library(app: App, path: Path, list_name: str | None, as_json: bool) -> None:
    """Save the papers of your reference library: a BibTeX or CSL JSON export (Zotero,
    Mendeley, Paperpile, JabRef). Your feed learns what you like from them at once.

    Entries with an arXiv id are saved (papers the library lacks are fetched by the
    next refresh); entries with another DOI are saved when a stored paper has it.
    Re-running is safe.
    """
    from lightnews.rank.coldstart import save_library
    from lightnews.sources.libraries import parse_library

    if list_name is not None and not list_name.strip():
        raise click.BadParameter("give the list a name", param_hint="--list")
    with errors_as_exit():
        if path.stat().st_size > 50 * 1024 * 1024:
            raise UsageError(f"{path} is over 50 MB: not one person's library")
        try:
            entries = parse_library(path.read_bytes())
        except ParseError as error:  # the user's file: wrong usage, not a failed fetch
            raise UsageError(str(error)) from None
        done = save_library(app.store, app.reader, entries, now_iso(), list_name)
    if as_json:
        emit_json(done.to_json())
        return
    fetched = f" ({done.new_stubs} new to the library, fetched at the next refresh)" if (
        done.new_stubs) else ""  # fmt: skip
    out.print(f"saved {done.saved} of {done.entries} entries{fetched}"
              + (f" in the list “{list_name}”" if list_name else ""))  # fmt: skip
    if done.unmatched:
        shown = ", ".join(done.unmatched[:8]) + (" …" if len(done.unmatched) > 8 else "")
        out.print(f"{len(done.unmatched)} without an arXiv id or a known DOI: {shown}")


@import_group.command("export")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print what was taken as JSON.")
@pass_app
def import_export(app: App, path: Path, as_json: bool) -> None:
    """Take back what `lightnews export` wrote: follows, mutes, read and saved stories, your
    settings, and the shared decisions, sources and settings (those in the audit log).

    Re-running is safe: what is already so is left as it is. Exit status 3 when some
    entries could not be taken (each is printed with why).
    """
    from lightnews.deliver.export import read_export, user_import

    with errors_as_exit():
        if path.stat().st_size > 200 * 1024 * 1024:
            raise UsageError(f"{path} is over 200 MB: not an export of one reader")
        document = read_export(path.read_bytes())
        actor = _actor(app)  # checked before anything changes
        report = user_import(app.store, app.reader, document, now_iso(), actor=actor)
    if as_json:
        emit_json(report.to_json())
    else:
        out.print(f"imported {path.name}: {report.follows} follows, {report.mutes} mutes, "
                  f"{report.stories} stories, {report.settings} settings, {report.sources} "
                  f"sources, {report.decisions} decisions new or changed")  # fmt: skip
        for note in report.remarks:
            err.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
        for problem in report.left_out:
            err.print(f"[red]left out:[/red] {escape(problem)}", soft_wrap=True)
    if report.left_out:
        sys.exit(EXIT_PARTIAL)


@import_group.command("arxiv-snapshot")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--batch-size", default=5000, show_default=True, type=click.IntRange(min=1),
    help="Records per batch (several batches make one transaction).",
)
@click.option(
    "--connections", type=click.IntRange(min=1), default=None,
    help="PostgreSQL: connections inserting new papers at once, each a server process "
    "computing their full-text columns [default: the CPU count, at most 8].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_app
def import_snapshot(
    app: App, path: Path, batch_size: int, connections: int | None, as_json: bool
) -> None:
    """Import arXiv's metadata snapshot (JSON Lines), streamed in constant memory.

    Re-importing is safe: unchanged records are skipped, changed ones merged.
    """
    app.in_background()
    from lightnews.ingest.bulk import import_snapshot as run_import
    from lightnews.normalize.limits import Limits

    with errors_as_exit(), _progress(err) as progress:
        task = progress.add_task(f"importing {path.name}", total=path.stat().st_size)
        summary = run_import(
            app.store,
            path,
            batch_size=batch_size,
            on_progress=lambda done: progress.update(task, completed=done),
            limits=Limits.from_settings(app.settings),
            connections=connections,
        )
    if as_json:
        emit_json(summary.to_json())
    else:
        out.print(
            f"{summary.records} records in {summary.seconds:.1f}s "
            f"({summary.rate:,.0f}/s): {summary.saved.papers_new} new, "
            f"{summary.saved.papers_updated} updated, {summary.saved.unchanged} unchanged, "
            f"{summary.saved.stubs} stubs (no title yet), {summary.errors.count} unreadable lines"
            + (f", {summary.cut} fields cut to size" if summary.cut else "")
            + (f"; {summary.attributed} scholars attributed" if summary.attributed else "")
        )
        for example in summary.errors.examples:
            err.print(f"[yellow]skipped[/yellow] {example}")
        for example in summary.cut_examples:
            err.print(f"[yellow]cut[/yellow] {example}")
        if summary.saved.papers_new or summary.saved.papers_updated:
            err.print("[dim]next: `lightnews embed` makes them searchable by meaning[/dim]")
    if summary.records == 0 and summary.errors.count:
        sys.exit(EXIT_FAILED)


@cli.command()
@click.option("--limit", type=click.IntRange(min=1), help="Embed at most this many papers now.")
@click.option(
    "--batch-size", default=1024, show_default=True, type=click.IntRange(min=1),
    help="Papers per batch.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def embed(app: App, limit: int | None, batch_size: int, as_json: bool) -> None:
    """Give papers sentence vectors, so search and related papers follow meaning.

    Embeds every paper that has no vector from the encoder chosen by the
    `semantic` setting; interrupted runs keep their work, re-runs go on.
    Needs the semantic extra. The first run makes the encoder from the packaged
    model (the default exports it to ONNX with int8 weights: under a minute, once).
    """
    app.in_background()
    from lightnews.embed import embed_papers

    with errors_as_exit():
        settings = app.settings
        total = app.store.count_unembedded()
        if limit is not None:
            total = min(total, limit)
        with _progress(err) as progress:
            task = progress.add_task(f"embedding ({settings.semantic})", total=total)
            report = embed_papers(
                app.store, settings, limit=limit, batch_size=batch_size,
                progress=lambda r: progress.update(task, completed=r.embedded),
            )  # fmt: skip
    if as_json:
        emit_json(report.to_json())
        return
    out.print(
        f"{report.embedded:,} papers embedded with {report.encoder} in {report.seconds:.1f}s "
        f"({report.per_second:,.0f}/s); {report.remaining:,} left"
    )


# -- read ----------------------------------------------------------------------------


@cli.command()
@click.option(
    "--limit", default=30, show_default=True, type=click.IntRange(min=1), help="How many stories."
)
@click.option("--newest", is_flag=True, help="Most recent activity first, without ranking.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "atom", "jsonfeed"]),
    default="text",
    show_default=True,
    help="Print as text, Atom 1.0 or JSON Feed 1.1.",
)
@click.option(
    "--papers-only",
    is_flag=True,
    help="Only papers' stories: leave out posts and articles that name no paper.",
)
@click.option(
    "--with-read", is_flag=True, help="Keep the stories you have read (marked read)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def feed(
    app: App,
    limit: int,
    newest: bool,
    fmt: str,
    papers_only: bool,
    with_read: bool,
    as_json: bool,
) -> None:
    """The feed: stories ranked by what the scholars you follow write and discuss.

    Every entry says why it is there: posted or authored by a followed scholar,
    how many scholars discuss it, upvotes, topics you follow; newer counts more
    (the half_life_hours setting). The whole candidate window is ranked before
    the list is cut, so --limit 5 is the first five of --limit 50. Stories you
    have read stay out until something new happens to them (--with-read keeps them).
    """
    from lightnews.rank import newest_stories, rank_stories

    with errors_as_exit():
        settings = app.reader_settings
        reader = app.reader
        stories = (
            [s for s in newest_stories(app.store, reader, None) if s.arxiv_id or not papers_only]
            if newest
            else rank_stories(
                app.store,
                reader,
                limit=limit,
                half_life_hours=settings.half_life_hours,
                bar=settings.attribution_bar,
                settings=settings,
                papers_only=papers_only,
                keep_read=with_read,
            )
        )[:limit]
    if as_json:
        emit_json([s.to_json() for s in stories])
        return
    if fmt != "text":
        from lightnews.deliver.export import FeedEntry, atom_feed, json_feed

        entries = [FeedEntry(s.url or s.key, s.title, s.url, s.time, why=s.why)
                   for s in stories]  # fmt: skip
        if fmt == "atom":
            click.echo(atom_feed("Lightnews: your feed", "lightnews:feed", entries).decode())
        else:
            emit_json(json_feed("Lightnews: your feed", "lightnews:feed", entries))
        return
    if not stories:
        out.print("the feed is empty: add sources and run `lightnews refresh`")
    for story in stories:
        label = story.arxiv_id or story.key  # what `read`, `more-like-this` take (item:ID)
        out.print(f"[bold]{escape(story.title)}[/bold]")
        score = "" if newest else f" · score {story.score:.2f}"
        out.print(f"  {label} · {(story.time or '')[:10]}{score}")
        out.print(f"  why: {escape(' · '.join(story.why))}")
        if story.url:
            out.print(f"  {story.url}")


@cli.command()
@click.argument("query")
@click.option(
    "--limit", default=20, show_default=True, type=click.IntRange(1, 200),
    help="Results per page.",
)
@click.option(
    "--page", default=1, show_default=True, type=click.IntRange(min=1), help="Page number."
)
@click.option(
    "--subject",
    callback=checked(_any_category),
    help="An arXiv category (cs.LG) or a whole archive (cs).",
)
@click.option(
    "--since",
    callback=checked(_search_date),
    help="Published on or after this day (2025-01-31, or 1d, 2w, today, yesterday).",
)
@click.option(
    "--until",
    callback=checked(_search_date),
    help="Published on or before this day (same forms as --since).",
)
@click.option("--scholar", "scholar_who", metavar="WHO", help="Papers attributed to a scholar.")
@click.option(
    "--source-kind",
    callback=checked(_source_kind),
    help="Papers recorded or mentioned by a kind of source (bluesky).",
)
@click.option(
    "--kind", "what", default="all", show_default=True,
    type=click.Choice(["all", "papers", "said"]),
    help="Papers, what was said (posts, threads, articles, notes), or both (papers first).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def search(
    app: App,
    query: str,
    limit: int,
    page: int,
    subject: str | None,
    since: str | None,
    until: str | None,
    scholar_who: str | None,
    source_kind: str | None,
    what: str,
    as_json: bool,
) -> None:
    """Search papers, posts, threads, articles and notes by words, "exact phrases",
    prefix*, -excluded words, or an arXiv id.

    Papers come first (words fused with meaning), then what was said (by words;
    a thread once); every result says its kind.
    """
    from lightnews.model import SearchFilters
    from lightnews.search import search_papers

    with errors_as_exit():
        now = app.settings.now()  # "1w" is a week before the library's clock
        since = validate.search_date(since, now) if since else None
        until = validate.search_date(until, now) if until else None
        validate.date_range(since, until)
        filters = SearchFilters(
            subject=subject,
            since=since,
            until=until,
            source_kind=source_kind,
            scholar_id=app.store.find_scholar(scholar_who) if scholar_who else None,
        )
        hits = search_papers(
            app.store,
            query,
            limit=limit,
            offset=(page - 1) * limit,
            filters=filters,
            settings=app.settings,
            items=what != "papers",
        )
        papers = list(hits) if what != "said" else []
        if page > 1 and not papers and not hits.items:
            raise UsageError(f"page {page} is past the last page of results for this search")
    _how_found(hits)
    if as_json:
        emit_json([h.to_json() for h in papers] + [i.to_json() for i in hits.items])
        return
    if not papers and not hits.items:
        out.print("no results")
    for hit in papers:
        out.print(
            f"{hit.arxiv_id:>18}  {hit.title}  [dim]{(hit.published or '')[:10]} "
            f"{hit.primary_category or ''} · by {' and '.join(hit.matched)}[/dim]"
        )
    if hits.items and papers:
        out.print("[bold]said[/bold]")
    for item in hits.items:
        who = f" · {item.author}" if item.author else ""
        out.print(
            f"{item.kind:>18}  {escape(item.title or item.snippet[:80])}  [dim]"
            f"{(item.published or '')[:10]}{who} · {item.source_kind} · item {item.item_id}[/dim]"
        )
        out.print(f"{'':>18}  [dim]{escape(item.snippet)}[/dim]")
        if item.url:
            out.print(f"{'':>18}  {escape(item.url)}")


def _how_found(results: Any) -> None:
    """Say on stderr how results were found, when that is not the full hybrid search."""
    if results.mode == "lexical" or results.note:
        err.print(f"[dim]{results.note or 'by words'}[/dim]")


@cli.command()
@click.argument("arxiv_id", callback=checked(validate.paper_id))
@click.option(
    "--limit", default=10, show_default=True, type=click.IntRange(1, 200), help="How many papers."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def related(app: App, arxiv_id: ArxivId, limit: int, as_json: bool) -> None:
    """Papers like this one: all the words of its title and abstract, fused with meaning.

    Without the semantic extra (or before `lightnews embed`), by words only, and it says so.
    """
    from lightnews.search import related_papers

    with errors_as_exit():
        hits = related_papers(app.store, arxiv_id.base, limit=limit, settings=app.settings)
    _how_found(hits)
    if as_json:
        emit_json([h.to_json() for h in hits])
        return
    for hit in hits:
        out.print(f"{hit.arxiv_id:>18}  {hit.title}  [dim]by {' and '.join(hit.matched)}[/dim]")


@cli.command()
@click.argument("arxiv_id", callback=checked(validate.paper_id))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--bibtex", "as_bibtex", is_flag=True, help="Print a BibTeX entry.")
@click.option(
    "--posts",
    "posts_page",
    type=click.IntRange(1, 100_000),
    default=1,
    show_default=True,
    help="Which page of the conversation on the network to show.",
)
@pass_app
def show(app: App, arxiv_id: ArxivId, as_json: bool, as_bibtex: bool, posts_page: int) -> None:
    """Show a paper with its versions, links, everything that mentions it and its conversation.

    ARXIV_ID is an id (2510.03172, arXiv:2510.03172v2) or the paper's address
    (https://arxiv.org/abs/2510.03172, its PDF, Hugging Face or DOI link).
    The conversation is what the network (``lightnews listen``) says of it:
    threads whole, replies and quotes under what they answer, bots folded away.
    Exit status 1 when the paper is not stored.
    """
    from lightnews.serve.conversation import read_conversation

    with errors_as_exit():
        paper = app.store.get_paper(arxiv_id.base)
        talk = read_conversation(app.store, paper.arxiv_id, app.reader, app.settings.now(),
                                 posts_page)  # fmt: skip
        card = app.store.paper_cards([paper.arxiv_id]).get(paper.arxiv_id) if paper.stub else None
    if as_json:
        emit_json({**paper.to_json(), "conversation": talk.to_json(),
                   "link_card": card.to_json() if card else None})  # fmt: skip
        return
    if as_bibtex:
        from lightnews.deliver.export import bibtex

        click.echo(bibtex([paper]), nl=False)
        return
    if paper.stub:
        title = f"{card.title} (stub: from a post's link card)" if card else "(a stub)"
        out.print(f"[bold]{escape(title)}[/bold] [dim]metadata not fetched yet[/dim]")
    else:
        out.print(f"[bold]{escape(paper.title)}[/bold]")
    out.print(
        f"{paper.arxiv_id} · {paper.primary_category or ''} · "
        f"{(paper.published or '')[:10]}"
        + (" · [red]withdrawn[/red]" if paper.withdrawn else "")
    )
    if paper.authors:
        out.print(", ".join(paper.authors))
    if paper.versions:
        out.print(
            "versions: "
            + ", ".join(f"{v.version} {(v.date or '')[:10]}" for v in paper.versions)
        )
    venue = paper.venue
    if venue is not None:
        out.print(f"venue: {venue.reason} (read from its {venue.source})", markup=False)
    for change in paper.changes:
        out.print(f"{change.note} (stored {change.seen_at[:10]})", markup=False)
    if paper.abstract:
        out.print()
        out.print(paper.abstract)
    out.print()
    for name, link in paper.links.items():
        out.print(f"{name}: {link}")
    if paper.mentions:
        out.print(f"\n[bold]mentioned in {len(paper.mentions)} items[/bold]")
        for m in paper.mentions:
            out.print(f"  {m.kind} · {m.source} · {m.title} · {m.url or ''}")
    if talk:
        out.print(f"\n[bold]on the network: {talk.why}[/bold]")
        for unit in talk.units:
            for n, post in enumerate(unit.posts):
                _said_line(post, "  " if n == 0 else "   ↳ ", "")
            if unit.reposted_by:
                who = (h if h.startswith("did:") else f"@{h}" for h in unit.reposted_by)
                out.print("     reposted by " + ", ".join(who), markup=False)
            for post in unit.replies:
                _said_line(post, "     ", "replied")
            for post in unit.quotes:
                _said_line(post, "     ", "quoted it")
        if talk.pages > 1:
            out.print(f"page {talk.page} of {talk.pages} (--posts N for another)")


def _said_line(post: SaidPost, indent: str, how: str) -> None:
    """One post of a story's conversation, as ``show`` prints it."""
    who = post.author + (f" @{post.handle}" if post.handle and post.author != f"@{post.handle}"
                         else "")  # fmt: skip
    marks = (" (you follow)" if post.followed else "") + (" [this week]" if post.recent else "")
    head = f"{indent}{who}{marks}{' ' + how if how else ''} · {(post.created_at or '')[:16]}"
    out.print(head, markup=False)
    pad = " " * (len(indent) + 2)
    out.print(f"{pad}{' '.join(post.text.split())[:280]}", markup=False)
    if post.url:
        out.print(f"{pad}{post.url}", markup=False)


@cli.command()
@click.argument("text", required=False)
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read the text from a file.",
)
@click.option("--offline", is_flag=True, help="Never fetch a URL given as TEXT.")
@click.option(
    "--bar",
    type=float,
    default=None,
    help="Confidence a link needs (default: the link_bar setting).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def resolve(
    app: App,
    text: str | None,
    path: Path | None,
    offline: bool,
    bar: float | None,
    as_json: bool,
) -> None:
    """Which papers does this text or URL mention? Identifiers, titles, "Surname: title".

    TEXT may be text, a URL (its page is fetched unless --offline), or "-" for
    standard input; --file reads a file. A page in a format Lightnews ingests
    (a feed, a notes page, saved Bluesky posts) is read as ingesting it would
    read it, and linked by the same linker. Papers cited as "Surname: short
    title" that the library lacks are looked up on arXiv (not with --offline
    or resolve_online off). Exit status 1 when nothing is found.
    """
    from lightnews.ingest.resolve import resolve_bytes
    from lightnews.sources.http import HttpClient

    kind: str | None = None
    if path is not None:
        body = path.read_bytes()
    elif text in (None, "-"):
        body = sys.stdin.buffer.read()
    else:
        assert text is not None
        body, kind = text.encode("utf-8"), "text"
    settings = app.settings if bar is None else app.settings.with_overrides(link_bar=bar)
    online = not offline and bool(settings.resolve_online)
    with errors_as_exit():
        stripped = body.strip()
        address = ""
        with HttpClient(settings) as client:
            if (
                not offline
                and stripped.startswith((b"http://", b"https://"))
                and b" " not in stripped
            ):
                address = stripped.decode("utf-8", errors="replace")
                body, kind = client.get(address).body, None
            result = resolve_bytes(
                app.store,
                body,
                settings,
                kind=kind,
                address=address,
                client=client if online else None,
            )
        mentions = list(result.mentions)
        for warning in result.warnings:
            err.print(f"[yellow]warning:[/yellow] {warning}")
        known = app.store.papers_by_ids([m.arxiv_id for m in mentions])
    rows = [
        {
            "arxiv_id": m.arxiv_id,
            "title": known[m.arxiv_id].title if m.arxiv_id in known else "",
            "method": m.method,
            "confidence": m.confidence,
        }
        for m in sorted(mentions, key=lambda m: m.confidence, reverse=True)
    ]
    if as_json:
        emit_json(rows)
    else:
        for row in rows:
            out.print(
                f"{row['arxiv_id']:>18}  {row['confidence']:.2f} {row['method']:<12} "
                f"{row['title'] or '(not stored yet)'}"
            )
        if not rows:
            out.print("no paper found")
    if not rows:
        sys.exit(EXIT_NOT_FOUND)


# -- scholars ------------------------------------------------------------------------------


@cli.command()
@click.argument("handle", required=False, callback=checked(validate.bluesky_handle))
@click.option(
    "--arxiv-author",
    "arxiv_author",
    metavar="NAME",
    callback=checked(validate.arxiv_author),
    help='Follow an arXiv author ("Sepp Hochreiter"): their papers, attributed.',
)
@click.option(
    "--orcid", metavar="ID", callback=checked(validate.orcid),
    help="Add an ORCID iD to the scholar (its check digit is checked).",
)
@click.option(
    "--starter-pack",
    "starter_pack",
    metavar="URL",
    callback=checked(_starter_pack),
    help="Follow every member of a Bluesky starter pack.",
)
@click.option(
    "--scholar",
    "scholar_query",
    metavar="WHO",
    help="Add the identity to this existing scholar instead of a new one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scholar as JSON.")
@pass_app
def follow(
    app: App,
    handle: str | None,
    arxiv_author: str | None,
    orcid: str | None,
    starter_pack: str | None,
    scholar_query: str | None,
    as_json: bool,
) -> None:
    """Follow a scholar: a Bluesky @handle, an arXiv author, an ORCID, or a starter pack.

    \b
    Examples:
      lightnews follow @mkirchhof.bsky.social
      lightnews follow --arxiv-author "Sepp Hochreiter"
      lightnews follow --orcid 0000-0002-1825-0097 --scholar "Sepp Hochreiter"
      lightnews follow --starter-pack https://bsky.app/starter-pack/someone/3kabc
    Run `lightnews refresh` afterwards to fetch what they wrote.
    """
    from lightnews.ingest.follow import follow_scholar

    if not (handle or arxiv_author or orcid or starter_pack):
        raise click.UsageError("give a @handle, --arxiv-author, --orcid or --starter-pack")
    now = now_iso()
    store = app.store
    with errors_as_exit():
        reader = app.reader
        if starter_pack:
            row, _ = store.add_source(
                "bluesky-starter-pack", starter_pack, now=now,
                params={"follow_members": True, "follow_for": int(reader)},
            )  # fmt: skip
            out.print(
                f"following the members of {starter_pack} (source #{row.id}); "
                "run `lightnews refresh`"
            )
            if not (handle or arxiv_author or orcid):
                return
        scholar_id = follow_scholar(
            store,
            reader,
            now,
            handle=handle,
            arxiv_author=arxiv_author,
            orcid=orcid,
            scholar_id=store.find_scholar(scholar_query) if scholar_query else None,
        )
        scholar = store.get_scholar(scholar_id)
    if as_json:
        emit_json(scholar.to_json())
        return
    ids = ", ".join(f"{i.kind} {i.value}" for i in scholar.identities)
    out.print(f"following #{scholar.id} {scholar.name} ({ids}); run `lightnews refresh`")


@cli.command()
@click.argument("who")
@pass_app
def unfollow(app: App, who: str) -> None:
    """Stop following a scholar (kept; their sources pause when no reader follows them)."""
    with errors_as_exit():
        scholar_id = app.store.find_scholar(who)
        app.store.set_followed(app.reader, scholar_id, False, now_iso())
        if not app.store.get_scholar(scholar_id).followed:  # nobody follows them now
            for source in app.store.scholar_sources(scholar_id):
                app.store.set_source_enabled(source.id, False)
        out.print(f"unfollowed #{scholar_id} {app.store.get_scholar(scholar_id).name}")


@cli.group()
def scholars() -> None:
    """List scholars, merge or split them, confirm or reject their papers."""


@scholars.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def scholars_list(app: App, as_json: bool) -> None:
    """Scholars with their identities and how many records are attributed to them."""
    with errors_as_exit():
        rows = app.store.list_scholars(app.settings.attribution_bar)
        mine = app.store.follows(app.reader)
    rows = [replace(r, followed=r.id in mine) for r in rows]  # whether *you* follow them
    if as_json:
        emit_json([r.to_json() for r in rows])
        return
    if not rows:
        out.print("no scholars yet: `lightnews follow @handle` or `--arxiv-author NAME`")
        return
    table = Table("id", "name", "identities", "records", "followed")
    for row in rows:
        ids = "\n".join(f"{i.kind}: {i.value}" for i in row.identities)
        table.add_row(
            str(row.id),
            row.name,
            ids,
            str(row.records),
            "yes" if row.followed else "no",
        )
    out.print(table)


@scholars.command("merge")
@click.argument("keep")
@click.argument("drop")
@pass_app
def scholars_merge(app: App, keep: str, drop: str) -> None:
    """Merge scholar DROP into KEEP (one person known twice)."""
    from lightnews.link.attribution import attribute_scholar

    with errors_as_exit():
        keep_id, drop_id = app.store.find_scholar(keep), app.store.find_scholar(drop)
        app.store.merge_scholars(keep_id, drop_id)
        count = attribute_scholar(app.store, keep_id)
        out.print(f"merged #{drop_id} into #{keep_id}: {count} attributed records")


@scholars.command("split")
@click.argument("who")
@click.option(
    "--identity",
    "identities",
    multiple=True,
    required=True,
    metavar="KIND:VALUE",
    help="An identity to move to the new scholar (arxiv-name:NAME); repeatable.",
)
@click.option("--name", required=True, help="Name of the new scholar.")
@pass_app
def scholars_split(app: App, who: str, identities: tuple[str, ...], name: str) -> None:
    """Split identities off a scholar into a new one (two people known as one)."""
    from lightnews.link.attribution import attribute_scholar

    pairs = []
    for identity in identities:
        kind, sep, value = identity.partition(":")
        if not sep or not value:
            raise click.BadParameter(f"{identity!r} is not KIND:VALUE", param_hint="--identity")
        pairs.append((kind, value))
    with errors_as_exit():
        old_id = app.store.find_scholar(who)
        new_id = app.store.split_scholar(old_id, pairs, name, now_iso())
        attribute_scholar(app.store, old_id)
        attribute_scholar(app.store, new_id)
    out.print(f"split #{new_id} {name} off #{old_id}")


def _decide(app: App, who: str, arxiv_id: ArxivId, decision: str | None) -> None:
    from lightnews.link.attribution import attribute_scholar

    with errors_as_exit():
        actor = _actor(app)  # checked before anything changes
        scholar_id = app.store.find_scholar(who)
        app.store.get_paper(arxiv_id.base)
        now = now_iso()
        app.store.set_decision(scholar_id, arxiv_id.base, decision, now, by=actor)
        # A decision every reader sees: the audit log says who made it.
        app.store.audit(actor, f"attribution.{decision or 'undecide'}",
                        f"#{scholar_id} {arxiv_id.base}", now)  # fmt: skip
        attribute_scholar(app.store, scholar_id)
    word = {"confirm": "confirmed", "reject": "rejected", None: "left to the matcher"}[decision]
    out.print(f"{arxiv_id.base} {word} for #{scholar_id}")


def _decision_command(name: str, decision: str | None, summary: str) -> None:
    """One ``scholars`` subcommand recording the user's decision on an attribution."""

    @scholars.command(name, help=summary)
    @click.argument("who")
    @click.argument("arxiv_id", callback=checked(validate.paper_id))
    @pass_app
    def command(app: App, who: str, arxiv_id: ArxivId) -> None:
        _decide(app, who, arxiv_id, decision)


for _name, _decision, _summary in (
    (
        "confirm",
        "confirm",
        "Confirm that ARXIV_ID is by this scholar (kept across every re-ingest).",
    ),
    (
        "reject",
        "reject",
        "Reject a wrong attribution of ARXIV_ID to this scholar (kept across re-ingests).",
    ),
    ("undecide", None, "Forget a confirm or reject: the matcher decides again."),
):
    _decision_command(_name, _decision, _summary)


@cli.command()
@click.argument("who")
@click.option(
    "--page", default=1, show_default=True, type=click.IntRange(min=1),
    help="Page of the papers list.",
)
@click.option(
    "--per-page", default=20, show_default=True, type=click.IntRange(1, 500),
    help="Papers per page.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def scholar(app: App, who: str, page: int, per_page: int, as_json: bool) -> None:
    """A scholar's page: profile, posts (threads as one unit) and attributed papers.

    WHO is an id, a handle, an ORCID iD or (part of) a name: `scholar mara`,
    `scholar Lindqvist`. When several scholars match, they are listed (exit status 2).
    """
    from lightnews.serve.scholar import numbers_itself, scholar_page

    with errors_as_exit():
        data = scholar_page(app.store, who, page=page, per_page=per_page,
                            bar=app.settings.attribution_bar, reader=app.reader)  # fmt: skip
    if as_json:
        emit_json(data.to_json())
        return
    profile = data.profile
    out.print(
        f"[bold]{data.scholar.name}[/bold]"
        + (f"  @{profile.handle}" if profile and profile.handle else "")
    )
    if profile:
        out.print(
            f"{profile.followers or 0} followers · {profile.following or 0} "
            f"following · {profile.posts or 0} posts"
        )
        if profile.description:
            out.print(profile.description)
    for post in data.posts[:30]:
        if post.gap:
            where = f"{post.position}/{post.thread_size}"
            out.print(f"\n[dim]… post {where} of this thread is not fetched yet[/dim]")
            continue
        marks = []
        if post.pinned:
            marks.append("pinned")
        if post.reposted_by:
            by = post.reposted_by
            marks.append(f"reposted by {by.name or by.handle}, by {post.author} @{post.handle}")
        if post.thread_size > 1 and not numbers_itself(post.text):
            marks.append(f"thread {post.position}/{post.thread_size}")
        when = (post.created_at or "")[:16].replace("T", " ")
        out.print()
        out.print(escape(" · ".join([when, *marks])), style="dim", soft_wrap=True)
        out.print(escape(post.text))
        for link in post.links:
            out.print(f"  {link}")
    out.print(
        f"\n[bold]Publications and source records · at least {data.records_at_least} "
        f"records · page {data.page} of {data.pages}[/bold]"
    )
    for paper in data.papers:
        out.print(
            f"{paper.year or '----'}  {paper.title}  [dim]{paper.primary_category}"
            f"  {paper.url}[/dim]"
        )


@cli.command()
@click.option(
    "--since",
    "since_typed",
    default="1d",
    show_default=True,
    callback=checked(_moment_typed),
    help="Stories with activity since: 12h, 1d, 2w, today, yesterday or a date (2025-01-31).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html"]),
    default="md",
    show_default=True,
    help="Markdown or HTML.",
)
@click.option(
    "--limit", default=15, show_default=True, type=click.IntRange(min=1), help="How many stories."
)
@click.option(
    "--email",
    "email",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="ADDRESS",
    help="E-mail it (to ADDRESS, or the digest_to setting) through the SMTP settings.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be delivered (and to whom), sending and marking nothing.",
)
@pass_app
def digest(
    app: App, since_typed: str, fmt: str, limit: int, email: str | None, dry_run: bool
) -> None:
    """The top stories since a moment, each with why it is there; printed or e-mailed.

    Once the digest is delivered (printed, or accepted by the SMTP server), its
    stories count as read everywhere (feed, web, feeds out) until something
    material happens to them, and what happened to the papers you watch (its
    "Watched papers" section) is told once. A digest that could not be
    delivered marks nothing: the next run brings the same. --dry-run previews.
    """
    from lightnews.deliver.digest import (
        digest_events,
        digest_stories,
        digest_subject,
        mark_digested,
        render_html,
        render_markdown,
        send_digest,
    )

    with errors_as_exit():
        settings = app.reader_settings
        reader = app.reader
        now = settings.now()
        since = validate.moment(since_typed, now)
        to = None
        if email is not None:
            to = email or settings.digest_to
            if not to:
                raise UsageError("give --email ADDRESS or set digest_to")
            if not settings.smtp_host and not dry_run:
                raise UsageError("set smtp_host (and smtp_from) to send the digest by e-mail")
        stories = digest_stories(app.store, reader, settings, since, limit=limit, now=now)
        events = digest_events(app.store, reader, refresh=not dry_run)
        markdown = render_markdown(stories, since, events)
        html = render_html(stories, since, events)
        subject = digest_subject(stories, events)
        if dry_run:
            if to is not None:
                err.print(f"[dim]dry run: would send “{subject}” to {to}; nothing sent, "
                          "nothing marked read[/dim]")  # fmt: skip
            else:
                err.print("[dim]dry run: nothing marked read[/dim]")
            click.echo(markdown if fmt == "md" else html, nl=False)
            return
        if to is not None:
            send_digest(settings, to, subject, markdown, html)
        else:
            click.echo(markdown if fmt == "md" else html, nl=False)
            sys.stdout.flush()
        # Delivered: seen in the digest is seen, until something new happens; the watched
        # papers' events are told once.
        mark_digested(app.store, reader, stories, events, now.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if to is not None:
        told = f" and {len(events)} events on papers you watch" if events else ""
        out.print(f"sent {len(stories)} stories{told} to {to}")


@cli.command()
@click.option("--scholar", "scholar_who", metavar="WHO", help="A scholar whose posts say nothing.")
@click.option("--source", "source_id", type=int, metavar="ID", help="A source to silence.")
@click.option(
    "--keyword", metavar="WORD", callback=checked(_keyword),
    help="Hide stories whose title has this word.",
)
@click.option("--undo", is_flag=True, help="Unmute instead.")
@pass_app
def mute(app: App, scholar_who: str | None, source_id: int | None, keyword: str | None,
         undo: bool) -> None:  # fmt: skip
    """Mute (or --undo) a scholar, a source or a keyword in the feed and digests."""

    now = now_iso()
    with errors_as_exit():
        targets: list[tuple[str, str]] = []
        if scholar_who:
            targets.append(("scholar", str(app.store.find_scholar(scholar_who))))
        if source_id is not None:
            targets.append(("source", str(app.store.get_source(source_id).id)))
        if keyword:
            targets.append(("keyword", keyword))
        if not targets:
            raise UsageError("give --scholar, --source or --keyword")
        for kind, value in targets:
            app.store.set_mute(app.reader, kind, value, now, muted=not undo)
            out.print(f"{'unmuted' if undo else 'muted'} {kind} {value}")


@cli.command("read")
@click.argument("stories", nargs=-1, required=True, callback=checked(validate.story_key))
@click.option("--unread", is_flag=True, help="Mark unread instead.")
@click.option("--save", is_flag=True, help="Also save them (keep them in the export).")
@pass_app
def read_command(app: App, stories: tuple[str, ...], unread: bool, save: bool) -> None:
    """Mark stories read (an arXiv id or address, or item:ID): back only when something new happens.

    Exit status 1 (and nothing marked) when one of them is not stored.
    """
    now = now_iso()
    with errors_as_exit():
        for key in stories:  # all of them known before any is marked
            if key.startswith("item:"):
                app.store.get_item(int(key.removeprefix("item:")))
            else:
                app.store.get_paper(key)
        for key in dict.fromkeys(stories):
            app.store.mark_story(app.reader, key, now, read=not unread,
                                 saved=True if save else None)  # fmt: skip
            out.print(f"{key}: {'unread' if unread else 'read'}{', saved' if save else ''}")


@cli.command("more-like-this")
@click.argument("papers", nargs=-1, required=True, callback=checked(validate.story_key))
@click.option("--undo", is_flag=True, help="Take it back.")
@pass_app
def more_like_this(app: App, papers: tuple[str, ...], undo: bool) -> None:
    """Ask for more papers like these: your feed learns from it as from a save."""
    _paper_feedback(app, papers, None if undo else "more-like-this")


@cli.command("not-interested")
@click.argument("papers", nargs=-1, required=True, callback=checked(validate.story_key))
@click.option("--undo", is_flag=True, help="Take it back: the paper may come back.")
@pass_app
def not_interested(app: App, papers: tuple[str, ...], undo: bool) -> None:
    """Hide papers from your feed, and show fewer like them (yours alone)."""
    _paper_feedback(app, papers, None if undo else "not-interested")


def _paper_feedback(app: App, papers: tuple[str, ...], decision: str | None) -> None:
    """The reader's word on papers (all of them known before any is recorded)."""
    now = now_iso()
    with errors_as_exit():
        rows: dict[str, int] = {}
        for key in dict.fromkeys(papers):
            row = None if key.startswith("item:") else app.store.paper_row_id(key)
            if row is None:
                raise NotFound(f"{key} is not a stored paper (only papers take this)")
            rows[key] = row
        for key, row in rows.items():
            app.store.set_paper_feedback(app.reader, row, decision, now)
            out.print(f"{key}: {decision or 'no feedback'}")


@cli.command("export")
@click.option("--bibtex", "as_bibtex", is_flag=True, help="BibTeX of your saved stories instead.")
@pass_app
def export_command(app: App, as_bibtex: bool) -> None:
    """Print everything you own as JSON: follows, identities, decisions, sources, settings."""
    from lightnews.deliver.export import user_export

    with errors_as_exit():
        if as_bibtex:
            from lightnews.deliver.export import bibtex
            from lightnews.normalize.arxiv_ids import parse_arxiv_id

            saved = [k for k, (_, saved_at) in app.store.story_states(app.reader).items()
                     if saved_at and parse_arxiv_id(k)]  # fmt: skip
            click.echo(bibtex(app.store.get_paper(k) for k in sorted(saved)), nl=False)
            return
        emit_json(user_export(app.store, app.reader))


# -- settings ----------------------------------------------------------------------------


@cli.group(invoke_without_command=True)
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
        actor = _actor(app)  # checked before anything changes
        if setting.name in READER_SETTINGS:  # the reader's own (see store/readers.py)
            app.store.save_reader_setting(app.reader, setting.name, value)
        else:
            app.store.save_setting(setting.name, value)  # the instance's: audited
            app.store.audit(actor, "settings.set", f"{setting.name} = {value}", now_iso())
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
        actor = _actor(app)  # checked before anything changes
        if setting.name in READER_SETTINGS:
            app.store.save_reader_setting(app.reader, setting.name, None)
        else:
            app.store.save_setting(setting.name, None)
            app.store.audit(actor, "settings.unset", setting.name, now_iso())
    out.print(f"{setting.name} reset to its default ({setting.default!r})")


# -- accounts ----------------------------------------------------------------------------------


def _new_password(from_stdin: bool) -> str:
    """A password from one line of standard input, or typed twice at a hidden prompt."""
    from lightnews.store.secrets import check_password

    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True, err=True)
    return check_password(password)


def _actor(app: App) -> str:
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


@cli.group()
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
        actor = _actor(app)  # checked before anything changes
        check_user_name(name)
        password = _new_password(password_stdin)
        first = app.store.user_count() == 0
        user = app.store.add_user(name, hash_password(password), admin=admin, now=now_iso())
        app.store.audit(actor, "users.add", name + (" (admin)" if user.admin else ""),
                        now_iso())  # fmt: skip
    role = "admin" if user.admin else "reader"
    out.print(f"added {role} {user.name} (#{user.id})")
    if first:
        out.print("the first account: it has the local reader's follows, mutes and stories; "
                  "the web UI now asks to sign in")  # fmt: skip


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
        table.add_row(str(user.id), user.name, "admin" if user.admin else "reader",
                      user.created_at[:10], "yes" if user.shares else "no")  # fmt: skip
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
        actor = _actor(app)  # checked before anything changes
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
        actor = _actor(app)  # checked before anything changes
        user = _named_user(app, name)
        if not yes and not click.confirm(f"remove {name} and everything that is theirs?",
                                         err=True):  # fmt: skip
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


@cli.group()
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


# -- db ----------------------------------------------------------------------------------------


@cli.group("db")
def db_group() -> None:
    """Move a library between backends (SQLite files and PostgreSQL URLs)."""


@db_group.command("copy")
@click.argument("source")
@click.argument("destination")
@click.option("--json", "as_json", is_flag=True, help="Print the table-by-table check as JSON.")
def db_copy(source: str, destination: str, as_json: bool) -> None:
    """Copy the whole library SOURCE into the new, empty DESTINATION, then compare them.

    Each is an SQLite file or a postgresql:// URL, in either direction. Every
    table is compared at the end (rows and a checksum of every row); the exit
    code is 4 when anything differs.
    """
    from lightnews.store.copy import copy_library

    with errors_as_exit():
        report = copy_library(
            source, destination, lambda table, rows: err.print(f"  {table}: {rows:,}", end="\r")
        )
    if as_json:
        emit_json(report.to_json())
    else:
        for check in report.tables:
            mark = "[green]equal[/green]" if check.equal else "[red]DIFFERENT[/red]"
            out.print(f"{check.table:<22} {check.copied_rows:>10,} rows  {mark}")
        out.print(f"copied {report.source} → {report.destination}")
    if not report.equal:
        sys.exit(EXIT_FAILED)


# -- workers ---------------------------------------------------------------------------------


@cli.command("mcp")
@pass_app
def mcp_command(app: App) -> None:
    """Serve the library to an assistant over MCP (stdio): search, story, scholar, feed, resolve.

    An MCP client (a desktop assistant, an editor) starts this command and talks
    to it on standard input and output; the resource lightnews://feed/unseen is
    the ranked feed without what you have read. It only reads the library.
    """
    try:
        from lightnews.mcp.server import build_server, serve_stdio
    except ImportError:  # pragma: no cover - the dependency is declared
        raise click.UsageError("the MCP server needs the mcp package: pip install mcp") from None
    with errors_as_exit():
        server = build_server(app.store, app.reader_settings, app.reader)
    serve_stdio(server)


@cli.command()
@click.option(
    "--concurrency", default=1, show_default=True, type=click.IntRange(1, 64),
    help="Jobs this worker runs at once (each in a thread of its own).",
)
@click.option(
    "--status", is_flag=True,
    help="Say what the workers do instead (live workers, jobs waiting and running, the last "
    "fetch, sources due) and exit.",
)  # fmt: skip
@pass_app
def worker(app: App, concurrency: int, status: bool) -> None:
    """Run jobs from a PostgreSQL library's queue: refresh due sources, embed, resolve stubs.

    Start as many workers as you like, on any machines that reach the database:
    each source is fetched by one worker at a time, each host's interval (arXiv's
    3 s) holds for all of them together, and the jobs of a worker that dies are
    run again by another. Every `worker_tick` seconds one of them queues what is
    due; each job queued and each job's end is said on a line. Ctrl-C or SIGTERM
    stops it once its running jobs are done. A database lost for longer than
    `worker_reconnect_seconds` stops it with an error (exit status 4), for its
    supervisor to start it again.

    Only for a postgresql:// library: with an SQLite file, `lightnews refresh`
    does the same work in-process (run it from cron).
    """
    if not isinstance(app.db_path, str):
        raise click.UsageError(
            f"workers need a PostgreSQL library (--db postgresql://USER@HOST/DB); "
            f"{app.db_path} is an SQLite file, which `lightnews refresh` refreshes "
            "in-process (from cron, say)"
        )
    if status:
        from lightnews.worker.queue import queue_status

        with errors_as_exit():
            state = queue_status(app.db_path, float(app.settings.worker_heartbeat))
        for line in state.lines():
            out.print(escape(line))
        return
    app.in_background()
    from lightnews.worker.jobs import DEFER_TASK, JobOutcome
    from lightnews.worker.queue import run_worker

    def echo(outcome: JobOutcome) -> None:
        if outcome.task == DEFER_TASK:  # a job queued ("queued #3 ..."): its end comes later
            out.print(escape(outcome.summary))
            return
        mark = "[green]ok[/green]  " if outcome.ok else "[red]fail[/red]"
        out.print(f"{mark} {escape(outcome.summary)}")

    with errors_as_exit():
        run_worker(app.db_path, concurrency=concurrency, echo=echo,
                   on_start=lambda line: err.print(escape(line)))  # fmt: skip


# -- demo ------------------------------------------------------------------------------------


def _shown(location: str | Path) -> str:
    """Where the library is, as it can be shown (a server URL without its password)."""
    from lightnews.store.postgres import redact

    return redact(str(location))


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name to listen on) is this machine only."""
    import ipaddress

    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for the ``trusted_proxies`` setting: X-Forwarded-For and -Proto
    believed from those addresses only (the client's own address otherwise)."""
    return {"proxy_headers": True, "forwarded_allow_ips": list(settings.trusted_proxies)}


def _serve(
    db_path: str | Path,
    host: str,
    port: int,
    settings: Settings,
    workers: int = 1,
    *,
    public_read_only: bool = False,
    accounts: int = 0,
) -> None:
    import uvicorn

    from lightnews.serve.app import create_app

    loopback = _is_loopback(host)
    if not loopback and not accounts and not public_read_only:
        raise UsageError(
            f"refusing to serve on {host}: this library has no accounts, so anyone who reaches "
            "the port would own it. Add one (`lightnews users add NAME --admin`), or serve "
            "pages and feeds only with --public-read-only, or listen on 127.0.0.1"
        )

    hosts = tuple(settings.allowed_hosts)
    if host not in ("0.0.0.0", "::") and host.lower().strip("[]") not in hosts and "*" not in hosts:
        hosts += (host.lower().strip("[]"),)  # the address it listens on names it too
    elif host in ("0.0.0.0", "::") and "*" not in hosts:
        err.print(
            f"note: pages answer only to the host names {', '.join(hosts)}; set "
            f"{env_name('allowed_hosts')} to the names readers use (or * for any)"
        )
    settings = settings.with_overrides(allowed_hosts=hosts)
    out.print(
        f"serving {_shown(db_path)} on http://{host}:{port}/"
        + (f" with {workers} processes" if workers > 1 else "")
        + " (Ctrl-C to stop)"
    )
    if public_read_only:
        out.print("read-only: pages and feeds are served, every form is off")
    if workers == 1:
        app = create_app(db_path, settings, public_read_only=public_read_only,
                         open_without_accounts=loopback)  # fmt: skip
        uvicorn.run(app, host=host, port=port, log_level="warning", **proxy_options(settings))
        return
    # Each process builds its own application from the environment; the form key
    # is made once here, so that a form from one process is accepted by the others.
    from lightnews.serve.app import site_secret
    from lightnews.store import open_store

    with open_store(db_path) as store:
        site_secret(store, settings)
    os.environ["LIGHTNEWS_DB"] = str(db_path)
    os.environ[env_name("allowed_hosts")] = ",".join(hosts)
    os.environ["LIGHTNEWS_SERVE_READ_ONLY"] = "1" if public_read_only else ""
    os.environ["LIGHTNEWS_SERVE_LOOPBACK"] = "1" if loopback else ""
    uvicorn.run(
        "lightnews.serve.app:app_from_environment", factory=True, workers=workers, host=host,
        port=port, log_level="warning", **proxy_options(settings),
    )  # fmt: skip


@cli.command()
@click.option(
    "--port", default=8080, show_default=True, type=click.IntRange(1, 65535),
    help="Port to listen on.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(1, 64),
    help="Web processes to run (each with its own connections; SQLite libraries are read by "
    "all of them while one process writes).",
)  # fmt: skip
@click.option(
    "--public-read-only", is_flag=True,
    help="Serve pages and feeds only: every form off, every change refused (lets a library "
    "without accounts listen beyond loopback).",
)  # fmt: skip
@pass_app
def serve(app: App, port: int, host: str, workers: int, public_read_only: bool) -> None:
    """Serve the web UI and its JSON API (/api, /api/openapi.json) on the database.

    With accounts, readers sign in and each sees their own feed; without any,
    the one local reader needs no sign-in, and only loopback addresses are
    served (a library without accounts on --host 0.0.0.0 is refused, unless
    --public-read-only).
    """
    with errors_as_exit():
        app.store.migrate()
        _serve(app.db_path, host, port, app.settings, workers,
               public_read_only=public_read_only, accounts=app.store.user_count())  # fmt: skip


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print what was loaded as JSON.")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=None,
    help="Then serve the web UI on this port.",
)
@pass_app
def demo(app: App, as_json: bool, port: int | None) -> None:
    """Build a database from the bundled offline snapshot and show its feed.

    Uses --db when given, else demo.db beside the default database. The
    snapshot is a set of saved responses in the services' real formats, read by
    the real parsers: no network needed.
    """
    from lightnews.rank import rank_stories

    if app._store is None and app.db_path == default_db_path():
        app.db_path = default_db_path().with_name("demo.db")
    with errors_as_exit():
        reports = _build_demo_with_progress(app, quiet=as_json)
        stories = rank_stories(
            app.store, app.reader, limit=10, bar=app.settings.attribution_bar,
            settings=app.settings,
        )  # fmt: skip
        counts = app.store.counts()
    if as_json:
        emit_json(
            {
                "db": _shown(app.db_path),
                "counts": counts,
                "files": [r.to_json() for r in reports],
                "feed": [s.to_json() for s in stories],
            }
        )
        return
    out.print(f"[bold]Lightnews demo[/bold] · database {_shown(app.db_path)}")
    for report in reports:
        status = "[green]ok[/green]" if report.ok else f"[red]{report.error}[/red]"
        out.print(f"  {report.kind:<10} {Path(report.address).name:<26} {status}")
    out.print(
        f"{counts['papers'] - counts['stubs']} papers, {counts['items']} items, "
        f"{counts['mentions']} mentions, {counts['sources']} sources\n"
    )
    for story in stories:
        out.print(f"[bold]{story.title}[/bold]")
        out.print(
            f"  {story.arxiv_id or (story.items[0].kind if story.items else 'item')} · "
            f"{(story.time or '')[:10]} · "
            f"{' · '.join(dict.fromkeys(story.why))}"
        )
    db = _shown(app.db_path)
    out.print("\n[bold]Where to look next[/bold] (the same library each time):")
    out.print(f"  lightnews --db {db} serve --port 8080    # the web UI: http://127.0.0.1:8080/")
    out.print(f"  lightnews --db {db} feed                 # this feed, with why")
    out.print(f"  lightnews --db {db} search attention     # words and meaning")
    out.print(f"  lightnews --db {db} show 2511.18342      # one story and its conversation")
    out.print(f"  (or `export LIGHTNEWS_DB={db}` and leave out --db)")
    if port is not None:
        out.print(f"\nServing it now: http://127.0.0.1:{port}/ (Ctrl-C stops)")
        _serve(app.db_path, "127.0.0.1", port, app.settings)


def _build_demo_with_progress(app: App, quiet: bool) -> list[Any]:
    """Build the demo, saying on stderr what it is doing (third-party progress bars silenced)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from lightnews.demo import SNAPSHOT_FILES, build_demo

    for name in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(name, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if quiet:
        return build_demo(app.store, app.settings)
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task("Building the demo library", total=len(SNAPSHOT_FILES) + 1)

        def step(words: str) -> None:
            progress.update(task, description=words)
            if not words.startswith("Preparing"):
                progress.advance(task)

        reports = build_demo(app.store, app.settings, progress=step)
        progress.update(task, description="Demo library ready", completed=len(SNAPSHOT_FILES) + 1)
    return reports


# The whole conversation's commands (listen, discussed, watch, push) register themselves.
import lightnews.cli_listen  # noqa: E402, F401


def main() -> None:
    cli(prog_name="lightnews")


if __name__ == "__main__":  # pragma: no cover
    main()
