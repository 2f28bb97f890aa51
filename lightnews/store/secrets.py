"""Secrets of users (readers who sign in), kept out of the store: passwords, tokens, feed keys.

Many readers share one instance (see ``store/readers.py`` for what each one
owns). A password is kept only as an Argon2id hash (argon2-cffi, its default
parameters); an API token or a secret feed key is shown once, when made, and
kept only as its SHA-256 digest (they are long random strings, so a slow hash
adds nothing), so a copy of the database gives nobody a way in. Names are
checked here too, so the CLI and the web refuse the same things with the same
words. Nothing here touches the network, and only the first admin of a
deployment (:func:`admin_from_env`, made from its environment by
``lightnews init --admin-from-env``) touches the database.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from lightnews.errors import UsageError
from lightnews.normalize.times import now_iso

if TYPE_CHECKING:
    from lightnews.store import Store

__all__ = [
    "ADMIN_ENV",
    "FEED_KEY_PREFIX",
    "MIN_PASSWORD",
    "TOKEN_PREFIX",
    "AdminSetup",
    "admin_from_env",
    "check_password",
    "check_user_name",
    "digest",
    "hash_password",
    "needs_rehash",
    "new_feed_key",
    "new_token",
    "same",
    "verify_password",
]

#: Shortest password accepted (characters).
MIN_PASSWORD = 8
#: Every API token starts so (a leaked one is easy to recognise and grep for).
TOKEN_PREFIX = "lnt_"
#: Every secret feed key starts so.
FEED_KEY_PREFIX = "lnf_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HASHER = PasswordHasher()
#: Verified against when the account does not exist, so both answers take as long.
_DUMMY_HASH = _HASHER.hash("no such account: the same work either way")


def check_user_name(name: str) -> str:
    """``name`` if it can name an account: letters, digits, ``.``, ``_``, ``-`` (64 at most)."""
    if not _NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} cannot name an account: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def check_password(password: str) -> str:
    """``password`` if it is long enough to keep (the hash is slow; the password must not be)."""
    if len(password) < MIN_PASSWORD:
        raise UsageError(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > 1024:
        raise UsageError("a password has at most 1024 characters")
    return password


def hash_password(password: str) -> str:
    """The Argon2id hash of a password, as kept in the database."""
    return _HASHER.hash(check_password(password))


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the stored hash (None: no such account, same cost)."""
    try:
        return _HASHER.verify(stored or _DUMMY_HASH, password[:1024]) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """Whether a hash was made with weaker parameters than today's."""
    try:
        return _HASHER.check_needs_rehash(stored)
    except InvalidHashError:
        return True


def digest(secret: str) -> str:
    """How a token or feed key is kept: its SHA-256, hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_token() -> str:
    """A fresh API token (shown once; only its :func:`digest` is kept)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_feed_key() -> str:
    """A fresh secret feed key (part of a feed URL; only its :func:`digest` is kept)."""
    return FEED_KEY_PREFIX + secrets.token_urlsafe(24)


def same(a: str, b: str) -> bool:
    """Constant-time comparison of two secrets."""
    return hmac.compare_digest(a.encode(), b.encode())


#: Where a deployment names its first admin: the name, the password, a file holding it.
ADMIN_ENV = ("LIGHTNEWS_ADMIN_USER", "LIGHTNEWS_ADMIN_PASSWORD", "LIGHTNEWS_ADMIN_PASSWORD_FILE")


@dataclass(frozen=True)
class AdminSetup:
    """What :func:`admin_from_env` did (``said``), and a ``note`` worth a warning, if any."""

    said: str
    note: str = ""


def admin_from_env(
    store: Store, environ: Mapping[str, str], actor: Callable[[], str]
) -> AdminSetup:
    """The first admin, made from the environment when the library has no account; what was done.

    Only the *first* account is made: once accounts exist, an admin removed on
    purpose does not come back at the next start, and no password changes.
    ``actor`` names who the audit log records (asked only when an admin is made).
    """
    user_env, password_env, file_env = ADMIN_ENV
    name = environ.get(user_env, "").strip()
    accounts = store.user_count()
    if accounts:
        found = store.password_hash(name) if name else None
        if found is None:
            return AdminSetup(f"{accounts} accounts exist: no admin made from the environment")
        user, stored = found
        given = _admin_password(environ, required=False)
        note = ""
        if given and not verify_password(stored, given):
            note = (
                f"note: the password in the environment is not {name}'s: left as it is "
                f"(`lightnews users passwd {name}` changes it)"
            )
        role = "admin" if user.admin else "reader (not made an admin)"
        return AdminSetup(f"{role} {name} exists: its password is left as it is", note)
    if not name:
        raise UsageError(
            f"--admin-from-env: this library has no accounts; set {user_env} to the first "
            f"admin's name and {file_env} (or {password_env}) to its password"
        )
    check_user_name(name)
    password = check_password(_admin_password(environ, required=True))
    try:
        user = store.add_user(name, hash_password(password), admin=True, now=now_iso())
    except UsageError:  # another setup made it meanwhile
        return AdminSetup(f"admin {name} exists: its password is left as it is")
    store.audit(actor(), "users.add", f"{name} (admin, from the environment)", now_iso())
    return AdminSetup(
        f"added admin {user.name} (#{user.id}) from the environment; the web UI asks to sign in"
    )


def _admin_password(environ: Mapping[str, str], *, required: bool) -> str:
    """The first admin's password from the environment (a file's first line, or the value)."""
    _, password_env, file_env = ADMIN_ENV
    value, path = environ.get(password_env, ""), environ.get(file_env, "").strip()
    if value and path:
        raise UsageError(f"set {password_env} or {file_env}, not both")
    if path:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"{file_env}: cannot read {path}: {error}") from None
        value = lines[0] if lines else ""
    if not value and required:
        raise UsageError(
            f"no password for the first admin: set {file_env} (a file holding it) or {password_env}"
        )
    return value
