"""``--auth ldap`` against a real OpenLDAP (tests/e2e/ldap_support.py): the directory client in this process
(DN patterns, search-then-bind, filters, groups, TLS, the cache, a directory that is down), options refused
before Spark starts, and two real servers signed in to by pyhive, impyla, beeline and SQLAlchemy."""

import socket
import subprocess
import sys
from types import SimpleNamespace

import impala.dbapi
import pytest
import sqlalchemy
from pyhive import hive

from e2e.ldap_support import slapd
from e2e.server_support import beeline, beeline_rows, start_server
from paimon_sql.server import auth, ldap
from paimon_sql.server.auth import Authenticator
from paimon_sql.server.ldap import LdapSettings
from paimon_sql.server.main import _args

REFUSED = "Error validating the login"  # what a client hears, whatever went wrong


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    with slapd(tmp_path_factory.mktemp("slapd")) as d:
        yield d


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def by_pattern(d, **changes) -> Authenticator:
    """Bind as uid=<user>,ou=people over ldaps://; groups found under ou=groups by the group DN pattern."""
    s = dict(urls=(d.ldaps_url,), user_dn_patterns=(f"uid=%s,{d.people_dn}",), ca_file=d.ca_file,
             group_dn_patterns=(f"cn={{group}},{d.groups_dn}",))
    return Authenticator("ldap", ldap=LdapSettings(**{**s, **changes}))


def by_search(d, **changes) -> Authenticator:
    """Search uid=<user> under the base DN as cn=reader over ldap:// with StartTLS, then bind as what it found."""
    s = dict(urls=(d.ldap_url,), base_dn=d.base_dn, bind_dn=d.reader_dn, bind_password="reader-pw",
             starttls=True, ca_file=d.ca_file)
    return Authenticator("ldap", ldap=LdapSettings(**{**s, **changes}))


def test_dn_pattern_sign_in_and_groups(directory):
    a = by_pattern(directory)
    assert a.requires_password and a.groups("alice") == frozenset()  # not signed in yet
    assert a.check("alice", "alice-pw") and a.groups("alice") == {"analysts", "staff"}
    assert a.check("bob", "bob-pw") and a.groups("bob") == {"staff"}
    assert a.check("carol", "carol-pw") and a.groups("carol") == frozenset()
    assert a.check("dan, jr", "dan-pw") and a.groups("dan, jr") == {"analysts"}  # a comma, escaped in the DN
    for user, password in [("alice", "bob-pw"), ("nobody", "x"), ("alice", ""), ("", "x"),
                           ("alice,ou=people", "alice-pw"), ("dan, jr", "")]:
        assert not a.check(user, password), (user, password)
    assert a.groups("nobody") == frozenset() and Authenticator("none").groups("alice") == frozenset()


def test_search_then_bind_with_filters(directory):
    a = by_search(directory)
    assert a.check("alice", "alice-pw") and a.groups("alice") == {"analysts", "staff"}  # under the base DN
    assert a.check("dan, jr", "dan-pw")
    for user in ["*", "alice)(uid=*", "a*"]:  # a filter's special characters are escaped: no wildcard
        assert not a.check(user, "alice-pw"), user
    assert not a.check("alice", "wrong")
    # without the reader, the search runs anonymously, which this directory refuses: nobody is found
    assert not by_search(directory, bind_dn=None, bind_password=None).check("alice", "alice-pw")
    filtered = by_search(directory, user_filter=frozenset({"alice", "carol"}), group_filter=frozenset({"staff"}))
    assert filtered.check("alice", "alice-pw")
    assert not filtered.check("bob", "bob-pw")  # in staff, not among the users
    assert not filtered.check("carol", "carol-pw")  # among the users, in no group


def test_certificates_are_verified(directory):
    assert not by_pattern(directory, ca_file=None).check("alice", "alice-pw")  # the system CAs do not know it
    assert not by_search(directory, ca_file=None).check("alice", "alice-pw")


def test_urls_tried_in_order_and_a_directory_down(directory, monkeypatch):
    dead = f"ldap://127.0.0.1:{_closed_port()}"
    a = by_pattern(directory, urls=(dead, directory.ldaps_url))
    assert a.check("alice", "alice-pw")  # the first URL does not answer: the second does
    directory.stop()
    try:
        assert a.check("alice", "alice-pw")  # remembered
        assert not a.check("bob", "bob-pw")  # not remembered: the directory must answer
    finally:
        directory.start()
    assert a.check("bob", "bob-pw")  # the directory back: asked again at once
    monkeypatch.setattr(auth, "LDAP_CACHE_SECONDS", 0.0)
    assert a.check("carol", "carol-pw")  # remembered for no time
    directory.stop()
    try:
        assert not a.check("carol", "carol-pw")  # a lapsed answer is asked for again
    finally:
        directory.start()


