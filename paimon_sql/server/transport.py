"""How HiveServer2 clients reach the Thrift processor: the binary and http transports, SASL PLAIN, TLS.

The binary transport serves plain (NOSASL) and SASL clients on one port and tells them apart by the first
byte a client sends: 0x80 starts an unframed TBinaryProtocol message, 0x01 is SASL's START. SASL (as
Hive's TSaslServerTransport speaks it) exchanges messages of a status byte and a 4-byte big-endian length;
after a successful PLAIN negotiation every Thrift message travels in 4-byte-length-prefixed frames, which
is exactly Thrift's framed transport. One thread serves each connection.

The http transport answers a POST on ``/<http-path>`` holding one Thrift message with its reply, as
Hive's ThriftHttpServlet does; credentials come as HTTP Basic authentication with every request.

The handler learns who is calling through :func:`current`. When a binary connection ends, the
handler's ``connection_closed()`` (if it has one) runs in the thread that served it, so the sessions a
client opened and never closed are freed. Over http a session outlives the connections its calls came
on (clients may reconnect for every call) and ends with CloseSession.
"""

import base64
import binascii
import logging
import socket
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport.TTransport import (TBufferedTransport, TFramedTransport, TMemoryBuffer, TTransportBase,
                                         TTransportException)

from paimon_sql.exceptions import TransportRefused
from paimon_sql.server.auth import Authenticator
from paimon_sql.server.lifecycle import host_of
from paimon_sql.server.protocol import AcceleratedBinaryProtocol

log = logging.getLogger(__name__)

TRANSPORTS = ("binary", "http")
_BINARY_VERSION = 0x80  # first byte of a strict TBinaryProtocol message (version 0x8001xxxx)
START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5  # SASL negotiation status bytes
_MAX_SASL_MESSAGE = 64 * 1024
_MAX_HTTP_BODY = 64 * 1024 * 1024  # a Thrift call (a statement, a fetch request) is far smaller
_HANDSHAKE_TIMEOUT = 30.0  # seconds a client has to finish TLS and SASL before it is dropped
_ACCEPT_WAKE = 1.0  # seconds the listening socket waits in accept() before it looks at signals again
_REFUSED = "Error validating the login"  # the whole message for any failed login: no detail to guess from
_local = threading.local()


class Connection:
    """The client connection a Thrift call arrives on: the user it authenticated as (None when it did
    not: NOSASL, or http without credentials) and the client's ``address`` (``ip:port``)."""

    def __init__(self, user: Optional[str], address: str = ""):
        self.user = user
        self.address = address


def _address(addr) -> str:
    """A socket peer address as ``ip:port`` (``[ip]:port`` for IPv6)."""
    host, port = addr[0], addr[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def current() -> Optional[Connection]:
    """The connection of the Thrift call this thread is serving (None outside a call)."""
    return getattr(_local, "connection", None)


def tls_context(cert: Optional[str], key: Optional[str]) -> Optional[ssl.SSLContext]:
    """A server TLS context for ``--ssl-cert``/``--ssl-key`` (both or neither), TLS 1.2 at least."""
    if not cert and not key:
        return None
    if not (cert and key):
        raise ValueError("--ssl-cert and --ssl-key go together")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert, key)
    return ctx


