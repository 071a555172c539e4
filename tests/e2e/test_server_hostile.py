"""Hostile input at paimon-sql-server's transports (issue 47): random and truncated Thrift, oversized
lengths, a SASL exchange that never finishes, garbage over http. Each gets an error or a closed
connection, never a hang, and everyone else is served meanwhile and after. In-process listeners of
the server's transport code over a handler that answers OpenSession (the statement-level cases, a
10 MB statement and a deeply nested query, run on a real server in test_server_sql.py)."""

import http.client
import random
import socket
import struct
import threading
import time

import pytest
from e2e.server_support import WhoAmI, thrift_client
from TCLIService import TCLIService, ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport import THttpClient
from thrift.transport.TTransport import TMemoryBuffer

from paimon_sql.server import transport
from paimon_sql.server.auth import Authenticator, add_user

GIVE_UP = 20  # seconds: a server that has not answered or closed by then hangs


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("auth") / "users")
    add_user(path, "alice", "pw")
    servers = {name: transport.listen(TCLIService.Processor(WhoAmI()), host="127.0.0.1", port=0,
                                      authenticator=Authenticator(mode, path), transport=kind)
               for name, mode, kind in [("nosasl", "nosasl", "binary"), ("plain", "plain", "binary"),
                                        ("http", "nosasl", "http")]}
    for s in servers.values():
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield {name: s.port for name, s in servers.items()}
    for s in servers.values():
        s.shutdown()


def open_session(client) -> str:
    return client.OpenSession(ttypes.TOpenSessionReq(client_protocol=9)).sessionHandle.sessionId.guid.decode()


def served(ports) -> None:
    """Every listener still serves a proper client."""
    assert open_session(thrift_client(ports["nosasl"])) == "-"
    assert open_session(thrift_client(ports["plain"], "alice", "pw")) == "alice"
    http = THttpClient.THttpClient(f"http://127.0.0.1:{ports['http']}/cliservice")
    http.open()
    assert open_session(TCLIService.Client(TBinaryProtocol(http))) == "-"


def send_and_drain(port: int, data: bytes, close_writing: bool = True) -> bytes:
    """Send ``data``; what the server answers until it closes (it must, or answer, within GIVE_UP s)."""
    with socket.create_connection(("127.0.0.1", port), timeout=GIVE_UP) as s:
        try:
            s.sendall(data)
            if close_writing:
                s.shutdown(socket.SHUT_WR)
        except OSError:  # the server closed it before the rest arrived: refused already
            return b""
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except ConnectionResetError:
            pass
        except socket.timeout:
            raise AssertionError(f"the server neither answered nor closed within {GIVE_UP} s") from None
        return out


@pytest.mark.parametrize("seed", range(4))
def test_random_bytes_get_a_closed_connection(ports, seed):
    rnd = random.Random(seed)
    for name in ("nosasl", "plain"):
        for start in (b"", b"\x80\x01\x00\x01", b"\x01"):  # anything, a binary message, SASL's START
            send_and_drain(ports[name], start + rnd.randbytes(rnd.randrange(1, 20_000)))
    served(ports)


def test_truncated_messages_and_lengths_past_any_limit(ports):
    open_session_bytes = _open_session_message()
    for cut in (1, 5, len(open_session_bytes) // 2, len(open_session_bytes) - 1):
        send_and_drain(ports["nosasl"], open_session_bytes[:cut])
    # a method name of 2 GB, a SASL message of 4 GB, a frame of 2 GB: refused before anything is read
    send_and_drain(ports["nosasl"], b"\x80\x01\x00\x01" + struct.pack(">i", 2**31 - 1) + b"Open")
    send_and_drain(ports["plain"], b"\x01" + struct.pack(">I", 2**32 - 1) + b"PLAIN")
    sasl = b"\x01\x00\x00\x00\x05PLAIN" + b"\x05" + struct.pack(">I", 9) + b"\0alice\0pw"
    answer = send_and_drain(ports["plain"], sasl + struct.pack(">i", 2**31 - 1) + b"\x80\x01", close_writing=False)
    assert answer.startswith(b"\x05")  # the login itself completed; the frame then closed the connection
    served(ports)


def test_a_stalled_client_does_not_hold_up_others(ports, monkeypatch):
    """A connection that sent half a message and waits, or began SASL and stopped, keeps only its
    own thread; the SASL one is dropped after the handshake's time limit (30 s; 2 s here)."""
    monkeypatch.setattr(transport, "_HANDSHAKE_TIMEOUT", 2.0)
    half = socket.create_connection(("127.0.0.1", ports["nosasl"]))
    half.sendall(_open_session_message()[:20])
    stuck = socket.create_connection(("127.0.0.1", ports["plain"]))
    stuck.sendall(b"\x01\x00\x00\x00\x05PLAIN")  # START, then never the credentials
    try:
        served(ports)
    finally:
        half.close()
    stuck.settimeout(transport._HANDSHAKE_TIMEOUT + GIVE_UP)
    started = time.monotonic()
    assert stuck.recv(1) == b""  # closed by the server
    assert time.monotonic() - started <= transport._HANDSHAKE_TIMEOUT + GIVE_UP
    stuck.close()


def test_garbage_over_http_is_refused(ports):
    for body in (b"", b"\x00" * 100, random.Random(1).randbytes(5000), _open_session_message()[:10]):
        conn = http.client.HTTPConnection("127.0.0.1", ports["http"], timeout=GIVE_UP)
        conn.request("POST", "/cliservice", body=body, headers={"Content-Type": "application/x-thrift"})
        try:
            response = conn.getresponse()
            status, answer = response.status, response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            status = answer = None  # closed without an answer: refused as well
        if status == 200:  # a Thrift answer: then an exception ("unknown method", say), never a result
            _, kind, _ = TBinaryProtocol(TMemoryBuffer(answer)).readMessageBegin()
            assert kind == TMessageType.EXCEPTION
        conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", ports["http"], timeout=GIVE_UP)
    conn.request("POST", "/cliservice", body=b"x", headers={"Content-Length": str(2**40)})
    assert conn.getresponse().status == 413
    served(ports)


def _open_session_message() -> bytes:
    """OpenSession as a binary Thrift message."""
    buf = TMemoryBuffer()
    client = TCLIService.Client(TBinaryProtocol(buf))
    client._oprot = TBinaryProtocol(buf)
    client.send_OpenSession(ttypes.TOpenSessionReq(client_protocol=9))
    return buf.getvalue()