def test_hiveserver2_keys_and_flags(tmp_path):
    key = "hive.server2.authentication.ldap."
    conf = {f"{key}url": "ldap://a ldap://b", f"{key}baseDN": "dc=conf", f"{key}guidKey": "sAMAccountName",
            f"{key}binddn": "cn=r", f"{key}bindpw": "from-conf", f"{key}userFilter": "Alice, bob",
            f"{key}groupFilter": "Staff", f"{key}groupDNPattern": "cn=%s,ou=g:cn={group},ou=h",
            f"{key}groupMembershipKey": "memberUid", f"{key}groupClassKey": "posixGroup",
            "spark.executor.memory": "1g"}
    password_file = tmp_path / "pw"
    password_file.write_text("from-file\n")
    args = _args(["--auth", "ldap", "--ldap-base-dn", "dc=flag", "--ldap-bind-password-file", str(password_file),
                  "--ldap-user-dn-pattern", "uid=%s,ou=p:uid={user},ou=q"])
    s = ldap.settings(args, conf)
    assert conf == {"spark.executor.memory": "1g"}  # the LDAP keys are the server's, not Spark's
    assert s == LdapSettings(urls=("ldap://a", "ldap://b"), user_dn_patterns=("uid=%s,ou=p", "uid={user},ou=q"),
                             base_dn="dc=flag", guid_key="sAMAccountName", bind_dn="cn=r",
                             bind_password="from-file", user_filter=frozenset({"alice", "bob"}),
                             group_filter=frozenset({"staff"}), group_dn_patterns=("cn=%s,ou=g", "cn={group},ou=h"),
                             group_membership_key="memberUid", group_class_key="posixGroup")
    assert ldap.settings(_args([]), {}) is None


