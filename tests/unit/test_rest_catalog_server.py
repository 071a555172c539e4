"""The REST catalog server's parts without Spark (tests/e2e/test_rest_server.py runs it in
paimon-sql-server with real clients): the token file, the server's refusals of its flags, and an
in-process server over a filesystem catalog for branches, tags, rollback, views, database
properties, partitions and the audit line of a refused sign-in.
"""

import base64
import json
import os
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import pyarrow as pa
import pytest

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import AuthError
from paimon_sql.schema.schema_change import SetOption
from paimon_sql.server import main, transport
from paimon_sql.server.audit import AuditLog
from paimon_sql.server.rest.errors import RestError
from paimon_sql.server.rest.grants import Grants
from paimon_sql.server.rest.server import RestServer
from paimon_sql.server.rest.state import RestState
from paimon_sql.server.auth import Authenticator, add_user
from paimon_sql.server.rest.sign_in import SIGN_IN_PATH, Tokens
from paimon_sql.server.rest.tokens import TokenFile


def test_token_file(tmp_path):
    path = tmp_path / "tokens"
    path.write_text("# comment\n\nt1 alice\n")
    tokens = TokenFile(str(path))
    assert tokens.user("Bearer t1") == "alice"
    assert tokens.user("Bearer t2") is None and tokens.user(None) is None and tokens.user("Basic t1") is None
    path.write_text("t2 bob\n")
    os.utime(path, ns=(1, 1))  # a change within the clock's tick is still seen: the size changed too
    assert (tokens.user("Bearer t1"), tokens.user("Bearer t2")) == (None, "bob")
    path.write_text("t2 bob extra\n")
    with pytest.raises(AuthError, match="line 1 is not '<token> <user>'"):
        tokens.user("Bearer t2")
    path.write_text("# none\n")
    with pytest.raises(AuthError, match="holds no"):
        TokenFile(str(path))


