"""Security (issue 19): a hostile user with SQL, procedures, the shell and the server cannot reach
files outside the warehouse, cannot read credentials back, and the server stays on this machine
unless told otherwise (docs/security.md).

Paths: every name (database, table, tag, branch, consumer id), partition value, option and
procedure argument that could address a file is tried with values that would leave the warehouse;
the ``outside`` fixture (tests/conftest.py) then proves the tree beside the warehouse is
byte-identical and that no path outside it was opened, listed, written or deleted. Object tables,
which once listed a declared ``object-location``, list their own directory since Paimon 2.0 (checked too).

Credentials: a table and a catalog carrying every kind of secret option; every listing of options
(system tables, SHOW, DESCRIBE), every error about a statement that writes a secret, Python's
logging, the shell's output and the server's answers and stderr must not contain any of them.
"""

import ipaddress
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest
from pyhive import hive
from spark.conftest import release, rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

import paimon_sql
from paimon_sql.exceptions import PaimonError
from paimon_sql.options.core_options import MASK
from paimon_sql.procedures import PROCEDURES
from paimon_sql.server.main import exposure_warning
from reliability.conftest import QUICK_JVM, record

# One value per kind of credential; each must never be shown. The keys are the spellings of
# Paimon's, Hadoop's and the catalogs' options (docs/security.md lists the rule).
SECRETS = {
    "s3.access-key": "AKIAS3ACCESS0001", "s3.secret-key": "s3-secret-0002", "s3.session.token": "s3-token-0003",
    "fs.s3a.access.key": "AKIAS3A00004", "fs.s3a.secret.key": "s3a-secret-0005",
    "fs.s3a.session.token": "s3a-token-0006", "jdbc.password": "jdbc-pass-0007",
    "hive.metastore.password": "hms-pass-0008", "javax.jdo.option.ConnectionPassword": "jdo-pass-0009",
    "fs.azure.account.key.acct.dfs.core.windows.net": "azure-key-0010",
    "fs.azure.sas.cont.acct.blob.core.windows.net": "azure-sas-0011", "fs.azure.sas.fixed.token": "sas-fixed-0012",
    "fs.gs.auth.service.account.private.key": "gcs-private-0013",
    "fs.gs.auth.service.account.private.key.id": "gcs-keyid-0014", "fs.gs.auth.client.secret": "gcs-secret-0015",
    "fs.oss.accessKeySecret": "oss-secret-0016", "fs.oss.securityToken": "oss-token-0017",
    "header.Authorization": "Bearer rest-token-0018", "token": "rest-token-0019",
}
# credentials inside other values: a JDBC uri's password parameter, an endpoint's user info
URI_SECRETS = {"uri": ("jdbc:postgresql://db.example/paimon?user=u&password=uri-pass-0020", "uri-pass-0020"),
               "s3.endpoint": ("http://user:endpoint-pass-0021@127.0.0.1:9", "endpoint-pass-0021")}
VALUES = list(SECRETS.values()) + [v for _, v in URI_SECRETS.values()]
SHOW_CATALOG_OPTIONS = {"catalog-options-table.enabled": "true"}  # sys.catalog_options served, as Paimon's option asks
ESCAPE = "../../other/sec.db/secret"  # from <warehouse>/db.db/: the table beside the warehouse


def _options_clause() -> str:
    pairs = {**SECRETS, **{k: v for k, (v, _) in URI_SECRETS.items()}}
    return ", ".join(f"'{k}' = '{v}'" for k, v in pairs.items())


def _leaks(text: str) -> list:
    return [v for v in VALUES if v in text]


def _refused(session, text: str) -> str:
    """Run ``text``, which must fail with one line of ours; the message."""
    with pytest.raises(PaimonError) as err:
        session.sql(text).collect()
        pytest.fail(f"not refused: {text}")
    assert "\n" not in str(err.value), text
    return str(err.value)


# -- paths --------------------------------------------------------------------------------------

