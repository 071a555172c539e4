"""Who a REST call's bearer token is: a token of ``--rest-token-file``, or one the server issued at
sign-in.

Sign-in (``POST /v1/paimon-sql/tokens`` with HTTP Basic ``user:password``) is the gateway's own:
the password file of ``--auth plain`` or the directory of ``--auth ldap``, with the same backoff
after failed attempts as the Thrift port's sign-in. It answers ``{"token", "user",
"expiresAtMillis"}``: a fresh random token for that user, good for ``--rest-token-lifetime``
(default 12 h), which a client then sends as Paimon's ``token.provider=bear`` token. Issued tokens
live in the server's memory only (a restart forgets them); like the file's, they are kept as
SHA-256 digests. Without passwords (``--auth none`` or ``nosasl``) sign-in is off (``404``).
"""

from __future__ import annotations

import base64
import binascii
import secrets
import threading
import time
from typing import Dict, Optional, Tuple

from paimon_sql.server.auth import Authenticator
from paimon_sql.server.rest.errors import RestError
from paimon_sql.server.rest.tokens import BEARER, TokenFile, digest

SIGN_IN_PATH = "/v1/paimon-sql/tokens"
BASIC = "Basic "
DEFAULT_LIFETIME_SECONDS = 12 * 3600


class Tokens:
    """The tokens of ``file`` (None: none) and those issued to users ``authenticator`` signs in."""

    def __init__(self, file: Optional[TokenFile], authenticator: Authenticator,
                 lifetime_seconds: float = DEFAULT_LIFETIME_SECONDS):
        self.file, self.authenticator, self.lifetime = file, authenticator, lifetime_seconds
        self._issued: Dict[bytes, Tuple[str, float]] = {}  # digest -> (user, expiry as time.time())
        self._lock = threading.Lock()

    def user(self, authorization: Optional[str]) -> Optional[str]:
        """The user of an ``Authorization`` header's bearer token; None for none, an unknown or an expired one."""
        if not authorization or not authorization.startswith(BEARER):
            return None
        key = digest(authorization[len(BEARER):].strip())
        with self._lock:
            issued = self._issued.get(key)
            if issued is not None and issued[1] <= time.time():
                del self._issued[key]
                issued = None
        if issued is not None:
            return issued[0]
        return self.file.user(authorization) if self.file is not None else None

    def sign_in(self, authorization: Optional[str], address: str) -> Tuple[str, dict]:
        """(user, answer) of a sign-in; 401 for credentials the gateway refuses, 404 when it takes none."""
        if not self.authenticator.requires_password:
            raise RestError(404, "sign-in is off: the server checks no passwords (--auth none or nosasl); "
                                 "use a token of --rest-token-file")
        user, password = _basic(authorization)
        if not self.authenticator.check(user, password, address):
            raise RestError(401, f"sign-in refused for user '{user}'")
        token = secrets.token_urlsafe(32)
        expires = time.time() + self.lifetime
        with self._lock:
            self._issued = {k: v for k, v in self._issued.items() if v[1] > time.time()}
            self._issued[digest(token)] = (user, expires)
        return user, {"token": token, "user": user, "expiresAtMillis": int(expires * 1000)}


def _basic(authorization: Optional[str]) -> Tuple[str, str]:
    if not authorization or not authorization.startswith(BASIC):
        raise RestError(401, "sign-in needs HTTP Basic credentials (Authorization: Basic base64(user:password))")
    try:
        user, sep, password = base64.b64decode(authorization[len(BASIC):].strip(), validate=True) \
            .decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise RestError(401, "sign-in credentials are not base64 of 'user:password'") from None
    if not sep or not user:
        raise RestError(401, "sign-in credentials are not base64 of 'user:password'")
    return user, password
