"""The admin page (admins only): the workers' health, accounts (added or removed here
too) and the audit log.

The audit log records every admin action on sources and accounts, and who
did it. :func:`admin_only` says who may manage what every reader shares. On
PostgreSQL the page says what the queue workers are doing (the lines of
``lightnews worker --status``), so a worker that stopped is seen where the
admin looks, not only on the machine that runs it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.errors import LightnewsError, UsageError
from lightnews.normalize.times import now_iso
from lightnews.serve.security import Visitor, visitor_of
from lightnews.serve.site import Site, read_form
from lightnews.store.postgres import PostgresStore
from lightnews.store.secrets import check_user_name, hash_password
from lightnews.worker.queue import read_status

__all__ = ["admin", "admin_only", "admin_users", "workers"]


def admin(site: Site, request: Request) -> Response:
    visitor = visitor_of(request)
    if not visitor.admin:
        return site.refused("Only admins manage accounts and see the audit log.")
    return _page(site, error="")


def _page(site: Site, *, error: str, status: int = 200) -> Response:
    store = site.store
    return site.page(
        "admin.html",
        status=status,
        title="Admin",
        users=store.list_users(),
        log=store.audit_log(),
        workers=workers(site),
        error=error,
    )


def workers(site: Site) -> list[str] | None:
    """The queue's health as lines, or None on an embedded (SQLite) library, which has no
    workers: its refresh runs from ``lightnews refresh`` or cron."""
    store = site.store
    if not isinstance(store, PostgresStore):
        return None
    present = store.db.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL").fetchone()
    if not present or not present[0]:
        return ["no queue in this library: install the server extra to run workers"]
    status = read_status(store, float(site.current_settings().worker_heartbeat))
    lines = status.lines()
    if status.workers == 0:
        lines.insert(
            0, "no worker is running: nothing is refreshed until one starts (lightnews worker)"
        )
    return lines


def admin_users(site: Site, request: Request) -> Response:
    """Add an account, or remove one (not your own: that is the command line's)."""
    visitor = visitor_of(request)
    if not visitor.admin or visitor.user is None:
        return site.refused("Only admins manage accounts.")
    store = site.store
    form = read_form(request)
    now = now_iso()
    try:
        if form.get("remove"):
            target = store.get_user(str(form.get("remove")))
            if target.id == visitor.user.id:
                raise UsageError("remove your own account from the command line")
            store.remove_user(target.id)
            store.audit(visitor.user.name, "users.remove", target.name, now)
        else:
            name = check_user_name(str(form.get("name") or "").strip())
            made = store.add_user(
                name,
                hash_password(str(form.get("password") or "")),
                admin=bool(form.get("admin")),
                now=now,
            )
            store.audit(
                visitor.user.name, "users.add", name + (" (admin)" if made.admin else ""), now
            )
    except LightnewsError as error:
        return _page(site, status=400, error=str(error))
    return RedirectResponse("/admin", status_code=303)


def admin_only(visitor: Visitor) -> str | None:
    """Why ``visitor`` may not manage sources, or None when they may."""
    if visitor.admin:
        return None
    if visitor.read_only:
        return "This instance is read-only."
    return "Only admins manage sources: ask one of them."
