"""The pages of accounts: sign in and out, your account (password, tokens), secret feeds.

Who is asking comes from :func:`~lightnews.serve.security.visitor_of` (the
guard checked the session, its form token, or an API token before a handler
runs); this module decides what that reader may do:

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

The group and the admin page are ``pages/group.py`` and ``pages/admin.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from lightnews.deliver.export import FeedEntry, atom_feed, bibtex, json_feed
from lightnews.errors import NotFound, UsageError
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.times import now_iso
from lightnews.normalize.validate import whole_number
from lightnews.rank import rank_stories
from lightnews.serve.security import (
    new_session_secret,
    safe_href,
    session_cookies,
    signed_out_cookies,
    visitor_of,
)
from lightnews.serve.site import JsonAnswer, Site, read_form
from lightnews.store.readers import SignInLimits, UserView
from lightnews.store.secrets import (
    check_password,
    digest,
    hash_password,
    needs_rehash,
    new_feed_key,
    new_token,
    verify_password,
)

__all__ = [
    "FAILURE_WINDOW",
    "FEED_FILES",
    "PER_ACCOUNT",
    "PER_ADDRESS",
    "account",
    "account_change",
    "feeds",
    "signin",
    "signin_form",
    "signout",
]

#: Failed sign-ins are counted over this window.
FAILURE_WINDOW = timedelta(minutes=15)
#: Times as many failures allowed from one address as for one account from one address.
PER_ADDRESS = 4
#: Times as many failures allowed for one account from every address together: guesses
#: spread over many addresses stop there, while one address's guesses never lock the
#: member out from their own.
PER_ACCOUNT = 20
#: What a secret feed key opens.
FEED_FILES = ("feed.atom", "feed.json", "saved.bib")
#: The account page of an install without accounts.
NO_ACCOUNTS = "Accounts are not in use on this instance: there is one local reader."


def signin_form(site: Site, request: Request) -> Response:
    visitor = visitor_of(request)
    if visitor.user is not None:
        return RedirectResponse(_safe_next(request.query_params.get("next", "/")), 303)
    if not site.store.user_count():
        return RedirectResponse("/", 303)  # no accounts: nobody signs in
    expired = request.query_params.get("expired") == "1"
    return site.page(
        "signin.html",
        title="Sign in",
        next=request.query_params.get("next", "/"),
        message="Your session has ended: sign in again." if expired else "",
        typed_name="",
    )


def signin(site: Site, request: Request) -> Response:
    store = site.store
    form = read_form(request)
    name = str(form.get("name") or "").strip()[:64]
    password = str(form.get("password") or "")
    target = _safe_next(str(form.get("next") or "/"))
    address = request.client.host if request.client else "unknown"
    claim = _claim_try(site, name, address)
    if claim is None:
        refused = site.page(
            "signin.html",
            status=429,
            title="Sign in",
            next=target,
            typed_name=name,
            message="Too many failed sign-ins: wait 15 minutes and try again.",
        )
        refused.headers["Retry-After"] = str(int(FAILURE_WINDOW.total_seconds()))
        return refused
    found = store.password_hash(name) if name else None
    if found is None or not verify_password(found[1], password):
        return site.page(
            "signin.html",
            status=401,
            title="Sign in",
            next=target,
            typed_name=name,
            message="That name and password do not match an account.",
        )
    user, stored = found
    if needs_rehash(stored):
        store.set_password(user.id, hash_password(password))
        user = store.get_user(user.name)
    store.forgive_sign_in(claim, name, address)
    response = RedirectResponse(target, status_code=303)
    for cookie in _open_session(site, request, user):
        response.headers.append("set-cookie", cookie)
    return response


def signout(site: Site, request: Request) -> Response:
    visitor = visitor_of(request)
    form = read_form(request)
    if visitor.user is not None and form.get("everywhere"):
        site.store.end_sessions(visitor.user.id)
    elif visitor.user is not None and visitor.session:
        site.store.end_session(digest(visitor.session))
    response = RedirectResponse("/signin" if site.store.user_count() else "/", status_code=303)
    for cookie in signed_out_cookies(secure=_secure(request)):
        response.headers.append("set-cookie", cookie)
    return response


def account(site: Site, request: Request) -> Response:
    user = visitor_of(request).user
    if user is None:
        return site.refused(NO_ACCOUNTS)
    return _account_page(site, user, changed=request.query_params.get("changed", "")[:20])


def account_change(site: Site, request: Request) -> Response:
    user = visitor_of(request).user
    if user is None:
        return site.refused(NO_ACCOUNTS)
    form = read_form(request)
    action = str(form.get("action") or "")
    if action == "feed-key":
        key = new_feed_key()
        site.store.set_feed_key(user.reader, digest(key), now_iso())
        base = str(request.base_url).rstrip("/")
        urls = {name: f"{base}/feeds/{key}/{name}" for name in FEED_FILES}
        return _account_page(site, user, new_feed=urls)
    if action in ("share", "private"):
        site.store.set_sharing(user.reader, action == "share")
        return RedirectResponse("/account", status_code=303)
    if action == "password":
        return _change_password(site, request, user, form)
    if action in ("token-create", "token-revoke"):
        return _change_tokens(site, user, action, form)
    return site.page(
        "error.html",
        status=400,
        title="Cannot do that",
        message="nothing to do: make a feed URL, share or stop sharing, change "
        "the password, or make or revoke a token",
    )


def feeds(site: Site, request: Request) -> Response:
    """A reader's feed or saved papers by its secret key (no sign-in: feed readers)."""
    store = site.store
    key = request.path_params["key"]
    name = request.path_params["name"]
    reader = store.feed_key_reader(digest(key)) if 10 <= len(key) <= 100 else None
    if reader is None or name not in FEED_FILES:
        return PlainTextResponse("There is no feed at this address.\n", status_code=404)
    if name == "saved.bib":
        saved = sorted(
            k for k, (_, at) in store.story_states(reader).items() if at and parse_arxiv_id(k)
        )
        papers = []
        for arxiv_id in saved:
            try:
                papers.append(store.get_paper(arxiv_id))
            except NotFound:
                continue
        return Response(bibtex(papers), media_type="application/x-bibtex")
    s = site.reader_settings(reader)
    stories = rank_stories(
        store,
        reader,
        limit=50,
        half_life_hours=s.half_life_hours,
        bar=s.attribution_bar,
        settings=s,
        windows=site.windows,
        papers_only=request.query_params.get("view") == "papers",
    )
    base = str(request.base_url).rstrip("/")
    entries = [
        FeedEntry(
            f"{base}/paper/{st.arxiv_id}" if st.arxiv_id else st.key,
            st.title,
            st.url,
            st.time,
            " · ".join(st.why),
        )
        for st in stories
    ]
    self_url = f"{base}/feeds/{key}/{name}"
    if name == "feed.atom":
        return Response(
            atom_feed("Lightnews: your feed", self_url, entries), media_type="application/atom+xml"
        )
    return JsonAnswer(
        json_feed("Lightnews: your feed", self_url, entries), media_type="application/feed+json"
    )


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _safe_next(target: str) -> str:
    """Where to go after signing in: a path on this site, else the feed."""
    if safe_href(target) is None or not target.startswith("/") or target.startswith("//"):
        return "/"  # control characters (a tab browsers drop: "/\t/x") and "\\" refused too
    return target


