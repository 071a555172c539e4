"""The REST catalog's HTTP side: a ``ThreadingHTTPServer`` on a daemon thread (HTTPS with the
server's ``--ssl-cert``, each connection's handshake on its own thread), the route table (method and
path pattern -> handler), bearer tokens and sign-in (:mod:`sign_in`), errors as Paimon's JSON, one
audit line per call.

Every call but a refused sign-in runs as the token's user under the grants. Path segments are
percent-decoded with ``unquote_plus`` (Java form-encodes them, pypaimon quotes them; both decode
right), query values likewise. Success is 200 with a JSON body (``{}`` for calls that return
nothing; Java's client takes only 200, 202 and 204). An error is Paimon's error body with ``code``
equal to the status; an unexpected failure is a 500 whose message is one line, its traceback
going to the server's log only.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import ssl
import threading
import time
import urllib.parse
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Pattern, Tuple

from paimon_sql.exceptions import AuthError
from paimon_sql.server.audit import AuditLog
from paimon_sql.server.rest import (databases, functions, partitions, snapshots, tables, vending, versions,
                                    views)
from paimon_sql.server.rest.errors import RestError, from_exception
from paimon_sql.server.rest.sign_in import SIGN_IN_PATH, Tokens
from paimon_sql.server.rest.state import PREFIX, Call, RestState

Handler = Callable[[Call], Dict[str, Any]]
MAX_BODY = 64 * 1024 * 1024  # a snapshot or schema is kilobytes; anything this big is not a Paimon request
CONFIG_PATH = "/v1/config"
_LOG = logging.getLogger(__name__)


def route_table() -> List[Tuple[str, Pattern, Handler]]:
    """(method, whole-path pattern, handler) of every endpoint, the config handshake first."""
    routes = [("GET", re.compile(re.escape(CONFIG_PATH)), databases.config)]
    for module in (databases, tables, snapshots, versions, views, functions, partitions, vending):
        routes += [(method, re.compile(f"/v1/{PREFIX}{pattern}"), handler) for method, pattern, handler in module.ROUTES]
    return routes


ROUTES = route_table()


def find(method: str, path: str) -> Tuple[Handler, Dict[str, str]]:
    """The handler of ``method`` on ``path`` and its decoded path names; 404 or 405 when none."""
    allowed = False
    for verb, pattern, handler in ROUTES:
        m = pattern.fullmatch(path)
        if m:
            if verb == method:
                return handler, {k: urllib.parse.unquote_plus(v) for k, v in m.groupdict().items()}
            allowed = True
    if allowed:
        raise RestError(405, f"{method} is not a method of {path}")
    raise RestError(404, f"no REST catalog endpoint {path}")


class RestServer:
    """The server of ``state`` on ``host:port`` (0: any free port), signing callers in with ``tokens``
    and auditing to ``audit`` (None: no audit log); HTTPS with ``tls``."""

    def __init__(self, state: RestState, tokens: Tokens, audit: Optional[AuditLog], host: str, port: int,
                 tls: Optional[ssl.SSLContext] = None):
        handler = type("RestHandler", (_RequestHandler,), {"state": state, "tokens": tokens, "audit": audit})
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server_class = type("RestHTTPServer", (_HTTPServer,), {"address_family": family, "daemon_threads": True,
                                                               "tls": tls})
        self.httpd = server_class((host.strip("[]"), port), handler)
        self.scheme = "https" if tls is not None else "http"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="paimon-rest-catalog", daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def start(self) -> None:
        self.thread.start()

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _HTTPServer(ThreadingHTTPServer):
    tls: Optional[ssl.SSLContext] = None

    def finish_request(self, request, client_address) -> None:
        """On the connection's own thread: its TLS handshake first, so a slow client stalls no other."""
        if self.tls is not None:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):  # a client that is not speaking TLS, or left
                return
        super().finish_request(request, client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    state: RestState
    tokens: Tokens
    audit: Optional[AuditLog]
    protocol_version = "HTTP/1.1"  # keep-alive: clients make many small calls
    server_version = "paimon-sql-rest"

    def do_GET(self):
        self._serve("GET")

    def do_POST(self):
        self._serve("POST")

    def do_DELETE(self):
        self._serve("DELETE")

    def do_PUT(self):
        self._serve("PUT")

    def log_message(self, format: str, *args) -> None:  # the audit log says who called what
        pass

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """http.server's own refusals (a malformed request line or header, an unknown method) as
        Paimon's error body too; the connection is closed after them."""
        self.close_connection = True
        self._send(code, RestError(code, message or HTTPStatus(code).phrase).body())

    def _serve(self, method: str) -> None:
        started = time.time()
        path, _, query_text = self.path.partition("?")
        address = self.client_address[0]
        call: Optional[Call] = None
        user: Optional[str] = None
        status, answer, error = 200, {}, None
        try:
            body = self._body()
            if path == SIGN_IN_PATH and method == "POST":  # the one call without a bearer token
                user, answer = self.tokens.sign_in(self.headers.get("Authorization"), address)
            else:
                user = self._user()
                handler, params = find(method, path)
                query = dict(urllib.parse.parse_qsl(query_text, keep_blank_values=True))
                call = Call(self.state, self.state.grants.caller(user, address), params, query, body)
                answer = handler(call)
        except Exception as e:  # every failure is an answer; nothing reaches the client as a traceback
            failure = from_exception(e, (call.params.get("table") or call.params.get("db")) if call else None)
            if failure.code == 500:
                _LOG.error("REST %s %s failed", method, path, exc_info=True)
            status, answer, error = failure.code, failure.body(), str(failure)
        if self.audit is not None:  # before the answer: a client that has it finds the call's line written
            self.audit.write(_record(started, user, call, address, method, path, status, error))
        self._send(status, answer)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            raise RestError(413, f"request body of {length} bytes refused (at most {MAX_BODY})")
        return self.rfile.read(length) if length > 0 else b""

    def _user(self) -> str:
        try:
            user = self.tokens.user(self.headers.get("Authorization"))
        except AuthError as e:  # the token file became unreadable: every call is refused until it is fixed
            _LOG.error("%s", e)
            raise RestError(401, "the server cannot read its token file; no call is accepted") from None
        if user is None:
            raise RestError(401, "missing or unknown bearer token (Authorization: Bearer <token>)")
        return user

    def _send(self, status: int, answer: Dict[str, Any]) -> None:
        data = json.dumps(answer, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _record(started: float, user: Optional[str], call: Optional[Call], address: str, method: str, path: str, status: int,
            error: Optional[str]) -> Dict[str, Any]:
    """The audit line of one call: the Thrift server's fields where they apply, its HTTP status besides."""
    record = {
        "time": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "user": user, "client": address, "kind": "rest",
        "statement": f"{method} {path}",
        "tables_read": list(dict.fromkeys(call.caller.tables_read)) if call else [],
        "tables_written": list(dict.fromkeys(call.caller.tables_written)) if call else [],
        "duration_ms": max(int((time.time() - started) * 1000), 0), "status": status,
        "outcome": "ok" if error is None else "error",
    }
    if error is not None:
        record["error"] = error
    return record
