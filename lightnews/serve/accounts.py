"""The pages of accounts: sign in and out, your account, the group, the admin page, secret feeds.

Routes are made here (:func:`account_routes`) and mounted by ``web.create_app``
so that the feed, paper and scholar pages stay about reading. Who is asking
comes from :func:`~lightnews.serve.security.visitor_of` (the guard checked the
session, its form token, or an API token before a handler runs); this module
decides what that reader may do:

- **Sign-in** checks the password against its Argon2 hash. Each try is
  counted in the library (``sign_in_failures``) *before* the password is
  checked, in one write transaction, so concurrent guesses cannot slip past
  the limit, and the limit holds across every web process. It is per account
  and address (someone else's guesses do not lock a member out), per address,
  and, higher, per account from every address; past it, sign-in answers 429
  until the window has passed. A success makes a new server-side session and
  a new form cookie (tokens from before sign-in stop working).
- **Sign out** deletes this session on the server (a copied cookie stops
  working too); **sign out everywhere** deletes every session of the account.
- **Secret feed URLs** (``/feeds/KEY/feed.atom``, ``feed.json``, ``saved.bib``)
  open one reader's feed without a session; the key is kept only as a digest,
  so it is shown once, when made; making a new one retires the old (404).
- **The group** shows stories saved by two or more members who share, with who,
  exportable as a journal-club agenda (Markdown or BibTeX).
- **Admin** (admins only): accounts, added or removed here too, and the audit
  log of admin actions (sources and accounts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from lightnews.accounts import (
    check_password,
    check_user_name,
    digest,
    hash_password,
    needs_rehash,
    new_feed_key,
    new_token,
    verify_password,
)
from lightnews.errors import LightnewsError, NotFound, UsageError
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.times import now_iso
from lightnews.normalize.validate import whole_number
from lightnews.rank import CandidateWindows, rank_stories
from lightnews.deliver.export import FeedEntry, atom_feed, bibtex, json_feed
from lightnews.serve.security import (
    Visitor,
    new_session_secret,
    safe_href,
    session_cookies,
    signed_out_cookies,
    visitor_of,
)
from lightnews.settings import Settings
from lightnews.store import ReaderId, Store
from lightnews.store.readers import GroupSave, SignInLimits, UserView
from lightnews.store.views import PaperPage

__all__ = ["FAILURE_WINDOW", "FEED_FILES", "StoreGate", "account_routes", "admin_only"]

#: Failed sign-ins are counted over this window.
FAILURE_WINDOW = timedelta(minutes=15)
#: Times as many failures allowed from one address as for one account from one address.
PER_ADDRESS = 4
#: Times as many failures allowed for one account from every address together: guesses
#: spread over many addresses stop there, while one address's guesses never lock the
#: member out from their own.
PER_ACCOUNT = 20

Page = Callable[..., Response]


class StoreGate:
    """The guard's questions answered from the library (see ``security.Gate``)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def has_accounts(self) -> bool:
        return self.store.user_count() > 0

    def session_user(self, user_id: int, epoch: int, session: str) -> UserView | None:
        return self.store.session_user(user_id, epoch, digest(session), now_iso())

    def token_user(self, token: str) -> UserView | None:
        if not token or len(token) > 200:
            return None
        return self.store.token_user(digest(token), now_iso())


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _safe_next(target: str) -> str:
    """Where to go after signing in: a path on this site, else the feed."""
    if safe_href(target) is None or not target.startswith("/") or target.startswith("//"):
        return "/"  # control characters (a tab browsers drop: "/\t/x") and "\\" refused too
    return target


