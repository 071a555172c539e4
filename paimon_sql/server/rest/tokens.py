"""The bearer tokens of ``--rest-token-file F``: one ``<token> <user>`` a line (``#`` starts a
comment). A client sends ``Authorization: Bearer <token>`` (Paimon's ``token.provider=bear``) and
acts as that user under the grants. The file is read again when it changes (its modification
time or size), so tokens are added or revoked without a restart; a file that no longer reads
refuses every call until it is fixed. Tokens are kept as SHA-256 digests and looked up by digest,
so a lookup's time tells nothing of a token's characters.
"""

from __future__ import annotations

import hashlib
from typing import Dict, Optional

from paimon_sql.exceptions import AuthError
from paimon_sql.io.watched_file import WatchedFile

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
    """The tokens of file ``path`` (:class:`WatchedFile`); a file that cannot be read, or holds no
    token, is refused at once."""

    def __init__(self, path: str):
        self.path = path
        self._file = WatchedFile(path, parse, "--rest-token-file", AuthError)
        if not self._file.current():
            raise AuthError(f"--rest-token-file {path} holds no '<token> <user>' line")

    def user(self, authorization: Optional[str]) -> Optional[str]:
        """The user an ``Authorization`` header's bearer token belongs to; None for none or an unknown one."""
        if not authorization or not authorization.startswith(BEARER):
            return None
        return self._file.current().get(digest(authorization[len(BEARER):].strip()))