@pytest.fixture
def tables(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.r (id BIGINT)")
    session.sql("INSERT INTO db.r VALUES (1)")
    session.sql("ALTER TABLE db.r CREATE TAG mine")
    session.sql("CALL sys.create_branch('db.r', 'b0')")
    session.sql("CREATE TABLE db.p (id INT, dt STRING) PARTITIONED BY (dt)")
    return session


HOSTILE_VALUES = ["../../x", "a/b", "%2F", "..", ".", "a\\b", "a\x00b", "../../../planted", "/abs/planted",
                  "file:/planted", "s3://b/planted"]


def test_partition_values_stay_one_directory_of_their_table(tables, outside):
    """Any partition value (separators, '..', escapes, NUL, URIs) is escaped into one ``k=v``
    directory of its table, through INSERT, INSERT OVERWRITE ... PARTITION, CTAS and a primary-key
    table, reads back as written, and partition statements with them touch nothing outside."""
    session = tables
    values = ", ".join(f"({i}, '{v}')".replace("\\", "\\\\").replace("\x00", "' || char(0) || '")
                       for i, v in enumerate(HOSTILE_VALUES))
    session.sql(f"INSERT INTO db.p VALUES {values}")
    session.sql("INSERT OVERWRITE db.p PARTITION (dt = '../../../planted') VALUES (100)")
    session.sql("CREATE TABLE db.pk (id INT, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1')")
    session.sql("INSERT INTO db.pk VALUES (1, '../../../planted'), (2, 'a/b')")
    session.sql("CREATE TABLE db.ctas PARTITIONED BY (dt) AS SELECT 1 AS id, '../../../planted' AS dt")
    session.sql("CALL sys.mark_partition_done('db.p', 'dt=../../../planted')")
    attempts = len(HOSTILE_VALUES) + 5
    for text in ["ALTER TABLE db.p DROP PARTITION (dt = '../../../other')",
                 "ALTER TABLE db.p ADD PARTITION (dt = '../../../planted')",
                 "ALTER TABLE db.p PARTITION (dt = 'a/b') SET LOCATION '/planted'"]:
        _refused(session, text)
        attempts += 1
    expected = sorted([(i, v) for i, v in enumerate(HOSTILE_VALUES) if v != "../../../planted"] +
                      [(100, "../../../planted")])
    assert rows(session, "SELECT id, dt FROM db.p ORDER BY id") == expected
    assert rows(session, "SELECT dt FROM db.pk ORDER BY id") == [("../../../planted",), ("a/b",)]
    for name in ["p", "pk", "ctas"]:
        root = os.path.join(session.warehouse, "db.db", name)
        partitions = [d for d in os.listdir(root) if d.startswith("dt=")]
        assert partitions and all(os.path.dirname(os.path.normpath(os.path.join(root, d))) == root
                                  for d in partitions)
    outside.assert_untouched()
    record("security", check="partition values", attempts=attempts, files_outside=0)


ATTACKS = [
    # locations and paths as options, in every place options are given
    "CREATE TABLE db.q (id INT) LOCATION '{out}'",
    "CREATE TABLE db.q LOCATION '{out}' AS SELECT 1 AS id",
    "CREATE TABLE db.q LIKE db.r LOCATION '{out}'",
    "CREATE TABLE db.q (id INT) WITH ('path' = '{out}')",
    "CREATE TABLE db.q (id INT) TBLPROPERTIES ('path' = '{out}')",
    "CREATE TABLE db.q (id INT) TBLPROPERTIES ('data-file.external-paths' = 'file://{out}', "
    "'data-file.external-paths.strategy' = 'round-robin')",
    "CREATE TABLE db.q (id INT) WITH ('type' = 'format-table', 'file.format' = 'csv', 'path' = '{out}')",
    "CREATE TABLE db.q (id INT) WITH ('type' = 'object-table', 'object-location' = '{out}', 'path' = '{out}')",
    "CREATE DATABASE d2 LOCATION '{out}'",
    "ALTER TABLE db.r SET LOCATION '{out}'",
    "ALTER TABLE db.r SET TBLPROPERTIES ('path' = '{out}')",
    "ALTER TABLE db.r SET TBLPROPERTIES ('data-file.external-paths' = 'file://{out}', "
    "'data-file.external-paths.strategy' = 'round-robin')",
    "INSERT INTO db.r /*+ OPTIONS('path' = '{out}') */ VALUES (2)",
    "INSERT INTO db.r /*+ OPTIONS('data-file.external-paths' = 'file://{out}', "
    "'data-file.external-paths.strategy' = 'round-robin') */ VALUES (2)",
    "SELECT * FROM db.r /*+ OPTIONS('branch' = '{steal_branch}') */",
    "INSERT INTO db.r /*+ OPTIONS('branch' = '{plant}') */ VALUES (3)",
    "SELECT * FROM db.r /*+ OPTIONS('scan.tag-name' = '{steal_tag}') */",
    "SELECT * FROM db.r VERSION AS OF '{steal_tag}'",
    "SELECT * FROM `../other/sec`.secret",
    "SELECT * FROM db.`{escape}`",
    "SELECT * FROM db.`{escape}$snapshots`",
    "SELECT * FROM db.`r$branch_{steal_branch}`",
    "CREATE DATABASE `../evil`",
    "DROP DATABASE `../other/sec` CASCADE",
    "DROP TABLE db.`{escape}`",
    "ALTER TABLE db.r RENAME TO db.`../../../planted`",
    "CREATE TABLE db.`../../../planted` (id INT)",
    "CREATE TABLE db.`a\x00b` (id INT)",
    # procedure arguments that are not names but could be taken for paths
    "CALL sys.rollback(table => 'db.r', version => '{steal_tag}')",
    "CALL sys.remove_orphan_files(table => 'db.r', older_than => '../../../planted')",
    "CALL sys.expire_snapshots(table => 'db.r', older_than => '../..')",
    "CALL sys.expire_tags(table => 'db.r', older_than => '{out}')",
    "CALL sys.compact(table => 'db.r', options => 'path={out}')",
    "CALL sys.expire_snapshots(table => 'db.r', options => 'data-file.external-paths=file://{out}')",
    "CREATE TABLE db.`%2F..%2F..%2Fplanted` (id INT)",  # a legal name: must land inside (checked below)
]
# accepted (options and patterns that only select among the warehouse's own things), never escaping
HARMLESS = ["SELECT * FROM db.r /*+ OPTIONS('consumer-id' = '{plant}') */",
            "CALL sys.compact_database(including_databases => '../other/sec')",
            "CALL sys.clear_consumers(table => 'db.r', includingConsumers => '../.*')",
            "CALL sys.compact(table => 'db.r', options => 'scan.tag-name={steal_tag}')"]  # compaction reads no tag


def _procedure_attacks() -> list:
    """Every procedure argument that names a table, database, tag, branch or consumer, given a
    name that would leave the warehouse (the other required arguments benign)."""
    benign = {"STRING": "'x'", "INT": "1", "BIGINT": "1", "BOOLEAN": "true", "MAP<STRING,STRING>": "map()"}
    hostile = {"table": f"'db.`{ESCAPE}`'", "source_table": f"'db.`{ESCAPE}`'",
               "target_table": "'db.`../../../planted`'", "database_or_table": "'`../other/sec`.secret'",
               "database": "'`../other/sec`'", "tag": "'{steal_tag}'", "target_tag": "'{plant}'",
               "branch": "'{steal_branch}'", "from_branch": "'{steal_branch}'", "to_branch": "'{plant}'",
               "source_branch": "'{steal_branch}'", "target_branch": "'{steal_branch}'",
               "consumerId": "'{plant}'"}
    out = []
    for name, cls in sorted(PROCEDURES.items()):
        params = cls.parameters
        for bad in [p for p in params if p.name in hostile]:
            args = []
            for p in params:
                if p is bad:
                    args.append(f"{p.name} => {hostile[p.name]}")
                elif p.name in ("table", "source_table") and bad.name not in ("database_or_table",):
                    args.append(f"{p.name} => 'db.r'")
                elif p.required:
                    args.append(f"{p.name} => {'map()' if p.type.startswith('MAP') else benign[p.type]}")
            if name.startswith("migrate") and bad.name != "target_table":
                continue  # their source is a Spark table or a directory to adopt (docs/security.md)
            out.append(f"CALL sys.{name}({', '.join(args)})")
    return out


def test_names_options_and_procedure_arguments_never_leave_the_warehouse(tables, outside):
    session = tables
    r = session.catalog.get_table("db.r")
    names = {"out": os.path.join(outside.base, "planted"), "escape": ESCAPE,
             "plant": outside.escape(f"{r.path}/tag/tag-", "planted"),
             "steal_tag": outside.escape(f"{r.path}/tag/tag-", "other/sec.db/secret/tag/tag-keep"),
             "steal_branch": outside.escape(f"{r.path}/branch/branch-", "other/sec.db/secret")}
    statements = [a.format(**names) for a in ATTACKS[:-1]] + [a.format(**names) for a in _procedure_attacks()]
    assert len(statements) > 80
    for text in statements:
        _refused(session, text)
    for text in HARMLESS:
        session.sql(text.format(**names)).collect()
    session.sql(ATTACKS[-1])
    assert os.path.isdir(os.path.join(session.warehouse, "db.db", "%2F..%2F..%2Fplanted"))
    assert rows(session, "SELECT * FROM db.r") == [(1,)]
    assert sorted(session.catalog.list_tables("db")) == ["%2F..%2F..%2Fplanted", "p", "r"]
    assert rows(session, "SELECT tag_name FROM db.r$tags") == [("mine",)]
    outside.assert_untouched()
    record("security", check="names, options, procedure arguments", attempts=len(statements) + len(HARMLESS) + 1,
           files_outside=0)


def test_an_object_table_lists_its_own_directory_and_nothing_else(tables, outside):
    """Since Paimon 2.0 an object table is the listing of its own directory: Paimon 1.0's declared
    ``object-location`` is refused, and listing, refusing a write and DROP TABLE touch nothing outside."""
    session = tables
    declared = os.path.join(outside.base, "other", "sec.db", "secret")
    _refused(session, f"CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = '{declared}')")
    session.sql("CREATE TABLE db.o WITH ('type' = 'object-table')")
    assert rows(session, "SELECT path FROM db.o") == []  # its own schema file is not an object
    _refused(session, "INSERT INTO db.o SELECT * FROM db.o")
    _refused(session, "CALL sys.refresh_object_table('db.o')")
    session.sql("DROP TABLE db.o")
    outside.assert_untouched()
    record("security", check="object tables", attempts=4, files_outside=0)


# -- credentials --------------------------------------------------------------------------------

SHOWN = ["SELECT * FROM db.c$options", "SELECT * FROM sys.all_table_options", "SHOW CREATE TABLE db.c",
         "DESCRIBE EXTENDED db.c", "DESCRIBE TABLE EXTENDED db.c", "DESCRIBE FORMATTED db.c",
         "SHOW TBLPROPERTIES db.c", "SHOW TBLPROPERTIES db.c ('s3.secret-key')", "SELECT * FROM db.c$schemas",
         "SELECT * FROM sys.tables", "SHOW TABLE EXTENDED IN db LIKE 'c'", "SELECT * FROM sys.catalog_options",
         "SHOW CREATE TABLE db.v", "DESCRIBE EXTENDED db.v", "SHOW TBLPROPERTIES db.v"]


def _failing_with_secrets() -> list:
    """Statements that fail and write a credential: their errors must not echo it."""
    opts = _options_clause()
    return [f"CREATE TABLE db.bad (id INT) WITH ({opts}, 'bucket' = 'x')",
            f"CREATE TABLE db.bad (id INT) WITH ({opts}",  # a syntax error quotes the token it stopped at
            f"CREATE TABLE db.bad (id INT) WITH ('s3.secret-key' = '{SECRETS['s3.secret-key']}' 'bucket' = '1')",
            f"ALTER TABLE db.c SET TBLPROPERTIES ({opts}, 'file.format' = 'zzz')",
            f"SELECT * FROM db.c /*+ OPTIONS({opts}, 'scan.snapshot-id' = 'zz') */",
            f"SELECT * FROM db.missing /*+ OPTIONS({opts}) */",
            f"CALL sys.compact(table => 'db.c', options => 's3.secret-key={SECRETS['s3.secret-key']},bucket=zz')",
            f"CALL sys.expire_snapshots(table => 'db.c', options => 'fs.s3a.secret.key = "
            f"{SECRETS['fs.s3a.secret.key']}', retain_max => -1)",
            f"CALL sys.compact(table => 'db.c', options => 'jdbc.password={SECRETS['jdbc.password']}' || 'x')",
            f"CREATE VIEW db.bad WITH ('password' = '{SECRETS['jdbc.password']}') AS SELECT nope"]


def test_credentials_are_masked_in_listings_errors_and_logs(spark, warehouse, caplog):
    import paimon_sql
    catalog = {**SECRETS, **{k: v for k, (v, _) in URI_SECRETS.items() if k != "uri"}, **SHOW_CATALOG_OPTIONS}
    session = paimon_sql.connect(warehouse, spark=spark, catalog_options=catalog)
    caplog.set_level(logging.INFO)  # every logger of ours and Spark's Python side (py4j's DEBUG echoes all calls)
    try:
        session.sql("CREATE DATABASE db")
        session.sql(f"CREATE TABLE db.c (id INT) WITH ({_options_clause()})")
        session.sql(f"CREATE VIEW db.v TBLPROPERTIES ({_options_clause()}) AS SELECT 1 AS one")
        leaked = []
        for text in SHOWN:
            shown = [" ".join(str(v) for v in r) for r in session.sql(text).collect()]
            assert shown, text
            leaked += [(text, v) for v in _leaks(" ".join(shown))]
        assert any(MASK in str(r) for r in session.sql("SELECT * FROM db.c$options").collect())
        assert ("uri", URI_SECRETS["uri"][0].replace("uri-pass-0020", MASK)) in rows(
            session, "SELECT key, value FROM db.c$options")
        for text in _failing_with_secrets():
            message = _refused(session, text)
            leaked += [(text[:60], v) for v in _leaks(message)]
        leaked += [("log", v) for v in _leaks(caplog.text)]
        assert leaked == []
    finally:
        release(session)
    record("security", check="credentials in session", attempts=len(SHOWN) + len(_failing_with_secrets()),
           secrets_leaked=0)


# -- processes: the shell and the server --------------------------------------------------------

def _spark_flags():
    return ["--master", "local[1]", "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=1",
            *QUICK_JVM]


def _catalog_flags():
    return [f for k, v in {**SECRETS, **SHOW_CATALOG_OPTIONS}.items() for f in ("--catalog", f"{k}={v}")]


@pytest.fixture(scope="module", autouse=True)
def processes():
    """The shell (one script) and the server, started with the module so that their Spark startups
    overlap the in-process tests (the module's two subprocesses); the server listens on the default
    host."""
    work = tempfile.mkdtemp(prefix="paimon-security-")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    opts = _options_clause()
    script = ";\n".join(["CREATE DATABASE db", f"CREATE TABLE db.c (id INT) WITH ({opts})",
                         "SHOW CREATE TABLE db.c", "SELECT * FROM db.c$options", "SELECT * FROM sys.catalog_options",
                         "DESCRIBE EXTENDED db.c", f"ALTER TABLE db.c SET TBLPROPERTIES ({opts}, 'bucket' = 'x')"])
    shell = subprocess.Popen([sys.executable, "-m", "paimon_sql.cli", "--warehouse", f"{work}/shell", *_spark_flags(),
                              *_catalog_flags(), "-e", script],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    log = open(f"{work}/server.log", "w+")
    server = subprocess.Popen([sys.executable, "-m", "paimon_sql.server", "--warehouse", f"{work}/server", "--port", "0",
                               "--refresh-interval", "0", *_spark_flags(), *_catalog_flags()],
                              stdout=subprocess.DEVNULL, stderr=log, env=env)
    yield shell, server, log
    for proc in (shell, server):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    log.close()


def test_the_shell_prints_no_credentials(processes):
    shell = processes[0]
    out, err = shell.communicate(timeout=240)
    assert shell.returncode == 1 and err.count("Error: ") == 1 and "'bucket'" in err  # the last statement
    assert MASK in out and "s3.secret-key" in out
    assert _leaks(out + err) == []
    record("security", check="credentials in the shell", attempts=6, secrets_leaked=0)


def _listening(server, log, timeout=240) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log.seek(0)
        text = log.read()
        if "listening on" in text:
            return text
        assert server.poll() is None, text[-3000:]
        time.sleep(0.2)
    raise AssertionError("paimon-sql-server did not start")


def _bound_addresses(port: int) -> set:
    """Local addresses of the sockets listening on ``port`` (Linux's /proc/net/tcp[6])."""
    found = set()
    for table, width in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        if not os.path.exists(table):
            continue
        for line in open(table).read().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            host, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:  # LISTEN
                raw = bytes.fromhex(host)
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, width, 4))  # per-word little endian
                found.add(str(ipaddress.ip_address(raw)))
    return found


