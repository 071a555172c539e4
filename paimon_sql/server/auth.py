"""Who may use the server: the ``--auth`` modes, the password file of ``--auth plain``, and the directory of
``--auth ldap`` (:mod:`paimon_sql.server.ldap`).

The password file holds one ``user:scrypt$n$r$p$salt$hash`` line per user (hex salt and hash, a random
salt per user), written by ``paimon-sql-server adduser``; a password is never stored. The file is read
again when it changes, so users added while the server runs can log in without a restart.
"""

import hashlib
import hmac
import os
import secrets
import threading
import time
from typing import Dict, FrozenSet, Optional, Tuple

from paimon_sql.exceptions import AuthError
from paimon_sql.server.backoff import SignInBackoff
from paimon_sql.server.ldap import Directory, LdapSettings

MODES = ("nosasl", "none", "plain", "ldap")
LDAP_CACHE_SECONDS = 300.0  # a directory's answer is trusted this long: a disabled account stops working soon
_SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1}  # ~16 MiB and tens of ms per check: slow to guess, quick to log in


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=128 * r * n * 2, dklen=32)


def _entry(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = _scrypt(password, salt, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt.hex()}${digest.hex()}"


def _check_user_name(user: str) -> None:
    if not user or any(c in user for c in ":\r\n\0") or user != user.strip():
        raise AuthError(f"invalid user name {user!r}: it must be non-empty, without ':', NUL, line breaks "
                        "or surrounding spaces")


def _parse(path: str) -> Dict[str, str]:
    users = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            user, sep, entry = line.partition(":")
            if not sep or not entry.startswith("scrypt$") or len(entry.split("$")) != 6:
                raise AuthError(f"{path} line {number} is not a 'user:scrypt$...' entry written by "
                                "paimon-sql-server adduser")
            users[user] = entry
    return users


def add_user(path: str, user: str, password: str) -> None:
    """Add ``user`` to the password file at ``path`` (created if missing, readable by its owner only),
    replacing the user's earlier entry; the file is replaced atomically."""
    _check_user_name(user)
    if not password:
        raise AuthError("empty password refused")
    users = _parse(path) if os.path.exists(path) else {}
    users[user] = _entry(password)
    tmp = f"{path}.tmp-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.writelines(f"{u}:{e}\n" for u, e in users.items())
    os.replace(tmp, path)


class Authenticator:
    """Checks a user name and password for one ``--auth`` mode.

    ``nosasl`` and ``none`` accept anyone (``none`` is HiveServer2's SASL PLAIN with any password);
    ``plain`` checks the password file, ``ldap`` the directory. Successful checks are remembered (as an HMAC
    under a key of this process, never the password) so that HTTP clients, which send Basic credentials with
    every request, pay for scrypt or the directory once (for ``ldap``, for LDAP_CACHE_SECONDS).
    """

    def __init__(self, mode: str, password_file: Optional[str] = None, ldap: Optional[LdapSettings] = None):
        if mode not in MODES:
            raise AuthError(f"unknown auth mode {mode!r}; expected one of {', '.join(MODES)}")
        if mode == "plain" and not password_file:
            raise AuthError("--auth plain needs --password-file (add users with paimon-sql-server adduser)")
        if mode == "ldap" and ldap is None:
            raise AuthError("--auth ldap needs --ldap-url and --ldap-user-dn-pattern or --ldap-base-dn")
        self.mode = mode
        self._directory = Directory(ldap) if mode == "ldap" else None
        self._path = password_file if mode == "plain" else None
        self._lock = threading.Lock()
        self._key = secrets.token_bytes(32)
        self._stamp: Optional[Tuple[int, int]] = None
        self._users: Dict[str, str] = {}
        self._verified: Dict[str, Tuple[bytes, float]] = {}  # user -> (HMAC of user and password, until)
        self._groups: Dict[str, FrozenSet[str]] = {}
        self.backoff = SignInBackoff()
        if self._path:
            self._reload()
            if not self._users:
                raise AuthError(f"{password_file} has no users; add one with "
                                f"paimon-sql-server adduser --password-file {password_file} USER")

    @property
    def requires_password(self) -> bool:
        return self.mode in ("plain", "ldap")

    def check(self, user: str, password: str, address: str = "") -> bool:
        """True when ``user`` may log in with ``password`` from ``address`` (the client's IP): a user or
        address backing off after failed sign-ins is refused unchecked (:mod:`paimon_sql.server.backoff`)."""
        if not self.requires_password:
            return True
        if self.backoff.refused(user, address):
            return False
        ok = self._check(user, password)
        (self.backoff.succeeded if ok else self.backoff.failed)(user, address)
        return ok

    def _check(self, user: str, password: str) -> bool:
        if self._path:
            self._reload()
        token = hmac.new(self._key, f"{user}\0{password}".encode("utf-8"), "sha256").digest()
        with self._lock:
            known, until = self._verified.get(user, (None, 0.0))
            entry = self._users.get(user)
        if known is not None and time.monotonic() < until and hmac.compare_digest(known, token):
            return True
        if self._directory is not None:
            groups = self._directory.sign_in(user, password)
            ok, until = groups is not None, time.monotonic() + LDAP_CACHE_SECONDS
        else:
            groups, ok, until = None, self._matches(entry, password), float("inf")
        if ok:
            with self._lock:
                self._verified[user] = (token, until)
                if groups is not None:
                    self._groups[user] = groups
        return ok

    def groups(self, user: str) -> FrozenSet[str]:
        """The directory groups (their cn) of ``user`` as of their last sign-in; empty for the other modes
        and for a user who has not signed in."""
        with self._lock:
            return self._groups.get(user, frozenset())

    @staticmethod
    def _matches(entry: Optional[str], password: str) -> bool:
        # an unknown user costs a hash too, so timing does not tell which users exist
        _, n, r, p, salt, digest = (entry or _DUMMY).split("$")
        actual = _scrypt(password, bytes.fromhex(salt), int(n), int(r), int(p))
        return entry is not None and hmac.compare_digest(actual, bytes.fromhex(digest))

    def _reload(self) -> None:
        try:
            st = os.stat(self._path)
        except OSError as e:
            raise AuthError(f"cannot read password file {self._path}: {e.strerror}") from None
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        try:
            users = _parse(self._path)
        except OSError as e:
            raise AuthError(f"cannot read password file {self._path}: {e.strerror}") from None
        with self._lock:
            self._users, self._verified, self._stamp = users, {}, stamp


_DUMMY = _entry(secrets.token_hex(8))
