"""The bearer tokens of ``--rest-token-file F``: one ``<token> <user>`` a line (``#`` starts a
comment). A client sends ``Authorization: Bearer <token>`` (Paimon's ``token.provider=bear``) and
acts as that user under the grants. The file is read again when it changes (its modification
time or size), so tokens are added or revoked without a restart; a file that no longer reads
refuses every call until it is fixed. Tokens are kept as SHA-256 digests and looked up by digest,
so a lookup's time tells nothing of a token's characters.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Dict, Optional, Tuple

from paimon_sql.exceptions import AuthError

BEARER = "Bearer "


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def parse(text: str, source: str) -> Dict[bytes, str]:
    """digest of token -> user of a token file's ``text``; a malformed line is an AuthError naming it."""
    users = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise AuthError(f"{source} line {number} is not '<token> <user>'")
        users[digest(parts[0])] = parts[1]
    return users


class TokenFile:
    """The tokens of file ``path``; a file that cannot be read, or holds no token, is refused at once."""

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()
        self._stamp: Optional[Tuple[int, int]] = None
        self._users: Dict[bytes, str] = {}
        self._error: Optional[AuthError] = None
        if not self._current():
            raise AuthError(f"--rest-token-file {path} holds no '<token> <user>' line")

    def user(self, authorization: Optional[str]) -> Optional[str]:
        """The user an ``Authorization`` header's bearer token belongs to; None for none or an unknown one."""
        if not authorization or not authorization.startswith(BEARER):
            return None
        return self._current().get(digest(authorization[len(BEARER):].strip()))

    def _current(self) -> Dict[bytes, str]:
        try:
            st = os.stat(self.path)
        except OSError as e:
            raise AuthError(f"cannot read --rest-token-file {self.path}: {e.strerror}") from None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    with open(self.path, encoding="utf-8") as f:
                        self._users, self._error = parse(f.read(), f"--rest-token-file {self.path}"), None
                except OSError as e:
                    self._users, self._error = {}, AuthError(f"cannot read --rest-token-file {self.path}: "
                                                             f"{e.strerror}")
                except AuthError as e:
                    self._users, self._error = {}, e
            if self._error is not None:
                raise self._error
            return self._users
