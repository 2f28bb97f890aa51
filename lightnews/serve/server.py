"""Running the web application under uvicorn: who may reach it, under which names, how many
processes (``lightnews serve`` and ``lightnews demo --port``).

:func:`plan_serving` decides, before anything listens, whether a library may be
served on an address (one without accounts only on loopback, unless read-only)
and which host names the pages answer to; :func:`run_server` runs it, in one
process or several sharing one form key.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lightnews.errors import UsageError
from lightnews.settings import Settings, env_name

__all__ = ["Serving", "is_loopback", "plan_serving", "proxy_options", "run_server"]

_ANY_ADDRESS = ("0.0.0.0", "::")


@dataclass(frozen=True)
class Serving:
    """How a library is to be served: its settings (``allowed_hosts`` naming the address it
    listens on), whether only this machine reaches it, and a note for the one who starts it."""

    settings: Settings
    loopback: bool
    note: str = ""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name to listen on) is this machine only."""
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


def plan_serving(
    host: str, settings: Settings, *, accounts: int, public_read_only: bool = False
) -> Serving:
    """Whether a library with ``accounts`` accounts may be served on ``host``, and how.

    A library without accounts listens beyond loopback only read-only: anyone
    who reached the port would own it. The address it listens on is one of the
    names its pages answer to; listening on every address, they answer only to
    the ``allowed_hosts`` setting's names (the note says so).
    """
    loopback = is_loopback(host)
    if not loopback and not accounts and not public_read_only:
        raise UsageError(
            f"refusing to serve on {host}: this library has no accounts, so anyone who reaches "
            "the port would own it. Add one (`lightnews users add NAME --admin`), or serve "
            "pages and feeds only with --public-read-only, or listen on 127.0.0.1"
        )
    hosts = tuple(settings.allowed_hosts)
    note = ""
    if host not in _ANY_ADDRESS and host.lower().strip("[]") not in hosts and "*" not in hosts:
        hosts += (host.lower().strip("[]"),)  # the address it listens on names it too
    elif host in _ANY_ADDRESS and "*" not in hosts:
        note = (
            f"note: pages answer only to the host names {', '.join(hosts)}; set "
            f"{env_name('allowed_hosts')} to the names readers use (or * for any)"
        )
    return Serving(settings.with_overrides(allowed_hosts=hosts), loopback, note)


def run_server(
    db_path: str | Path,
    host: str,
    port: int,
    serving: Serving,
    workers: int = 1,
    *,
    public_read_only: bool = False,
) -> None:
    """Serve the library on ``host:port`` until stopped, in ``workers`` processes."""
    import uvicorn

    from lightnews.serve.app import create_app

    settings = serving.settings
    if workers == 1:
        app = create_app(
            db_path,
            settings,
            public_read_only=public_read_only,
            open_without_accounts=serving.loopback,
        )
        uvicorn.run(app, host=host, port=port, log_level="warning", **proxy_options(settings))
        return
    # Each process builds its own application from the environment; the form key
    # is made once here, so that a form from one process is accepted by the others.
    from lightnews.serve.app import site_secret
    from lightnews.store import open_store

    with open_store(db_path) as store:
        site_secret(store, settings)
    os.environ["LIGHTNEWS_DB"] = str(db_path)
    os.environ[env_name("allowed_hosts")] = ",".join(settings.allowed_hosts)
    os.environ["LIGHTNEWS_SERVE_READ_ONLY"] = "1" if public_read_only else ""
    os.environ["LIGHTNEWS_SERVE_LOOPBACK"] = "1" if serving.loopback else ""
    uvicorn.run(
        "lightnews.serve.app:app_from_environment",
        factory=True,
        workers=workers,
        host=host,
        port=port,
        log_level="warning",
        **proxy_options(settings),
    )