@pytest.mark.parametrize("args, message", [
    (["--rest-port", "8080"], "--rest-port needs --rest-token-file"),
    (["--rest-port", "8080", "--auth", "plain", "--password-file", "/nonexistent"], "password"),
    (["--rest-port", "8080", "--rest-token-file", "F", "--rest-token-lifetime", "0"], "--rest-token-lifetime"),
    (["--rest-token-file", "F"], "--rest-token-file needs --rest-port"),
    (["--rest-port", "8080", "--rest-token-file", "/nonexistent/tokens"], "cannot read --rest-token-file"),
])
def test_flags_refused_before_spark(args, message, capsys, tmp_path):
    assert main.main(["--warehouse", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_rest_port_refused(capsys):
    with pytest.raises(SystemExit) as e:
        main.main(["--rest-port", "http"])
    assert e.value.code == 2 and "not a port number" in capsys.readouterr().err


@pytest.fixture
def rest(tmp_path):
    """(call, catalog, audit path) of a server over a fresh warehouse, every user an admin."""
    (tmp_path / "tokens").write_text("tok alice\n")
    warehouse = str(tmp_path / "wh")
    catalog = load_catalog(warehouse)
    audit = AuditLog(str(tmp_path / "audit.jsonl"))
    server = RestServer(RestState(catalog, warehouse, {}, Grants(None, lambda user: frozenset()), warehouse),
                        Tokens(TokenFile(str(tmp_path / "tokens")), Authenticator("none")), audit, "127.0.0.1", 0)
    server.start()

    def call(method, path, body=None, token="tok", raw=None):
        if raw is not None:  # bytes as they are: the answer's first line
            with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
                s.sendall(raw)
                return s.makefile("rb").readline()
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/v1/paimon{path}",
                                         json.dumps(body).encode() if body is not None else None, method=method,
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())
    yield call, catalog, tmp_path / "audit.jsonl"
    server.shutdown()
    audit.close()


def _table(catalog, name="db.t", partitioned=False):
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([pa.field("id", pa.int64(), False), ("dt", pa.string())])
    t = catalog.create_table_from_arrow(name, schema, partition_keys=["dt"] if partitioned else [])
    for i in range(3):
        t.write_arrow(pa.table({"id": [i], "dt": [f"d{i % 2}"]}, schema=schema))
    return t


def test_tags_and_rollback(rest):
    call, catalog, _ = rest
    _table(catalog)
    assert call("POST", "/databases/db/tables/t/tags", {"tagName": "v2", "snapshotId": 2}) == (200, {})
    status, body = call("POST", "/databases/db/tables/t/tags", {"tagName": "v2", "snapshotId": 2})
    assert (status, body["resourceType"]) == (409, "TAG")
    status, body = call("POST", "/databases/db/tables/t/tags", {"tagName": "v9", "snapshotId": 9})
    assert (status, body["resourceType"], body["resourceName"]) == (404, "SNAPSHOT", "9")
    call("POST", "/databases/db/tables/t/tags", {"tagName": "w", "timeRetained": "1 d"})
    assert call("GET", "/databases/db/tables/t/tags?tagNamePrefix=v")[1] == {"tags": ["v2"], "nextPageToken": None}
    tag = call("GET", "/databases/db/tables/t/tags/w")[1]
    assert (tag["snapshot"]["id"], tag["tagTimeRetained"]) == (3, "PT86400S") and tag["tagCreateTime"] > 0
    assert call("GET", "/databases/db/tables/t/snapshots/v2")[1]["snapshot"]["id"] == 2
    status, body = call("POST", "/databases/db/tables/t/rollback",
                        {"instant": {"type": "snapshot", "snapshotId": 1}, "fromSnapshot": 2})
    assert status == 409 and "latest snapshot is 3" in body["message"]
    assert call("POST", "/databases/db/tables/t/rollback", {"instant": {"type": "tag", "tagName": "nope"}})[1][
        "resourceType"] == "TAG"
    assert call("POST", "/databases/db/tables/t/rollback", {"instant": {"type": "snapshot", "snapshotId": 7}})[1][
        "resourceName"] == "7"
    assert call("POST", "/databases/db/tables/t/rollback", {"instant": {"type": "tag", "tagName": "v2"},
                                                             "fromSnapshot": 3}) == (200, {})
    assert catalog.get_table("db.t").to_arrow().column("id").to_pylist() == [0, 1]
    assert call("DELETE", "/databases/db/tables/t/tags/v2") == (200, {})
    assert call("GET", "/databases/db/tables/t/tags/v2")[0] == 404


def test_branch_commits_go_to_the_branch(rest):
    call, catalog, _ = rest
    _table(catalog)
    assert call("POST", "/databases/db/tables/t/branches", {"branch": "b1", "fromTag": None}) == (200, {})
    assert call("POST", "/databases/db/tables/t/branches", {"branch": "b1"})[1]["resourceType"] == "BRANCH"
    assert call("GET", "/databases/db/tables/t/branches")[1] == {"branches": ["b1"]}
    branch = call("GET", "/databases/db/tables/t%24branch_b1")[1]
    assert branch["name"] == "t$branch_b1" and branch["id"] == call("GET", "/databases/db/tables/t")[1]["id"]
    assert call("GET", "/databases/db/tables/t%24branch_b1/snapshot")[1]["resourceType"] == "SNAPSHOT"
    snap = {"version": 3, "id": 1, "uuid": str(uuid.uuid4()), "schemaId": 0, "baseManifestList": "a",
            "deltaManifestList": "b", "commitUser": "u", "commitIdentifier": 1, "commitKind": "APPEND",
            "timeMillis": 1, "totalRecordCount": 5}
    status, body = call("POST", "/databases/db/tables/t%24branch_b1/commit",
                        {"tableId": branch["id"], "baseSnapshotUuid": None, "snapshot": snap})
    assert body == {"success": True}
    answer = call("GET", "/databases/db/tables/t%24branch_b1/snapshot")[1]["snapshot"]
    assert (answer["snapshot"], answer["recordCount"]) == (snap, 5)
    assert catalog.get_table("db.t").snapshot_manager.latest_id() == 3  # main untouched
    assert call("GET", "/databases/db/tables/t%24branch_b2")[1]["resourceType"] == "TABLE"
    assert call("DELETE", "/databases/db/tables/t/branches/b1") == (200, {})
    assert call("DELETE", "/databases/db/tables/t/branches/b1")[1]["resourceType"] == "BRANCH"


def test_views(rest):
    call, catalog, _ = rest
    catalog.create_database("db")
    view = {"fields": [{"id": 0, "name": "a", "type": "INT"}], "query": "SELECT 1 AS a", "dialects": {},
            "options": {}}
    assert call("POST", "/databases/db/views", {"identifier": {"database": "db", "object": "v"},
                                                "schema": view}) == (200, {})
    changes = [{"action": "addDialect", "dialect": "spark", "query": "SELECT 1 AS a"},
               {"action": "setOption", "key": "k", "value": "x"}, {"action": "updateComment", "comment": "c"}]
    assert call("POST", "/databases/db/views/v", {"changes": changes}) == (200, {})
    got = call("GET", "/databases/db/views/v")[1]["schema"]
    assert (got["dialects"], got["options"], got["comment"]) == ({"spark": "SELECT 1 AS a"}, {"k": "x"}, "c")
    status, body = call("POST", "/databases/db/views/v", {"changes": [changes[0]]})
    assert (status, body["resourceType"]) == (409, "DIALECT")
    assert call("POST", "/views/rename", {"source": {"database": "db", "object": "v"},
                                          "destination": {"database": "db", "object": "w"}}) == (200, {})
    assert call("GET", "/databases/db/views")[1] == {"views": ["w"], "nextPageToken": None}
    assert call("DELETE", "/databases/db/views/w") == (200, {})
    assert call("GET", "/databases/db/views/w")[1]["resourceType"] == "VIEW"


def test_database_properties_and_partitions(rest):
    call, catalog, _ = rest
    _table(catalog, partitioned=True)
    assert call("POST", "/databases/db", {"removals": ["gone"], "updates": {"owner": "ops"}})[1] == {
        "removed": [], "updated": ["owner"], "missing": ["gone"]}
    assert call("GET", "/databases/db")[1]["options"] == {"owner": "ops"}
    assert call("POST", "/databases/db", {"removals": ["owner"]})[0] == 501
    parts = call("GET", "/databases/db/tables/t/partitions")[1]
    assert [(p["spec"], p["recordCount"], p["fileCount"], p["createdBy"]) for p in parts["partitions"]] == [
        ({"dt": "d0"}, 2, 2, "ops"), ({"dt": "d1"}, 1, 1, "ops")]
    assert call("POST", "/databases/db/tables/t/partitions/mark", {"specs": [{"dt": "d1"}]}) == (200, {})
    table = catalog.get_table("db.t")
    assert os.path.exists(f"{table.path}/dt=d1/_SUCCESS") and not os.path.exists(f"{table.path}/dt=d0/_SUCCESS")
    status, answer = call("POST", "/databases/db/tables/t/partitions/mark", {"specs": [{"other": "x"}]})
    assert status == 400 and "every partition column (dt)" in answer["message"]
    table.schema_manager.commit_changes([SetOption("partition.mark-done-action", "done-partition")])
    status, answer = call("POST", "/databases/db/tables/t/partitions/mark", {"specs": [{"dt": "d0"}]})
    assert status == 501 and not os.path.exists(f"{table.path}/dt=d0/_SUCCESS")
    assert call("POST", "/databases/db/tables/t/partitions/drop", {"partitionSpecs": []})[0] == 501
    assert call("GET", "/databases/db/tables/t/token")[0] == 501


def test_refused_sign_in_is_audited(rest):
    call, _, audit = rest
    status, body = call("GET", "/databases", token="wrong")
    assert (status, body["code"]) == (401, 401)
    line = json.loads(audit.read_text().splitlines()[-1])
    assert (line["user"], line["kind"], line["statement"], line["status"], line["outcome"]) == (
        None, "rest", "GET /v1/paimon/databases", 401, "error")


def test_garbage_gets_an_answer_and_the_server_goes_on(rest):
    call, _, _ = rest
    assert b'"code": 400' in call(None, None, raw=b"\x00\xff garbage\r\n\r\n")  # an HTTP/0.9 answer: no status line
    assert b" 501 " in call(None, None, raw=b"PATCH /v1/config HTTP/1.1\r\nHost: x\r\n\r\n")
    assert b" 400 " in call(None, None, raw=b"POST /v1/paimon/databases HTTP/1.1\r\nHost: x\r\n"
                                            b"Authorization: Bearer tok\r\nContent-Length: zz\r\n\r\n")
    assert call("GET", "/databases")[0] == 200


def _signed_in_server(tmp_path, lifetime: float, tls=None):
    """A server whose users sign in with a password file (ana / secret): (server, audit path)."""
    passwords = tmp_path / "passwords"
    add_user(str(passwords), "ana", "secret")
    warehouse = str(tmp_path / "wh-sign-in")
    catalog = load_catalog(warehouse)
    audit = AuditLog(str(tmp_path / "sign-in-audit.jsonl"))
    server = RestServer(RestState(catalog, warehouse, {}, Grants(None, lambda user: frozenset()), warehouse),
                        Tokens(None, Authenticator("plain", str(passwords)), lifetime), audit, "127.0.0.1", 0, tls)
    server.start()
    return server, tmp_path / "sign-in-audit.jsonl"


def _request(url, method="GET", headers=None, context=None):
    request = urllib.request.Request(url, b"" if method == "POST" else None, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_tokens_issued_at_sign_in_act_as_the_user_until_they_expire(tmp_path):
    server, audit = _signed_in_server(tmp_path, lifetime=1.5)
    base = f"http://127.0.0.1:{server.port}"
    try:
        status, issued = _request(base + SIGN_IN_PATH, "POST", _basic("ana", "secret"))
        assert status == 200 and issued["user"] == "ana" and issued["expiresAtMillis"] > time.time() * 1000
        bearer = {"Authorization": f"Bearer {issued['token']}"}
        assert _request(base + "/v1/paimon/databases", headers=bearer)[0] == 200
        line = json.loads(audit.read_text().splitlines()[0])
        assert (line["user"], line["statement"], line["status"]) == ("ana", f"POST {SIGN_IN_PATH}", 200)
        assert issued["token"] not in audit.read_text()
        assert _request(base + SIGN_IN_PATH, "POST", _basic("ana", "wrong"))[0] == 401
        assert _request(base + SIGN_IN_PATH, "POST", {"Authorization": "Basic !!"})[0] == 401
        time.sleep(1.6)
        status, answer = _request(base + "/v1/paimon/databases", headers=bearer)
        assert status == 401 and "unknown bearer token" in answer["message"]
    finally:
        server.shutdown()


def test_sign_in_is_off_without_passwords():
    with pytest.raises(RestError, match="sign-in is off") as e:
        Tokens(None, Authenticator("none")).sign_in("Basic " + base64.b64encode(b"ana:x").decode(), "127.0.0.1")
    assert e.value.code == 404


def test_https_with_the_servers_certificate(tmp_path):
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days",
                    "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"], check=True,
                   capture_output=True)
    server, _ = _signed_in_server(tmp_path, lifetime=60, tls=transport.tls_context(cert, key))
    try:
        assert server.scheme == "https"
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as plain:  # no TLS: dropped, server on
            plain.sendall(b"GET /v1/config HTTP/1.1\r\n\r\n")
            try:
                answer = plain.recv(100)
            except ConnectionResetError:
                answer = b""
            assert answer == b""
        trusted = ssl.create_default_context(cafile=cert)
        status, issued = _request(f"https://127.0.0.1:{server.port}{SIGN_IN_PATH}", "POST", _basic("ana", "secret"),
                                  trusted)
        assert status == 200
        assert _request(f"https://127.0.0.1:{server.port}/v1/paimon/databases",
                        headers={"Authorization": f"Bearer {issued['token']}"}, context=trusted)[0] == 200
    finally:
        server.shutdown()