def _other_local_address():
    """An address of this machine other than loopback (the one outgoing traffic uses), if any."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: only the route is looked up
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if ipaddress.ip_address(address).is_loopback else address


def test_the_server_listens_on_loopback_and_answers_without_credentials(processes):
    _, server, log = processes
    text = _listening(server, log)
    line = next(t for t in text.splitlines() if "listening on" in t)
    assert "listening on 127.0.0.1:" in line and "Warning" not in text
    port = int(line.split("127.0.0.1:")[1].split()[0])
    assert _bound_addresses(port) == {"127.0.0.1"}
    other = _other_local_address()
    if other is not None:
        with pytest.raises(OSError):
            socket.create_connection((other, port), timeout=5).close()
    cursor = hive.connect("127.0.0.1", port, auth="NOSASL").cursor()
    answers = []
    cursor.execute("CREATE DATABASE db")
    cursor.execute(f"CREATE TABLE db.c (id INT) WITH ({_options_clause()})")
    for statement in ["SHOW CREATE TABLE db.c", "SELECT * FROM db.c$options", "SELECT * FROM sys.catalog_options",
                      "DESCRIBE TABLE EXTENDED db.c", "SHOW TBLPROPERTIES db.c"]:
        cursor.execute(statement)
        answers.append(str(cursor.fetchall()))
    accepted = []
    for statement in _failing_with_secrets():
        try:
            cursor.execute(statement)
            if cursor.description:
                cursor.fetchall()
            accepted.append(statement)
        except hive.OperationalError as e:
            answers.append(e.args[0].status.errorMessage)
    log.seek(0)
    leaked = _leaks(" ".join(answers) + log.read())
    assert MASK in answers[1] and accepted == [] and leaked == []
    record("security", check="server", attempts=len(answers) + 1, secrets_leaked=0)


@pytest.mark.parametrize("host, auth, tls, warned", [
    ("127.0.0.1", "none", False, False), ("127.0.0.2", "none", False, False), ("::1", "none", False, False),
    ("[::1]", "none", False, False), ("localhost", "none", False, False), ("LOCALHOST.", "none", False, False),
    ("0.0.0.0", "none", False, True), ("::", "none", False, True), ("", "none", False, True),
    ("192.0.2.2", "nosasl", False, True), ("example.com", "none", False, True),
    ("0.0.0.0", "plain", False, True), ("0.0.0.0", "plain", True, False)])
def test_listening_beyond_this_machine_without_passwords_and_tls_is_warned(host, auth, tls, warned):
    """``--host`` other than loopback (all interfaces, an interface's address, a host name) without
    ``--auth plain`` and TLS prints a warning on stderr before the ``listening on`` line."""
    warning = exposure_warning(host, auth, tls)
    assert (warning is not None) == warned
    if warned:
        assert warning.startswith(f"Warning: listening on {host} (beyond this machine) without ")


# -- grants (issue 33): no entry point reads or writes past them ---------------------------------------------

def _tree_state(root) -> dict:
    return {os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns
            for d, _, files in os.walk(root) for f in files}


def _argument(p, table: str):
    """A well-formed value for a procedure's parameter: the secret table for those naming tables."""
    if p.name in ("table", "source_table", "target_table", "database_or_table", "view"):
        return f"'{table}'"
    return {"INT": "1", "BIGINT": "1", "BOOLEAN": "false"}.get(p.type, "'x'")


def _call_text(name: str, cls, table: str) -> str:
    args = ", ".join(f"{p.name} => {_argument(p, table)}" for p in cls.parameters if p.required)
    return f"CALL sys.{name}({args})"


@pytest.fixture
def guarded(spark, warehouse, tmp_path):
    """A warehouse with a secret table and an open one; a session of user mallory, who may read only
    ``open`` (as a server session under --policy-file has it); and what the secret table's files are."""
    from paimon_sql.access.control import AccessControl
    from paimon_sql.access.policy import PolicyFile, Principal
    admin = paimon_sql.connect(warehouse, spark=spark)
    for stmt in ["CREATE DATABASE secret", "CREATE DATABASE open",
                 "CREATE TABLE secret.t (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
                 "TBLPROPERTIES ('bucket' = '1')", "CREATE TABLE open.t (id INT)",
                 "INSERT INTO secret.t VALUES (1, 'classified')", "INSERT INTO open.t VALUES (1)",
                 "CALL sys.create_branch(table => 'secret.t', branch => 'b')"]:
        admin.sql(stmt)
    release(admin)
    policy = tmp_path / "policy.json"
    policy.write_text('{"grants": [{"to": ["mallory"], "read": ["open"]}]}')
    own = spark.newSession()
    own._jvm.SparkSession.setActiveSession(own._jsparkSession)
    mallory = paimon_sql.connect(warehouse, spark=own)
    mallory.access = AccessControl(Principal("mallory"), PolicyFile(str(policy)))
    yield mallory, os.path.join(warehouse, "secret.db", "t")
    mallory.release()


def test_no_entry_point_reads_or_writes_past_a_grant(guarded):
    """Every procedure, every system table, every statement kind and table function, and the server's
    listings, tried by a user without grants on secret.t: each refused before it runs, the table's
    files unchanged, its value never shown."""
    from paimon_sql.exceptions import AccessDeniedError
    from paimon_sql.server import metadata
    from paimon_sql.systables import GLOBAL_TABLES, SYSTEM_TABLES
    mallory, table_dir = guarded
    data_file = next(os.path.join(d, f) for d, _, fs in os.walk(table_dir) for f in fs if f.startswith("data-"))
    attempts = [_call_text(name, cls, "secret.t") for name, cls in sorted(PROCEDURES.items())]
    attempts += [f"SELECT * FROM secret.`t${name}`" for name in sorted(SYSTEM_TABLES)]
    attempts += [f"SELECT * FROM sys.{name}" for name in sorted(GLOBAL_TABLES)]
    attempts += [
        "SELECT * FROM secret.t", "SELECT * FROM secret.`t$branch_b`", "SELECT * FROM secret.t VERSION AS OF 1",
        "SELECT * FROM open.t WHERE id IN (SELECT id FROM secret.t)", "SELECT * FROM open.t, secret.t",
        "WITH x AS (SELECT * FROM secret.t) SELECT * FROM x", "SELECT * FROM paimon_incremental_query('secret.t', 0, 1)",
        f"SELECT * FROM parquet.`{data_file}`", "CREATE TEMPORARY VIEW v AS SELECT * FROM secret.t",
        "CACHE TABLE c AS SELECT * FROM secret.t", "EXPLAIN SELECT * FROM secret.t", "DESCRIBE secret.t",
        "SHOW CREATE TABLE secret.t", "SHOW PARTITIONS secret.t", "SHOW TBLPROPERTIES secret.t", "SHOW TAGS secret.t",
        "INSERT INTO secret.t VALUES (2, 'x')", "INSERT OVERWRITE secret.t SELECT * FROM secret.t",
        "UPDATE secret.t SET v = 'x'", "DELETE FROM secret.t", "TRUNCATE TABLE secret.t",
        "MERGE INTO secret.t USING open.t ON secret.t.id = open.t.id WHEN MATCHED THEN DELETE",
        "INSERT INTO open.t SELECT id FROM secret.t", "CREATE TABLE open.copy AS SELECT * FROM secret.t",
        "ALTER TABLE secret.t SET TBLPROPERTIES ('a' = 'b')", "ALTER TABLE secret.t RENAME TO open.stolen",
        "DROP TABLE secret.t", "DROP DATABASE secret CASCADE", "ANALYZE TABLE secret.t COMPUTE STATISTICS",
        "CREATE VIEW open.leak AS SELECT * FROM secret.t", "SET spark.sql.runSQLOnFiles=true",
        f"CREATE TEMPORARY VIEW f USING parquet OPTIONS (path '{data_file}')", "SELECT java_method('a', 'b')",
        f"LOAD DATA LOCAL INPATH '{data_file}' INTO TABLE open.t", f"INSERT OVERWRITE DIRECTORY '{table_dir}' SELECT 1",
        "ADD JAR /nonexistent.jar", "REFRESH TABLE secret.t",
    ]
    before = _tree_state(table_dir)
    for text in attempts:
        with pytest.raises(AccessDeniedError) as e:
            mallory.sql(text).collect()
        assert str(e.value).startswith("permission denied"), (text, str(e.value))
        assert "classified" not in str(e.value)
    assert _tree_state(table_dir) == before
    assert len(attempts) > len(PROCEDURES) + len(SYSTEM_TABLES) + 40

    class Req:  # a metadata call's request, as the Thrift client sends it
        schemaName, tableName, columnName, tableTypes, catalogName = None, None, None, None, None
    listed = {(r[1], r[2]) for r in metadata.get_tables(mallory, Req()).to_pylist() for r in [tuple(r.values())]}
    assert ("open", "t") in listed and ("secret", "t") not in listed
    columns = {r["TABLE_SCHEM"] for r in metadata.get_columns(mallory, Req()).to_pylist()}
    assert columns == {"open"}
    Req.tableName = "t"
    assert {r["TABLE_SCHEM"] for r in metadata.get_primary_keys(mallory, Req()).to_pylist()} <= {"open"}
    assert [r[1] for r in rows(mallory, "SHOW TABLES IN secret")] == []
