"""paimon-sql-server's transports and logins: plain binary and SASL PLAIN on one port, password files,
http, TLS, as real clients speak them."""

import threading

import pytest
import thrift_sasl
from pyhive.hive import get_installed_sasl
from TCLIService import TCLIService, ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TTransport

from paimon_sql.server import transport
from paimon_sql.server.auth import Authenticator, add_user


class WhoAmI:
    """A handler that answers OpenSession with the connection's user as the session id."""

    def OpenSession(self, req):
        user = (transport.current().user or "-").encode()
        return ttypes.TOpenSessionResp(
            status=ttypes.TStatus(statusCode=ttypes.TStatusCode.SUCCESS_STATUS),
            serverProtocolVersion=req.client_protocol,
            sessionHandle=ttypes.TSessionHandle(ttypes.THandleIdentifier(guid=user, secret=b"s")))


@pytest.fixture(scope="module")
def password_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("auth") / "users")
    add_user(path, "alice", "s3cret pass")
    add_user(path, "bob", "other")
    return path


@pytest.fixture(scope="module")
def tiny_servers(password_file):
    """{auth mode: port} of in-process binary listeners over the WhoAmI handler."""
    servers = {mode: transport.listen(TCLIService.Processor(WhoAmI()), host="127.0.0.1", port=0,
                                      authenticator=Authenticator(mode, password_file))
               for mode in ("nosasl", "plain")}
    for s in servers.values():
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield {mode: s.port for mode, s in servers.items()}
    for s in servers.values():
        s.shutdown()


def thrift_client(port, user=None, password=None):
    """pyhive's own transport stack: TBufferedTransport for NOSASL, thrift_sasl PLAIN otherwise."""
    sock = TSocket.TSocket("127.0.0.1", port)
    if user is None:
        trans = TTransport.TBufferedTransport(sock)
    else:
        trans = thrift_sasl.TSaslClientTransport(
            lambda: get_installed_sasl(host="127.0.0.1", sasl_auth="PLAIN", username=user, password=password),
            "PLAIN", sock)
    trans.open()
    return TCLIService.Client(TBinaryProtocol(trans))


def session_user(client):
    return client.OpenSession(ttypes.TOpenSessionReq(client_protocol=9)).sessionHandle.sessionId.guid.decode()


def test_one_port_serves_plain_binary_and_sasl(tiny_servers):
    assert session_user(thrift_client(tiny_servers["nosasl"])) == "-"
    assert session_user(thrift_client(tiny_servers["nosasl"], "carol", "anything")) == "carol"


def test_password_file_logins(tiny_servers):
    port = tiny_servers["plain"]
    assert session_user(thrift_client(port, "alice", "s3cret pass")) == "alice"
    for user, password in [("alice", "wrong"), ("bob", "s3cret pass"), ("nobody", "x")]:
        with pytest.raises(TTransport.TTransportException) as refused:
            thrift_client(port, user, password)
        assert "Error validating the login" in str(refused.value)  # the same words whatever was wrong
        assert "alice" not in str(refused.value) and "nobody" not in str(refused.value)
    with pytest.raises(TApplicationException, match="requires SASL PLAIN"):
        session_user(thrift_client(port))


def test_unknown_method_keeps_the_connection(tiny_servers):
    client = thrift_client(tiny_servers["plain"], "bob", "other")
    with pytest.raises(TApplicationException):
        client.GetInfo(ttypes.TGetInfoReq())  # WhoAmI has no GetInfo
    assert session_user(client) == "bob"
