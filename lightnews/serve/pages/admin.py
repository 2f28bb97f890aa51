"""The admin page (admins only): accounts, added or removed here too, and the audit log.

The audit log records every admin action on sources and accounts, and who
did it. :func:`admin_only` says who may manage what every reader shares.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lightnews.errors import LightnewsError, UsageError
from lightnews.normalize.times import now_iso
from lightnews.serve.security import Visitor, visitor_of
from lightnews.serve.site import Site, read_form
from lightnews.store.secrets import check_user_name, hash_password

__all__ = ["admin", "admin_only", "admin_users"]


def admin(site: Site, request: Request) -> Response:
    visitor = visitor_of(request)
    if not visitor.admin:
        return site.refused("Only admins manage accounts and see the audit log.")
    return site.page("admin.html", title="Admin", users=site.store.list_users(),
                     log=site.store.audit_log(), error="")  # fmt: skip


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
            made = store.add_user(name, hash_password(str(form.get("password") or "")),
                                  admin=bool(form.get("admin")), now=now)  # fmt: skip
            store.audit(visitor.user.name, "users.add",
                        name + (" (admin)" if made.admin else ""), now)  # fmt: skip
    except LightnewsError as error:
        return site.page("admin.html", status=400, title="Admin", users=store.list_users(),
                         log=store.audit_log(), error=str(error))  # fmt: skip
    return RedirectResponse("/admin", status_code=303)


def admin_only(visitor: Visitor) -> str | None:
    """Why ``visitor`` may not manage sources, or None when they may."""
    if visitor.admin:
        return None
    if visitor.read_only:
        return "This instance is read-only."
    return "Only admins manage sources: ask one of them."