def account_routes(
    store: Store,
    page: Page,
    current_settings: Callable[[], Settings],
    reader_settings: Callable[[ReaderId], Settings],
    secret: Callable[[], str],
    read_form: Callable[[Request], Any],
    windows: CandidateWindows | None = None,
) -> list[Route]:
    """The account pages over ``store``, rendered with ``page`` (a template and its context);
    ``windows`` holds the feed's candidates between requests, shared with the home page."""

    def secure(request: Request) -> bool:
        return request.url.scheme == "https"

    def denied(message: str, status: int = 403) -> Response:
        return page("error.html", status=status, title="Not allowed", message=message)

    def signin_form(request: Request) -> Response:
        visitor = visitor_of(request)
        if visitor.user is not None:
            return RedirectResponse(_safe_next(request.query_params.get("next", "/")), 303)
        if not store.user_count():
            return RedirectResponse("/", 303)  # no accounts: nobody signs in
        expired = request.query_params.get("expired") == "1"
        return page("signin.html", title="Sign in", next=request.query_params.get("next", "/"),
                    message="Your session has ended: sign in again." if expired else "",
                    typed_name="")  # fmt: skip

    def signin(request: Request) -> Response:
        form = read_form(request)
        name = str(form.get("name") or "").strip()[:64]
        password = str(form.get("password") or "")
        target = _safe_next(str(form.get("next") or "/"))
        address = request.client.host if request.client else "unknown"
        claim = claim_try(name, address)
        if claim is None:
            response = page("signin.html", status=429, title="Sign in", next=target,
                            typed_name=name,
                            message="Too many failed sign-ins: wait 15 minutes and try again.")
            response.headers["Retry-After"] = str(int(FAILURE_WINDOW.total_seconds()))
            return response  # fmt: skip
        found = store.password_hash(name) if name else None
        if found is None or not verify_password(found[1], password):
            return page("signin.html", status=401, title="Sign in", next=target,
                        typed_name=name,
                        message="That name and password do not match an account.")  # fmt: skip
        user, stored = found
        if needs_rehash(stored):
            store.set_password(user.id, hash_password(password))
            user = store.get_user(user.name)
        store.forgive_sign_in(claim, name, address)
        response = RedirectResponse(target, status_code=303)
        for cookie in open_session(request, user):
            response.headers.append("set-cookie", cookie)
        return response

    def claim_try(name: str, address: str) -> int | None:
        """One password try for ``name`` from ``address``, counted first; None past a limit."""
        now = datetime.now(UTC)
        limit = int(current_settings().sign_in_attempts)
        limits = SignInLimits(limit, limit * PER_ADDRESS, limit * PER_ACCOUNT)
        return store.claim_sign_in(name, address, _stamp(now), _stamp(now - FAILURE_WINDOW),
                                   limits)  # fmt: skip

    def open_session(request: Request, user: UserView) -> list[str]:
        """A new server-side session for ``user``: the cookies that carry it."""
        hours = float(current_settings().session_hours)
        now = datetime.now(UTC)
        session = new_session_secret()
        store.create_session(user.id, digest(session), _stamp(now),
                             _stamp(now + timedelta(hours=hours)))  # fmt: skip
        return session_cookies(secret(), user, session, secure=secure(request),
                               max_age=int(hours * 3600))  # fmt: skip

    def signout(request: Request) -> Response:
        visitor = visitor_of(request)
        form = read_form(request)
        if visitor.user is not None and form.get("everywhere"):
            store.end_sessions(visitor.user.id)
        elif visitor.user is not None and visitor.session:
            store.end_session(digest(visitor.session))
        response = RedirectResponse("/signin" if store.user_count() else "/", status_code=303)
        for cookie in signed_out_cookies(secure=secure(request)):
            response.headers.append("set-cookie", cookie)
        return response

    def account_page(user: UserView, status: int = 200, **shown: Any) -> Response:
        context: dict[str, Any] = {"new_feed": None, "new_token": None, "message": "",
                                   "changed": "", "token_name": ""}  # fmt: skip
        context.update(shown)
        return page("account.html", status=status, title="Your account", user=user,
                    tokens=store.list_tokens(user.id), **context)  # fmt: skip

    def account(request: Request) -> Response:
        visitor = visitor_of(request)
        user = visitor.user
        if user is None:
            return denied("Accounts are not in use on this instance: there is one local reader.")
        return account_page(user, changed=request.query_params.get("changed", "")[:20])

    def change_password(request: Request, user: UserView, form: Any) -> Response:
        """The reader's own password: the current one first (counted as a sign-in try)."""
        address = request.client.host if request.client else "unknown"
        claim = claim_try(user.name, address)
        if claim is None:
            return account_page(user, 429, message="Too many wrong passwords: wait 15 minutes.")
        found = store.password_hash(user.name)
        if found is None or not verify_password(found[1], str(form.get("current") or "")):
            return account_page(user, 400, message="Your current password is not that.")
        store.forgive_sign_in(claim, user.name, address)
        new = str(form.get("new") or "")
        if new != str(form.get("again") or ""):
            return account_page(user, 400, message="The new password and its repeat differ.")
        try:
            check_password(new)
        except UsageError as error:
            return account_page(user, 400, message=f"Not changed: {error}.")
        store.set_password(user.id, hash_password(new))  # every session of it ends...
        store.audit(user.name, "users.passwd", user.name, now_iso())
        response = RedirectResponse("/account?changed=password", status_code=303)
        for cookie in open_session(request, store.get_user(user.name)):  # ...but a new one here
            response.headers.append("set-cookie", cookie)
        return response

    def change_tokens(user: UserView, action: str, form: Any) -> Response:
        """API tokens made (shown once) and revoked on the web, as `lightnews tokens` does."""
        if action == "token-revoke":
            try:
                store.revoke_token(user.id, whole_number(str(form.get("token") or ""), "token"),
                                   now_iso())  # fmt: skip
            except (NotFound, UsageError) as error:
                return account_page(user, 400, message=f"Not revoked: {error}.")
            return RedirectResponse("/account?changed=token", status_code=303)
        label = str(form.get("name") or "").strip()
        if not label or len(label) > 64 or any(c < " " for c in label):
            return account_page(user, 400, token_name=label[:64],
                                message="Name the token (where it is used: 1-64 characters).")
        token = new_token()
        store.create_token(user.id, label, digest(token), now_iso())
        return account_page(user, new_token=token)

    def account_change(request: Request) -> Response:
        visitor = visitor_of(request)
        user = visitor.user
        if user is None:
            return denied("Accounts are not in use on this instance: there is one local reader.")
        form = read_form(request)
        action = str(form.get("action") or "")
        if action == "feed-key":
            key = new_feed_key()
            store.set_feed_key(user.reader, digest(key), now_iso())
            base = str(request.base_url).rstrip("/")
            urls = {name: f"{base}/feeds/{key}/{name}" for name in FEED_FILES}
            return account_page(user, new_feed=urls)
        if action in ("share", "private"):
            store.set_sharing(user.reader, action == "share")
            return RedirectResponse("/account", status_code=303)
        if action == "password":
            return change_password(request, user, form)
        if action in ("token-create", "token-revoke"):
            return change_tokens(user, action, form)
        return page("error.html", status=400, title="Cannot do that",
                    message="nothing to do: make a feed URL, share or stop sharing, change "
                    "the password, or make or revoke a token")  # fmt: skip

    def feeds(request: Request) -> Response:
        """A reader's feed or saved papers by its secret key (no sign-in: feed readers)."""
        key = request.path_params["key"]
        name = request.path_params["name"]
        reader = store.feed_key_reader(digest(key)) if 10 <= len(key) <= 100 else None
        if reader is None or name not in FEED_FILES:
            return PlainTextResponse("There is no feed at this address.\n", status_code=404)
        if name == "saved.bib":
            saved = sorted(k for k, (_, at) in store.story_states(reader).items()
                           if at and parse_arxiv_id(k))  # fmt: skip
            papers = []
            for arxiv_id in saved:
                try:
                    papers.append(store.get_paper(arxiv_id))
                except NotFound:
                    continue
            return Response(bibtex(papers), media_type="application/x-bibtex")
        s = reader_settings(reader)
        stories = rank_stories(store, reader, limit=50, half_life_hours=s.half_life_hours,
                               bar=s.attribution_bar, settings=s, windows=windows,
                               papers_only=request.query_params.get("view") == "papers")
        base = str(request.base_url).rstrip("/")  # fmt: skip
        entries = [FeedEntry(f"{base}/paper/{st.arxiv_id}" if st.arxiv_id else st.key,
                             st.title, st.url, st.time, " · ".join(st.why)) for st in stories]
        self_url = f"{base}/feeds/{key}/{name}"  # fmt: skip
        if name == "feed.atom":
            return Response(atom_feed("Lightnews: your feed", self_url, entries),
                            media_type="application/atom+xml")  # fmt: skip
        return JSONResponse(json_feed("Lightnews: your feed", self_url, entries),
                            media_type="application/feed+json")  # fmt: skip

    def group(request: Request) -> Response:
        visitor = visitor_of(request)
        saves = store.group_saves()
        papers: dict[str, PaperPage] = {}
        for entry in saves:
            if parse_arxiv_id(entry.story_key):
                try:
                    papers[entry.story_key] = store.get_paper(entry.story_key)
                except NotFound:
                    continue
        kind = request.query_params.get("format")
        if kind == "bibtex":
            return Response(bibtex(papers.values()), media_type="application/x-bibtex")
        if kind == "md":
            return PlainTextResponse(_agenda(saves, papers), media_type="text/markdown")
        if request.url.path.startswith("/api/"):
            return JSONResponse([{"story": g.story_key, "members": list(g.members),
                                  "first_saved": g.first_saved,
                                  "title": papers[g.story_key].title
                                  if g.story_key in papers else None} for g in saves])
        return page("group.html", title="The group", saves=saves, papers=papers,
                    shares=visitor.user.shares if visitor.user else None)  # fmt: skip

    def admin(request: Request) -> Response:
        visitor = visitor_of(request)
        if not visitor.admin:
            return denied("Only admins manage accounts and see the audit log.")
        return page("admin.html", title="Admin", users=store.list_users(),
                    log=store.audit_log(), error="")  # fmt: skip

    def admin_users(request: Request) -> Response:
        visitor = visitor_of(request)
        if not visitor.admin or visitor.user is None:
            return denied("Only admins manage accounts.")
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
            return page("admin.html", status=400, title="Admin", users=store.list_users(),
                        log=store.audit_log(), error=str(error))  # fmt: skip
        return RedirectResponse("/admin", status_code=303)

    return [
        Route("/signin", signin_form), Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/account", account), Route("/account", account_change, methods=["POST"]),
        Route("/feeds/{key}/{name}", feeds),
        Route("/group", group), Route("/api/group", group),
        Route("/admin", admin), Route("/admin/users", admin_users, methods=["POST"]),
    ]  # fmt: skip


#: What a secret feed key opens.
FEED_FILES = ("feed.atom", "feed.json", "saved.bib")


def _agenda(saves: Sequence[GroupSave], papers: dict[str, PaperPage]) -> str:
    """The group's picks as a journal-club agenda in Markdown."""
    lines = ["# Journal club agenda", ""]
    if not saves:
        lines.append("No story is saved by two or more members yet.")
    for n, entry in enumerate(saves, start=1):
        paper = papers.get(entry.story_key)
        title = (paper.title if paper else None) or entry.story_key
        url = f"https://arxiv.org/abs/{entry.story_key}" if paper else ""
        lines.append(f"{n}. **[{title}]({url})**" if url else f"{n}. **{title}**")
        lines.append(f"   saved by {', '.join(entry.members)}")
    return "\n".join(lines) + "\n"


def admin_only(visitor: Visitor) -> str | None:
    """Why ``visitor`` may not manage sources, or None when they may."""
    if visitor.admin:
        return None
    if visitor.read_only:
        return "This instance is read-only."
    return "Only admins manage sources: ask one of them."
