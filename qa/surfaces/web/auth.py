"""Sign-in: users and passwords from QA_AUTH or a QA_AUTH_FILE of scrypt hashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path

from qa.cluster.serve import is_loopback
from qa.config import Config
from qa.errors import QAError
from qa.surfaces.web.throttle import throttled

# scrypt at n=2**14, r=8: about 16 MB and 50 ms per check, the cost OWASP suggests for logins.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
PREFIX = "scrypt"


class AuthError(QAError):
    """A sign-in setting that cannot be used."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str, salt: bytes | None = None) -> str:
    """A salted scrypt hash of password, as ``scrypt$n$r$p$salt$hash`` (base64)."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P,
                            dklen=32)
    return f"{PREFIX}${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def check_password(password: str, stored: str) -> bool:
    """True when password matches a hash made by hash_password (constant-time comparison)."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != PREFIX:
            return False
        want = base64.b64decode(digest, validate=True)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt, validate=True),
                             n=int(n), r=int(r), p=int(p), dklen=len(want), maxmem=256 * 2**20)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def parse_plain(spec: str) -> dict[str, str]:
    """QA_AUTH: ``user:password`` pairs separated by commas (a password may hold ':')."""
    users: dict[str, str] = {}
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        user, sep, password = item.partition(":")
        if not sep or not user.strip() or not password:
            raise AuthError(f"QA_AUTH entry {user.strip() or item[:20]!r} is not user:password; "
                            "write QA_AUTH=alice:secret,bob:other")
        users[user.strip()] = password
    return users


def read_auth_file(path: Path) -> dict[str, str]:
    """QA_AUTH_FILE: one ``user:hash`` a line (``qa hash-password USER`` makes them); # comments."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise AuthError(f"cannot read QA_AUTH_FILE {path} ({type(exc).__name__}): "
                        "point it at a file made with `qa hash-password USER`") from None
    users: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, _, stored = line.partition(":")
        if not user or not stored.startswith(PREFIX + "$") or stored.count("$") != 5:
            raise AuthError(f"{path} line {number} is not user:scrypt$…; "
                            "make lines with `qa hash-password USER >> " + str(path) + "`")
        users[user] = stored
    if not users:
        raise AuthError(f"QA_AUTH_FILE {path} lists no users: add lines with `qa hash-password USER`")
    return users


def make_auth(config: Config) -> Callable[[str, str], bool] | None:
    """The password check for sign-in, or None when sign-in is off (no QA_AUTH, no QA_AUTH_FILE).

    Plain QA_AUTH passwords are hashed once here, so every check (a known name or not, plain or
    from the file) costs one scrypt and one constant-time comparison: timing tells no user names.
    """
    plain = parse_plain(config.team.auth) if config.team.auth else {}
    hashed = read_auth_file(Path(config.team.auth_file)) if config.team.auth_file else {}
    hashed.update({user: hash_password(password) for user, password in plain.items()})
    if not hashed:
        return None
    # A hash for unknown users too, so a wrong name takes as long as a wrong password.
    dummy = hash_password(secrets.token_hex(8))

    def check(username: str, password: str) -> bool:
        username, password = str(username or ""), str(password or "")
        return check_password(password, hashed.get(username, dummy)) and username in hashed

    return check


def sign_in(config: Config) -> Callable[[str, str], Awaitable[bool]] | None:
    """What Gradio's login calls: make_auth's check behind the sign-in throttle, off the event loop."""
    check = make_auth(config)
    return throttled(check) if check is not None else None


def open_warning(host: str, signed_in: bool, uploads: bool = False) -> str | None:
    """The one-line start-up warning for a server others can reach without signing in."""
    if signed_in or is_loopback(host):
        return None
    add = " and add articles (QA_UPLOADS=1)" if uploads else ""
    return (f"warning: serving on {host} without sign-in: anyone who can reach this address can read "
            f"every article{add}; set QA_AUTH=user:password or QA_AUTH_FILE (see `qa hash-password`)")