def server_command(*args):
    return subprocess.run([sys.executable, "-m", "paimon_sql.server", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("args, error", [
    (["--auth", "ldap", "--ldap-user-dn-pattern", "uid=%s,dc=x"], "--auth ldap needs --ldap-url"),
    (["--auth", "ldap", "--ldap-url", "ldap://h"], "--auth ldap needs --ldap-user-dn-pattern or --ldap-base-dn"),
    (["--auth", "ldap", "--ldap-url", "http://h", "--ldap-base-dn", "dc=x"], "--ldap-url 'http://h' is not"),
    (["--auth", "ldap", "--ldap-url", "ldaps://h", "--ldap-base-dn", "dc=x", "--ldap-starttls"],
     "--ldap-starttls is for ldap:// URLs"),
    (["--auth", "ldap", "--ldap-url", "ldap://h", "--ldap-user-dn-pattern", "uid=alice,dc=x"],
     "--ldap-user-dn-pattern 'uid=alice,dc=x' has no %s"),
    (["--auth", "ldap", "--ldap-url", "ldap://h", "--ldap-user-dn-pattern", "uid=%s,dc=x",
      "--ldap-group-filter", "staff"], "--ldap-group-filter needs --ldap-group-dn-pattern or --ldap-base-dn"),
    (["--auth", "ldap", "--ldap-url", "ldap://h", "--ldap-base-dn", "dc=x", "--ldap-bind-dn", "cn=r"],
     "--ldap-bind-dn and --ldap-bind-password-file go together"),
    (["--auth", "ldap", "--ldap-url", "ldap://h", "--ldap-base-dn", "dc=x", "--ldap-bind-dn", "cn=r",
      "--ldap-bind-password-file", "missing"], "cannot read --ldap-bind-password-file missing"),
    (["--auth", "ldap", "--ldap-url", "ldaps://h", "--ldap-base-dn", "dc=x", "--ldap-ca-file", "missing.pem"],
     "cannot load --ldap-ca-file missing.pem"),
    (["--auth", "ldap", "--conf", "hive.server2.authentication.ldap.Domain=x"],
     "--conf hive.server2.authentication.ldap.Domain is not supported"),
    (["--ldap-url", "ldap://h"], "--ldap-* flags and --conf hive.server2.authentication.ldap.* keys need --auth ldap"),
])
def test_bad_options_refused_before_spark_starts(tmp_path, args, error):
    done = server_command("--warehouse", str(tmp_path), *args)
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {error}") and len(done.stderr.splitlines()) == 1, done.stderr


# -- real servers and real clients -------------------------------------------------------------------------

WHO = "SELECT current_user()"


@pytest.fixture(scope="module")
def servers(tmp_path_factory, directory):
    """``pattern``: binary, DN pattern over ldaps:// (after a URL nobody answers), settings as flags.
    ``search``: http, base DN searched as cn=reader over StartTLS, users alice and carol, group staff, settings
    partly as HiveServer2's --conf keys."""
    d = directory
    key = "hive.server2.authentication.ldap."
    with start_server(str(tmp_path_factory.mktemp("warehouse")), "--auth", "ldap",
                      "--ldap-url", f"ldap://127.0.0.1:{_closed_port()} {d.ldaps_url}",
                      "--ldap-user-dn-pattern", f"uid={{user}},{d.people_dn}",
                      "--ldap-ca-file", d.ca_file) as pattern, \
            start_server(str(tmp_path_factory.mktemp("warehouse")), "--transport", "http", "--auth", "ldap",
                         "--conf", f"{key}url={d.ldap_url}", "--ldap-starttls", "--ldap-ca-file", d.ca_file,
                         "--conf", f"{key}baseDN=ou=nowhere,{d.base_dn}", "--ldap-base-dn", d.base_dn,  # flag wins
                         "--ldap-bind-dn", d.reader_dn, "--ldap-bind-password-file", d.reader_password_file,
                         "--conf", f"{key}userFilter=alice,carol", "--ldap-group-filter", "staff") as search:
        yield SimpleNamespace(pattern=pattern, search=search)


def who(cursor) -> str:
    cursor.execute(WHO)
    return cursor.fetchall()[0][0]


def test_pyhive(servers):
    assert who(hive.connect("127.0.0.1", servers.pattern, auth="LDAP", username="alice",
                            password="alice-pw").cursor()) == "alice"
    for user, password in [("alice", "wrong"), ("nobody", "x"), ("bob", "")]:
        with pytest.raises(Exception, match=REFUSED) as refused:
            hive.connect("127.0.0.1", servers.pattern, auth="LDAP", username=user, password=password)
        assert str(refused.value).count("\n") == 0 and "ldap" not in str(refused.value).lower()
    over_http = hive.connect("127.0.0.1", servers.search, scheme="http", username="alice", password="alice-pw")
    assert who(over_http.cursor()) == "alice"
    for user, password in [("alice", "wrong"), ("bob", "bob-pw"), ("carol", "carol-pw")]:
        with pytest.raises(Exception):  # a 401, which pyhive's HTTP client reads as a broken message
            hive.connect("127.0.0.1", servers.search, scheme="http", username=user, password=password)


def test_impyla(servers):
    def connect(port, user, password, **http):
        return impala.dbapi.connect("127.0.0.1", port, auth_mechanism="LDAP", user=user, password=password,
                                    **http).cursor()
    assert who(connect(servers.pattern, "dan, jr", "dan-pw")) == "dan, jr"
    with pytest.raises(Exception, match=REFUSED):
        connect(servers.pattern, "dan, jr", "alice-pw")
    http = dict(use_http_transport=True, http_path="cliservice")
    assert who(connect(servers.search, "alice", "alice-pw", **http)) == "alice"
    with pytest.raises(Exception, match="401"):
        who(connect(servers.search, "carol", "carol-pw", **http))  # in the user filter, not in group staff


def test_beeline(servers):
    done = beeline(servers.pattern, WHO, params="", user="bob", password="bob-pw")
    assert done.returncode == 0, done.stderr[-2000:]
    assert beeline_rows(done)[1:] == [["bob"]]
    refused = beeline(servers.pattern, WHO, params="", user="bob", password="alice-pw")
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and REFUSED in out and "Invalid credentials" not in out
    done = beeline(servers.search, WHO, params="transportMode=http;httpPath=cliservice", user="alice",
                   password="alice-pw")
    assert done.returncode == 0, done.stderr[-2000:]
    assert beeline_rows(done)[1:] == [["alice"]]
    refused = beeline(servers.search, WHO, params="transportMode=http;httpPath=cliservice", user="bob",
                      password="bob-pw")  # in group staff, not in the user filter
    assert refused.returncode != 0 and "401" in refused.stdout + refused.stderr


def test_sqlalchemy(servers):
    engine = sqlalchemy.create_engine(f"hive://carol:carol-pw@127.0.0.1:{servers.pattern}/default?auth=LDAP")
    with engine.connect() as conn:
        assert conn.execute(sqlalchemy.text(WHO)).scalar() == "carol"
    wrong = sqlalchemy.create_engine(f"hive://carol:nope@127.0.0.1:{servers.pattern}/default?auth=LDAP")
    with pytest.raises(Exception, match=REFUSED):
        wrong.connect()


def test_directory_down_is_one_line_to_the_client(servers, directory):
    def erin():  # the one user no other test signs in: never remembered by the server
        return hive.connect("127.0.0.1", servers.pattern, auth="LDAP", username="erin", password="erin-pw")
    directory.stop()
    try:
        with pytest.raises(Exception, match=REFUSED) as refused:
            erin()
        with pytest.raises(Exception, match=REFUSED) as impyla_refused:
            impala.dbapi.connect("127.0.0.1", servers.pattern, auth_mechanism="LDAP", user="erin",
                                 password="erin-pw").cursor()
    finally:
        directory.start()
    for message in (str(refused.value), str(impyla_refused.value)):
        assert "\n" not in message and "ldap" not in message.lower() and directory.ldaps_url not in message
    assert who(erin().cursor()) == "erin"  # the same sign-in, with the directory back
