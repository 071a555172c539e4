"""paimon-sql-server's transports and logins: plain binary and SASL PLAIN on one port, password files,
http, TLS, as real clients speak them."""

import os
import socket
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import impala.dbapi
import pytest
from e2e.server_support import Relay, WhoAmI, beeline, beeline_rows, start_server, thrift_client
from pyhive import hive
from TCLIService import TCLIService, ttypes
from TCLIService.TCLIService import FetchResults_result
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport
from thrift.transport.TTransport import TMemoryBuffer

from paimon_sql.server import transport
from paimon_sql.server.auth import Authenticator, add_user
from paimon_sql.server.protocol import AcceleratedBinaryProtocol, fastbinary


@pytest.fixture(scope="module")
def password_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("auth") / "users")
    add_user(path, "alice", "s3cret-pw")
    add_user(path, "bob", "other")
    add_user(path, "flooded", "its-own-pw")  # test_a_flood_of_failed_sign_ins_backs_off only
    return path


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for localhost/127.0.0.1: (cert.pem, key.pem, Java truststore, its password)."""
    d = tmp_path_factory.mktemp("tls")
    cert, key, store = str(d / "cert.pem"), str(d / "key.pem"), str(d / "truststore.jks")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    subprocess.run(["keytool", "-importcert", "-noprompt", "-file", cert, "-keystore", store, "-storepass",
                    "changeit"], check=True, capture_output=True)
    return cert, key, store, "changeit"


@pytest.fixture(scope="module")
def tiny_servers(password_file, tls_files):
    """{name: port} of in-process binary listeners over the WhoAmI handler: nosasl, plain, plain over TLS."""
    tls = transport.tls_context(*tls_files[:2])
    handler = WhoAmI()
    servers = {name: transport.listen(TCLIService.Processor(handler), host="127.0.0.1", port=0,
                                      authenticator=Authenticator(mode, password_file), tls=context)
               for name, mode, context in [("nosasl", "nosasl", None), ("plain", "plain", None),
                                           ("plain+tls", "plain", tls)]}
    for s in servers.values():
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield {**{name: s.port for name, s in servers.items()}, "handler": handler}
    for s in servers.values():
        s.shutdown()


def session_user(client):
    return client.OpenSession(ttypes.TOpenSessionReq(client_protocol=9)).sessionHandle.sessionId.guid.decode()


def test_one_port_serves_plain_binary_and_sasl(tiny_servers):
    assert session_user(thrift_client(tiny_servers["nosasl"])) == "-"
    assert session_user(thrift_client(tiny_servers["nosasl"], "carol", "anything")) == "carol"


def test_password_file_logins(tiny_servers):
    port = tiny_servers["plain"]
    assert session_user(thrift_client(port, "alice", "s3cret-pw")) == "alice"
    for user, password in [("alice", "wrong"), ("bob", "s3cret-pw"), ("nobody", "x")]:
        with pytest.raises(TTransport.TTransportException) as refused:
            thrift_client(port, user, password)
        assert "Error validating the login" in str(refused.value)  # the same words whatever was wrong
        assert "alice" not in str(refused.value) and "nobody" not in str(refused.value)
    with pytest.raises(TApplicationException, match="requires SASL PLAIN"):
        session_user(thrift_client(port))


def test_handler_hears_of_closed_connections(tiny_servers):
    closed = tiny_servers["handler"].closed
    before = closed.count("bob")
    client = thrift_client(tiny_servers["plain"], "bob", "other")
    session_user(client)
    assert closed.count("bob") == before  # still open
    client._iprot.trans.close()
    deadline = time.monotonic() + 10
    while closed.count("bob") == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed.count("bob") == before + 1


def test_users_added_while_running_log_in(tiny_servers, password_file):
    with pytest.raises(TTransport.TTransportException):
        thrift_client(tiny_servers["plain"], "dave", "new-pw")
    add_user(password_file, "dave", "new-pw")
    assert session_user(thrift_client(tiny_servers["plain"], "dave", "new-pw")) == "dave"


def test_ipv6_hosts():
    for host, address in [("::1", "::1"), ("::", "127.0.0.1")]:  # "::" takes IPv4 clients too
        server = transport.listen(TCLIService.Processor(WhoAmI()), host=host, port=0,
                                  authenticator=Authenticator("none"))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            trans = TTransport.TBufferedTransport(TSocket.TSocket(address, server.port))
            trans.open()
            assert session_user(TCLIService.Client(TBinaryProtocol(trans))) == "-"
        finally:
            server.shutdown()


def test_tls_binary(tiny_servers, tls_files):
    port = tiny_servers["plain+tls"]
    assert session_user(thrift_client(port, "alice", "s3cret-pw", ca_cert=tls_files[0])) == "alice"
    with pytest.raises(TTransport.TTransportException):
        session_user(thrift_client(port, "alice", "s3cret-pw"))  # no TLS: the server does not answer


def test_unknown_method_keeps_the_connection(tiny_servers):
    client = thrift_client(tiny_servers["plain"], "bob", "other")
    protocol = client._oprot
    # impyla's CloseImpalaOperation: a method the server does not know, holding a binary handle
    protocol.writeMessageBegin("CloseImpalaOperation", TMessageType.CALL, 7)
    protocol.writeStructBegin("args")
    protocol.writeFieldBegin("req", TType.STRUCT, 1)
    protocol.writeStructBegin("req")
    protocol.writeFieldBegin("guid", TType.STRING, 1)
    protocol.writeBinary(b"\x8e\xff\x00 not utf-8")
    protocol.writeFieldEnd()
    protocol.writeFieldStop()
    protocol.writeStructEnd()
    protocol.writeFieldEnd()
    protocol.writeFieldStop()
    protocol.writeStructEnd()
    protocol.writeMessageEnd()
    protocol.trans.flush()
    name, kind, seqid = protocol.readMessageBegin()
    error = TApplicationException()
    error.read(protocol)
    protocol.readMessageEnd()
    assert (name, kind, seqid, error.type) == ("CloseImpalaOperation", TMessageType.EXCEPTION, 7,
                                               TApplicationException.UNKNOWN_METHOD)
    with pytest.raises(TApplicationException):
        client.GetInfo(ttypes.TGetInfoReq())  # known, but WhoAmI fails it
    assert session_user(client) == "bob"  # the same connection still serves


def test_accelerated_protocol_matches_thrifts_own_bytes():
    """pyhive's structs through fastbinary encode to the bytes of thrift's pure Python protocol and read back
    equal (nested structs, lists, maps, binary and null bitmaps)."""
    assert fastbinary is not None
    columns = [ttypes.TColumn(i64Val=ttypes.TI64Column(values=[1, 0, -(2 ** 62)], nulls=b"\x02")),
               ttypes.TColumn(stringVal=ttypes.TStringColumn(values=["a", "", "ü"], nulls=b"\x02")),
               ttypes.TColumn(binaryVal=ttypes.TBinaryColumn(values=[b"\xff\x00", b"", b"x"], nulls=b"\x00"))]
    result = FetchResults_result(success=ttypes.TFetchResultsResp(
        status=ttypes.TStatus(statusCode=0, infoMessages=["m"]), hasMoreRows=True,
        results=ttypes.TRowSet(startRowOffset=3, rows=[], columns=columns)))
    fast, plain = TMemoryBuffer(), TMemoryBuffer()
    result.write(AcceleratedBinaryProtocol(fast))
    result.write(TBinaryProtocol(plain))
    assert fast.getvalue() == plain.getvalue()
    back = FetchResults_result()
    back.read(AcceleratedBinaryProtocol(TMemoryBuffer(fast.getvalue())))
    assert back == result


def server_command(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "paimon_sql.server", *args], input=stdin, capture_output=True,
                          text=True, timeout=300)


def test_adduser_writes_salted_hashes(tmp_path):
    path = str(tmp_path / "users")
    for user, password in [("alice", "pw one"), ("bob", "pw one"), ("alice", "pw two")]:
        done = server_command("adduser", "--password-file", path, user, stdin=password + "\n")
        assert done.returncode == 0, done.stderr
    text = open(path).read()
    assert "pw one" not in text and "pw two" not in text
    assert os.stat(path).st_mode & 0o777 == 0o600
    lines = dict(line.split(":", 1) for line in text.splitlines())
    assert sorted(lines) == ["alice", "bob"]  # alice replaced, not added twice
    assert lines["alice"] != lines["bob"] and lines["bob"].startswith("scrypt$")
    authenticator = Authenticator("plain", path)
    assert authenticator.check("alice", "pw two") and authenticator.check("bob", "pw one")
    assert not authenticator.check("alice", "pw one") and not authenticator.check("carol", "pw one")
    bad = server_command("adduser", "--password-file", path, "eve:x", stdin="pw\n")
    assert bad.returncode == 1 and bad.stderr.startswith("Error: invalid user name")


def test_port_in_use_refused_before_spark_starts(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = server_command("--warehouse", str(tmp_path), "--port", str(port))
    assert done.returncode == 1
    assert done.stderr == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


@pytest.mark.parametrize("args, error", [
    (["--auth", "plain"], "--auth plain needs --password-file"),
    (["--auth", "plain", "--password-file", "missing"], "cannot read password file missing"),
    (["--ssl-cert", "cert.pem"], "--ssl-cert and --ssl-key go together"),
    (["--ssl-cert", "missing.pem", "--ssl-key", "missing.pem"], "cannot load --ssl-cert/--ssl-key"),
    (["--conf", "nokey"], "--conf expects key=value"),
    (["--idle-session-timeout", "soon"], "--idle-session-timeout: 'soon' is not a duration"),
    (["--idle-operation-timeout", "5w"], "--idle-operation-timeout: '5w' is not a duration"),
    (["--max-sessions-per-ip", "-1"], "--max-sessions-per-ip must be 0 (no limit) or more"),
    (["--max-planning-statements", "-2"], "--max-planning-statements must be 0 (no limit) or more"),
])
def test_bad_options_refused_before_spark_starts(tmp_path, args, error):
    done = server_command("--warehouse", str(tmp_path), *args)
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {error}") and len(done.stderr.splitlines()) == 1, done.stderr


# -- a real server and real clients ------------------------------------------------------------------------
# One server (one Spark) runs the SQL: paimon-sql-server --transport http --auth plain with TLS. The binary
# configurations are in-process listeners of the same transport code whose handler relays every call to
# that server, so each client's statements still run there, without a Spark per configuration.

ROWS = [(1, "a"), (2, None)]
SELECT = "SELECT id, name FROM shared ORDER BY id"


@pytest.fixture(scope="module")
def servers(tmp_path_factory, password_file, tls_files):
    """``https``: the real server (http, passwords, TLS); relaying to it: ``open`` (binary, --auth none)
    and ``plain`` (binary, passwords). Table ``shared`` is made through ``open`` with pyhive NOSASL."""
    cert, key = tls_files[:2]
    with start_server(str(tmp_path_factory.mktemp("warehouse")), "--transport", "http", "--auth", "plain",
                      "--password-file", password_file, "--ssl-cert", cert, "--ssl-key", key) as port:
        processor = TCLIService.Processor(Relay(port, user="bob", password="other", ca_cert=cert,
                                                http_path="cliservice"))
        listeners = [transport.listen(processor, host="127.0.0.1", port=0,
                                      authenticator=Authenticator(mode, password_file)) for mode in ("none", "plain")]
        for listener in listeners:
            threading.Thread(target=listener.serve_forever, daemon=True).start()
        cursor = hive.connect("127.0.0.1", listeners[0].port, auth="NOSASL").cursor()
        cursor.execute("CREATE TABLE shared (id INT, name STRING) WITH ('bucket' = '1', 'bucket-key' = 'id')")
        cursor.execute("INSERT INTO shared VALUES (1, 'a'), (2, NULL)")
        yield SimpleNamespace(open=listeners[0].port, plain=listeners[1].port, https=port)
        for listener in listeners:
            listener.shutdown()


def test_pyhive_nosasl_and_sasl_on_one_port(servers):
    cursor = hive.connect("127.0.0.1", servers.open, auth="NOSASL").cursor()
    cursor.execute(SELECT)
    assert cursor.fetchall() == ROWS
    cursor = hive.connect("127.0.0.1", servers.open, username="anyone").cursor()  # SASL PLAIN, any password
    cursor.execute("SELECT count(*) FROM shared")
    assert cursor.fetchall() == [(2,)]


def lake_script(table):
    """What the issue asks every client to run: CREATE ... WITH, INSERT, MERGE INTO, time travel,
    ``t$snapshots`` and a CALL; with the CSV rows beeline prints for it."""
    script = f"""
        CREATE TABLE {table} (id INT, amount DECIMAL(10,2), PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket' = '1');
        INSERT INTO {table} VALUES (1, 10.50), (2, 20.00);
        MERGE INTO {table} t USING (SELECT 2 AS id, 25.00 AS amount UNION ALL SELECT 3, 30.25) s ON t.id = s.id
            WHEN MATCHED THEN UPDATE SET amount = s.amount WHEN NOT MATCHED THEN INSERT *;
        SELECT id, amount FROM {table} ORDER BY id;
        SELECT id, amount FROM {table} VERSION AS OF 1 ORDER BY id;
        SELECT snapshot_id FROM `{table}$snapshots` ORDER BY snapshot_id;
        CALL sys.create_tag(`table` => 'default.{table}', tag => 'first', snapshot => 1);
        SELECT tag_name, snapshot_id FROM `{table}$tags`;
    """
    rows = [["id", "amount"], ["1", "10.50"], ["2", "25.00"], ["3", "30.25"],
            ["id", "amount"], ["1", "10.50"], ["2", "20.00"],
            ["snapshot_id"], ["1"], ["2"], ["result"], ["true"], ["tag_name", "snapshot_id"], ["first", "1"]]
    return " ".join(script.split()), rows


def test_beeline_nosasl_and_user(servers):
    script, expected = lake_script("by_beeline")
    done = beeline(servers.open, script)
    assert done.returncode == 0, done.stderr[-2000:]
    assert beeline_rows(done) == expected
    done = beeline(servers.open, SELECT, params="", user="someone", password="anything")  # SASL, any password
    assert done.returncode == 0, done.stderr[-2000:]
    assert beeline_rows(done) == [["id", "name"], ["1", "a"], ["2", "NULL"]]


def test_pyhive_plain(servers):
    cursor = hive.connect("127.0.0.1", servers.plain, auth="CUSTOM", username="alice",
                          password="s3cret-pw").cursor()
    cursor.execute(SELECT)
    assert cursor.fetchall() == ROWS
    with pytest.raises(TTransport.TTransportException, match="Error validating the login"):
        hive.connect("127.0.0.1", servers.plain, auth="CUSTOM", username="alice", password="wrong")
    with pytest.raises(TApplicationException, match="requires SASL PLAIN"):
        hive.connect("127.0.0.1", servers.plain, auth="NOSASL")


def test_a_flood_of_failed_sign_ins_backs_off(servers):
    """Eight wrong passwords in a row: the right one is refused too for a while (2 ** 3 s after the
    eighth, paimon_sql/server/backoff.py), with the same words; other users of the address sign in."""
    for _ in range(8):
        with pytest.raises(TTransport.TTransportException, match="Error validating the login"):
            hive.connect("127.0.0.1", servers.plain, auth="CUSTOM", username="flooded", password="guess")
    with pytest.raises(TTransport.TTransportException, match="Error validating the login"):
        hive.connect("127.0.0.1", servers.plain, auth="CUSTOM", username="flooded", password="its-own-pw")
    other = hive.connect("127.0.0.1", servers.plain, auth="CUSTOM", username="bob", password="other").cursor()
    other.execute(SELECT)
    assert other.fetchall() == ROWS


def test_impyla_plain_keeps_its_connection(servers):
    conn = impala.dbapi.connect("127.0.0.1", servers.plain, auth_mechanism="PLAIN", user="bob", password="other")
    for _ in range(2):  # closing a cursor calls CloseImpalaOperation, unknown here: the connection stays
        cursor = conn.cursor()
        cursor.execute(SELECT)
        assert cursor.fetchall() == ROWS
        cursor.close()
    with pytest.raises(Exception, match="Error validating the login"):
        impala.dbapi.connect("127.0.0.1", servers.plain, auth_mechanism="PLAIN", user="bob", password="x").cursor()


def test_beeline_password(servers):
    done = beeline(servers.plain, SELECT, params="", user="alice", password="s3cret-pw")
    assert done.returncode == 0, done.stderr[-2000:]
    assert beeline_rows(done)[1:] == [["1", "a"], ["2", "NULL"]]
    refused = beeline(servers.plain, SELECT, params="", user="alice", password="wrong")
    assert refused.returncode != 0 and "Error validating the login" in refused.stdout + refused.stderr
    no_login = beeline(servers.plain, SELECT)  # auth=noSasl
    assert no_login.returncode != 0 and "requires SASL PLAIN" in no_login.stdout + no_login.stderr


def test_http_transport_over_tls(servers, tls_files):
    cert, _, store, store_password = tls_files
    script, expected = lake_script("over_https")
    done = beeline(servers.https, script, user="alice", password="s3cret-pw",
                   params=f"transportMode=http;httpPath=cliservice;ssl=true;sslTrustStore={store};"
                          f"trustStorePassword={store_password}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert beeline_rows(done) == expected

    def impyla(password):
        return impala.dbapi.connect("localhost", servers.https, auth_mechanism="PLAIN", user="alice",
                                    password=password, use_http_transport=True, http_path="cliservice",
                                    use_ssl=True, ca_cert=cert).cursor()
    cursor = impyla("s3cret-pw")
    cursor.execute(SELECT)
    assert cursor.fetchall() == ROWS
    with pytest.raises(Exception, match="401"):
        impyla("wrong").execute("SELECT 1")


def test_pyhive_over_https(servers, tls_files, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", tls_files[0])  # pyhive trusts the default certificate authorities
    cursor = hive.connect("localhost", servers.https, scheme="https", username="alice", password="s3cret-pw",
                          ssl_cert="required").cursor()
    cursor.execute(SELECT)
    assert cursor.fetchall() == ROWS
    with pytest.raises(Exception):  # a 401, which pyhive's HTTP client reads as a broken message
        hive.connect("localhost", servers.https, scheme="https", username="alice", password="wrong",
                     ssl_cert="required")
