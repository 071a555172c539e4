"""JSON over HTTP with urllib, for the REST catalogs paimon-sql talks to (Iceberg's, Paimon's): one
call and its JSON answer; an HTTP error or an unreachable server as :class:`HttpError`, which each
client turns into its own one-line error.

Example: ``send(json_request("GET", "http://127.0.0.1:8181/v1/config", {}))`` -> ``{"defaults": ...}``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional

TIMEOUT = 60  # seconds per call


class HttpError(Exception):
    """A call that failed: ``status`` None when no answer came (``reason`` says why), else the HTTP
    status, with the answer's body as JSON (``body``, None when it is not JSON) and as text."""

    def __init__(self, status: Optional[int], reason: str, body: Any = None, text: str = ""):
        super().__init__(f"{status} {reason}" if status is not None else reason)
        self.status, self.reason, self.body, self.text = status, reason, body, text


def segment(name: str) -> str:
    """``name`` as one percent-encoded URL path segment (``/`` included)."""
    return urllib.parse.quote(name, safe="")


def json_request(method: str, url: str, headers: Dict[str, str], body: Optional[dict] = None) -> urllib.request.Request:
    """A request of ``body`` as JSON (none when None)."""
    data = json.dumps(body).encode() if body is not None else None
    return urllib.request.Request(url, data, method=method, headers=headers)


def send(request: urllib.request.Request, timeout: float = TIMEOUT) -> Optional[Any]:
    """The JSON answer of ``request``; None for an empty answer."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
    except urllib.error.HTTPError as e:
        raw = (e.read() or b"").decode("utf-8", "replace")
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = None
        raise HttpError(e.code, str(e.reason), body, raw) from None
    except (urllib.error.URLError, OSError) as e:
        raise HttpError(None, str(getattr(e, "reason", e))) from None
    return json.loads(text) if text.strip() else None
