"""Serving the library: ``serve`` (the web UI and its JSON API) and ``mcp`` (to an
assistant, over stdio)."""

from __future__ import annotations

import click

from lightnews.cli.common import App, err, errors_as_exit, out, pass_app, shown

__all__ = ["mcp_command", "serve", "serve_library"]


def serve_library(
    app: App,
    host: str,
    port: int,
    workers: int = 1,
    *,
    public_read_only: bool = False,
    accounts: int = 0,
) -> None:
    """Serve ``app``'s library until stopped, saying where (the web's own rules:
    :mod:`lightnews.serve.server`)."""
    from lightnews.serve.server import plan_serving, run_server

    serving = plan_serving(host, app.settings, accounts=accounts, public_read_only=public_read_only)
    if serving.note:
        err.print(serving.note)
    out.print(
        f"serving {shown(app.db_path)} on http://{host}:{port}/"
        + (f" with {workers} processes" if workers > 1 else "")
        + " (Ctrl-C to stop)"
    )
    if public_read_only:
        out.print("read-only: pages and feeds are served, every form is off")
    run_server(app.db_path, host, port, serving, workers, public_read_only=public_read_only)


@click.command("mcp")
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


@click.command()
@click.option(
    "--port",
    default=8080,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="Port to listen on.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Web processes to run (each with its own connections; SQLite libraries are read by "
    "all of them while one process writes).",
)
@click.option(
    "--public-read-only",
    is_flag=True,
    help="Serve pages and feeds only: every form off, every change refused (lets a library "
    "without accounts listen beyond loopback).",
)
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
        serve_library(
            app,
            host,
            port,
            workers,
            public_read_only=public_read_only,
            accounts=app.store.user_count(),
        )