def listen(processor, *, host: str, port: int, authenticator: Authenticator, transport: str = "binary",
           http_path: str = "cliservice", tls: Optional[ssl.SSLContext] = None):
    """A server of ``processor`` (a ``TCLIService.Processor``) bound to ``host:port`` (0: a free port, see
    ``.port``); ``.serve_forever()`` serves until ``.shutdown()`` or an interrupt."""
    if transport == "binary":
        return _BinaryServer(processor, host, port, authenticator, tls)
    if transport == "http":
        return _HttpServer(processor, host, port, authenticator, tls, http_path)
    raise ValueError(f"unknown transport {transport!r}; expected one of {', '.join(TRANSPORTS)}")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, IPv4 or IPv6 as the host is (``::`` takes IPv4 clients too)."""
    return socket.create_server((host, port), family=_family(host), backlog=128, dualstack_ipv6=host == "::")


def _family(host: str) -> int:
    return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]


class _Socket(TTransportBase):
    """A connected socket (plain or TLS) as a Thrift transport; bytes already read can be put back."""

    def __init__(self, sock: socket.socket):
        self._sock = sock
        self._head = b""

    def unread(self, data: bytes) -> None:
        self._head = data + self._head

    def isOpen(self):
        return True

    def read(self, sz):
        if self._head:
            out, self._head = self._head[:sz], self._head[sz:]
            return out
        data = self._sock.recv(sz)
        if not data:
            raise TTransportException(TTransportException.END_OF_FILE, "client closed the connection")
        return data

    def write(self, buf):
        self._sock.sendall(buf)

    def flush(self):
        pass

    def close(self):
        self._sock.close()


class _BinaryServer:
    def __init__(self, processor, host, port, authenticator: Authenticator, tls: Optional[ssl.SSLContext]):
        self._processor, self._auth, self._tls = processor, authenticator, tls
        self._sock = bind(host, port)
        self.port = self._sock.getsockname()[1]
        # accept() wakes each second: Python runs a signal's handler (SIGUSR1's status, SIGTERM's
        # stop) on the main thread only, so one the kernel hands another thread waits for this
        self._sock.settimeout(_ACCEPT_WAKE)
        self._closed = False

    def serve_forever(self) -> None:
        while not self._closed:
            try:
                conn, addr = self._sock.accept()
            except TimeoutError:
                continue
            except OSError as e:
                if self._closed:
                    return
                log.warning("accepting a connection failed: %s", e)  # out of file descriptors, say: go on
                time.sleep(0.1)
                continue
            address = _address(addr)
            threading.Thread(target=self._serve_connection, args=(conn, address), name=f"client {address}",
                             daemon=True).start()

    def shutdown(self) -> None:
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in accept()
        except OSError:
            pass
        self._sock.close()

    def _serve_connection(self, conn: socket.socket, address: str) -> None:
        served = False
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(_HANDSHAKE_TIMEOUT)
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True)
            raw = _Socket(conn)
            first = raw.readAll(1)
            raw.unread(first)
            if first[0] == START:
                user = _negotiate_sasl_plain(raw, self._auth, address)
                trans = TFramedTransport(raw)
            elif first[0] == _BINARY_VERSION:
                if self._auth.requires_password:
                    _refuse_unauthenticated(raw)
                    return
                user, trans = None, TBufferedTransport(raw, 64 * 1024)
            else:
                return  # neither Thrift binary nor SASL: not a HiveServer2 client
            conn.settimeout(None)
            _local.connection = Connection(user, address)
            served = True
            protocol = AcceleratedBinaryProtocol(trans)
            while True:
                self._processor.process(protocol, protocol)
        except (TTransportException, TransportRefused, OSError, EOFError):
            pass  # the client left, or was refused (it was told why)
        except Exception:  # a message we cannot read: the stream cannot be trusted past it
            log.exception("dropping a connection after an unreadable message")
        finally:
            if served:
                _connection_closed(self._processor)
            _local.connection = None
            conn.close()


def _connection_closed(processor) -> None:
    closed = getattr(processor._handler, "connection_closed", None)
    if closed is not None:
        try:
            closed()
        except Exception:
            log.exception("freeing the sessions of a closed connection failed")


def _read_sasl(raw: _Socket):
    status, length = struct.unpack(">BI", raw.readAll(5))
    if length > _MAX_SASL_MESSAGE:
        raise TransportRefused()
    return status, raw.readAll(length)


def _send_sasl(raw: _Socket, status: int, payload: bytes = b"") -> None:
    raw.write(struct.pack(">BI", status, len(payload)) + payload)


def _negotiate_sasl_plain(raw: _Socket, authenticator: Authenticator, address: str = "") -> str:
    """Run the server side of SASL PLAIN; the authenticated user.

    The client names its mechanism in a START message, then sends its credentials: Java clients with
    status COMPLETE, Python ones with OK. Both get COMPLETE back on success, BAD with no detail on a
    failed login.
    """
    _, mechanism = _read_sasl(raw)
    mechanism = mechanism.decode("ascii", "replace")
    if mechanism.upper() != "PLAIN":
        _send_sasl(raw, BAD, f"unsupported SASL mechanism {mechanism}; this server speaks PLAIN".encode())
        raise TransportRefused()
    status, response = _read_sasl(raw)
    parts = response.split(b"\0")
    if status not in (OK, COMPLETE) or len(parts) != 3:
        _send_sasl(raw, ERROR, b"malformed SASL PLAIN response")
        raise TransportRefused()
    authzid, user, password = (p.decode("utf-8", "replace") for p in parts)
    if authzid and authzid != user:  # acting as another user is not supported
        _send_sasl(raw, BAD, _REFUSED.encode())
        raise TransportRefused()
    if not _login(authenticator, user, password, address):
        _send_sasl(raw, BAD, _REFUSED.encode())
        raise TransportRefused()
    _send_sasl(raw, COMPLETE)
    return user


def _login(authenticator: Authenticator, user: str, password: str, address: str) -> bool:
    """``address``: the client's ``ip:port``; sign-ins back off per IP (:mod:`paimon_sql.server.backoff`)."""
    try:
        return authenticator.check(user, password, host_of(address))
    except Exception:  # an unreadable password file refuses everyone, and says why in the server's log
        log.exception("password check failed")
        return False


