"""Secrets of users (readers who sign in), kept out of the store: passwords, tokens, feed keys.

Many readers share one instance (see ``store/readers.py`` for what each one
owns). A password is kept only as an Argon2id hash (argon2-cffi, its default
parameters); an API token or a secret feed key is shown once, when made, and
kept only as its SHA-256 digest (they are long random strings, so a slow hash
adds nothing), so a copy of the database gives nobody a way in. Names are
checked here too, so the CLI and the web refuse the same things with the same
words. Nothing here touches the database or the network.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from lightnews.errors import UsageError

__all__ = [
    "FEED_KEY_PREFIX",
    "MIN_PASSWORD",
    "TOKEN_PREFIX",
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