def _claim_try(site: Site, name: str, address: str) -> int | None:
    """One password try for ``name`` from ``address``, counted first; None past a limit."""
    now = datetime.now(UTC)
    limit = int(site.current_settings().sign_in_attempts)
    limits = SignInLimits(limit, limit * PER_ADDRESS, limit * PER_ACCOUNT)
    return site.store.claim_sign_in(
        name, address, _stamp(now), _stamp(now - FAILURE_WINDOW), limits
    )


def _open_session(site: Site, request: Request, user: UserView) -> list[str]:
    """A new server-side session for ``user``: the cookies that carry it."""
    hours = float(site.current_settings().session_hours)
    now = datetime.now(UTC)
    session = new_session_secret()
    site.store.create_session(
        user.id, digest(session), _stamp(now), _stamp(now + timedelta(hours=hours))
    )
    return session_cookies(
        site.secret, user, session, secure=_secure(request), max_age=int(hours * 3600)
    )


def _account_page(site: Site, user: UserView, status: int = 200, **shown: Any) -> Response:
    context: dict[str, Any] = {
        "new_feed": None,
        "new_token": None,
        "message": "",
        "changed": "",
        "token_name": "",
    }
    context.update(shown)
    return site.page(
        "account.html",
        status=status,
        title="Your account",
        user=user,
        tokens=site.store.list_tokens(user.id),
        **context,
    )


def _change_password(
    site: Site, request: Request, user: UserView, form: Mapping[str, Any]
) -> Response:
    """The reader's own password: the current one first (counted as a sign-in try)."""
    store = site.store
    address = request.client.host if request.client else "unknown"
    claim = _claim_try(site, user.name, address)
    if claim is None:
        return _account_page(site, user, 429, message="Too many wrong passwords: wait 15 minutes.")
    found = store.password_hash(user.name)
    if found is None or not verify_password(found[1], str(form.get("current") or "")):
        return _account_page(site, user, 400, message="Your current password is not that.")
    store.forgive_sign_in(claim, user.name, address)
    new = str(form.get("new") or "")
    if new != str(form.get("again") or ""):
        return _account_page(site, user, 400, message="The new password and its repeat differ.")
    try:
        check_password(new)
    except UsageError as error:
        return _account_page(site, user, 400, message=f"Not changed: {error}.")
    store.set_password(user.id, hash_password(new))  # every session of it ends...
    store.audit(user.name, "users.passwd", user.name, now_iso())
    response = RedirectResponse("/account?changed=password", status_code=303)
    for cookie in _open_session(site, request, store.get_user(user.name)):  # ...a new one here
        response.headers.append("set-cookie", cookie)
    return response


def _change_tokens(site: Site, user: UserView, action: str, form: Mapping[str, Any]) -> Response:
    """API tokens made (shown once) and revoked on the web, as `lightnews tokens` does."""
    if action == "token-revoke":
        try:
            site.store.revoke_token(
                user.id, whole_number(str(form.get("token") or ""), "token"), now_iso()
            )
        except (NotFound, UsageError) as error:
            return _account_page(site, user, 400, message=f"Not revoked: {error}.")
        return RedirectResponse("/account?changed=token", status_code=303)
    label = str(form.get("name") or "").strip()
    if not label or len(label) > 64 or any(c < " " for c in label):
        return _account_page(
            site,
            user,
            400,
            token_name=label[:64],
            message="Name the token (where it is used: 1-64 characters).",
        )
    token = new_token()
    site.store.create_token(user.id, label, digest(token), now_iso())
    return _account_page(site, user, new_token=token)