def _refuse_unauthenticated(raw: _Socket) -> None:
    """Answer a NOSASL client's first call with one clear error: this server wants a user and password."""
    protocol = AcceleratedBinaryProtocol(TBufferedTransport(raw))
    name, _, seqid = protocol.readMessageBegin()
    protocol.skip(TType.STRUCT)
    protocol.readMessageEnd()
    error = TApplicationException(TApplicationException.UNKNOWN,
                                  "this server requires SASL PLAIN authentication with a user name and password")
    protocol.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
    error.write(protocol)
    protocol.writeMessageEnd()
    protocol.trans.flush()


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, processor, host, port, authenticator, tls, http_path):
        self.processor, self.authenticator, self.tls = processor, authenticator, tls
        self.http_path = "/" + http_path.strip("/")
        self.address_family = _family(host)
        super().__init__((host, port), _HttpHandler)
        self.port = self.server_address[1]

    def shutdown(self) -> None:
        super().shutdown()
        self.server_close()

    def finish_request(self, request, client_address):
        if self.tls is None:
            return super().finish_request(request, client_address)
        request.settimeout(_HANDSHAKE_TIMEOUT)
        with self.tls.wrap_socket(request, server_side=True) as tls_request:  # the handshake runs in this thread
            tls_request.settimeout(None)
            super().finish_request(tls_request, client_address)

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (OSError, ssl.SSLError)):  # a client that left is not an error
            log.exception("http request from %s failed", client_address)


class _HttpHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: JDBC and impyla reuse the connection
    disable_nagle_algorithm = True  # the reply's headers and body leave at once, not a delayed ACK later
    server: _HttpServer

    def do_POST(self):
        if self.path.split("?", 1)[0].rstrip("/") != self.server.http_path:
            return self._reply(404, b"not found", "text/plain")
        user = self._user()
        if user is None:
            return self._reply(401, _REFUSED.encode(), "text/plain",
                               {"WWW-Authenticate": 'Basic realm="paimon-sql-server"'})
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            return self._reply(411, b"Content-Length required", "text/plain")
        if int(length) > _MAX_HTTP_BODY:
            return self._reply(413, b"request too large", "text/plain")
        out = TMemoryBuffer()
        _local.connection = Connection(user or None, _address(self.client_address))
        try:
            protocol_in = AcceleratedBinaryProtocol(TMemoryBuffer(self.rfile.read(int(length))))
            self.server.processor.process(protocol_in, AcceleratedBinaryProtocol(out))
        finally:
            _local.connection = None
        self._reply(200, out.getvalue(), "application/x-thrift")

    def _user(self) -> Optional[str]:
        """The Basic-authenticated user ('' when none was sent and none is needed), None when refused."""
        header = self.headers.get("Authorization", "")
        scheme, _, encoded = header.partition(" ")
        user = password = None
        if scheme.lower() == "basic":
            try:
                user, _, password = base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
        if not self.server.authenticator.requires_password:
            return user or ""
        if user is None or not _login(self.server.authenticator, user, password, _address(self.client_address)):
            return None
        return user

    def _reply(self, code: int, body: bytes, content_type: str, headers: Optional[dict] = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # requests are not logged line by line
        pass
