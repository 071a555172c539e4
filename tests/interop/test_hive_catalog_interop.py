"""Java Paimon's HiveCatalog (1.0 and 2.0, each case against each) and ours on one Hive metastore
(tests/catalog/hive_metastore.py): each lists and reads what the other registered, a table registered by either looks the same in the
metastore (parameters, columns, partition keys, formats, partitions), read with the Thrift client
library directly, and each waits for the other's commit lock (HiveCatalogLock).

The versions differ in the catalog option ``sync-all-properties``, and 2.0 wins: 2.0's default (true) registers
every table option as a metastore parameter (with ``primary-key``, ``partition``, ``bucket-key``), 1.0's (false)
only the ``hive.``-prefixed ones, without the prefix. Ours defaults to 2.0's; against 1.0 our catalog is given
1.0's default, so each case checks both behaviours.

Java runs tests/interop/java/HiveCatalogDriver.java (one JVM per Java Paimon version for the module),
compiled against the Paimon 1.0 or 2.0 bundle that tests/oracles fetches (2.0's carries HiveCatalog
too), with the Hive 2.3 client and Hadoop jars the pip pyspark ships (first on the class path: the bundle's own older Hadoop classes lack what the Hive
client needs).
"""

import threading
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pytest
from catalog.hive_metastore import shared_metastore
from java_paimon import Driver, driver_command, hive_client_jars, paimon_version  # noqa: F401  (fixture: each case on 1.0 and 2.0)
from pymetastore.hive_metastore import ThriftHiveMetastore
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from paimon_sql.catalog import Identifier, load_catalog
from paimon_sql.exceptions import PaimonError

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "HiveCatalogDriver.java"
HMS_STATS = ("transient_lastDdlTime", "numFiles", "totalSize")  # parameters the metastore adds itself


class JavaHiveCatalog:
    """Runs HiveCatalogDriver commands on Java's HiveCatalog of ``uri`` and ``warehouse``: each call a
    batch (a HiveCatalog of its own) in the module's one JVM."""

    def __init__(self, driver: Driver, uri: str, warehouse: str):
        self.driver, self.catalog = driver, {"uri": uri, "warehouse": warehouse}

    def start(self, op: str, table: str = None, **args) -> None:
        """Starts one command; its answers come from ``self.driver.answer()`` and ``rest()``."""
        self.driver.send({**self.catalog, "commands": [dict(op=op, table=table, **args)]})

    def run(self, op: str, table: str = None, **args):
        """One command's last answer."""
        self.start(op, table, **args)
        return self.driver.rest()[-1]


@pytest.fixture(scope="module")
def driver(paimon_version):
    with Driver(driver_command(SOURCE, before=[hive_client_jars()], version=paimon_version)) as driver:
        yield driver


@pytest.fixture
def setup(driver, tmp_path, paimon_version):
    server = shared_metastore()
    uri = urlparse(server.uri)
    transport = TTransport.TBufferedTransport(TSocket.TSocket(uri.hostname, uri.port))
    transport.open()
    warehouse = str(tmp_path / "warehouse")
    ours = load_catalog(warehouse, {**server.options, **({"sync-all-properties": "false"}
                                                        if paimon_version == "1.0" else {})})
    db = f"interop_{uuid.uuid4().hex[:8]}"
    hms = ThriftHiveMetastore.Client(TBinaryProtocol(transport))
    yield ours, JavaHiveCatalog(driver, server.uri, warehouse), hms, db
    ours.drop_database(db, ignore_if_not_exists=True, cascade=True)
    transport.close()


def _ours(catalog, name):
    """The table HiveCatalogDriver's 'create' makes, made by us."""
    table = catalog.create_table_from_arrow(name, pa.schema([("id", pa.int32()), ("dt", pa.string())]),
                                            partition_keys=["dt"], comment="orders",
                                            options={"metastore.partitioned-table": "true", "hive.owner-team": "bi"})
    table.write_arrow(pa.table({"id": pa.array([1, 2], pa.int32()), "dt": ["a", "b"]}))


def test_java_and_we_register_a_table_alike_and_read_each_others(setup):
    ours, java, hms, db = setup
    ours.create_database(db)
    _ours(ours, f"{db}.mine")
    assert java.run("create", f"{db}.theirs") == "ok"

    assert sorted(java.run("list")[db]) == ["mine", "theirs"]  # each call a HiveCatalog of its own
    assert java.run("read", f"{db}.mine") == [[1, "a"], [2, "b"]]
    assert ours.list_tables(db) == ["mine", "theirs"]
    assert ours.get_table(f"{db}.theirs").to_arrow().sort_by("id").to_pylist() == [
        {"id": 1, "dt": "a"}, {"id": 2, "dt": "b"}]

    mine, theirs = hms.get_table(db, "mine"), hms.get_table(db, "theirs")
    for t in (mine, theirs):
        t.parameters = {k: v for k, v in t.parameters.items() if k not in HMS_STATS}
    assert mine.parameters == theirs.parameters
    assert (mine.sd.cols, mine.partitionKeys, mine.tableType) == (theirs.sd.cols, theirs.partitionKeys,
                                                                  theirs.tableType)
    assert (mine.sd.inputFormat, mine.sd.outputFormat, mine.sd.serdeInfo.serializationLib) == \
        (theirs.sd.inputFormat, theirs.sd.outputFormat, theirs.sd.serdeInfo.serializationLib)
    assert mine.sd.location.rsplit("/", 1)[0] == theirs.sd.location.rsplit("/", 1)[0]
    assert sorted(hms.get_partition_names(db, "mine", -1)) == sorted(hms.get_partition_names(db, "theirs", -1)) \
        == ["dt=a", "dt=b"]
    assert hms.get_partition(db, "mine", ["a"]).sd.location == mine.sd.location + "/dt=a"
    assert hms.get_partition(db, "theirs", ["a"]).sd.location == theirs.sd.location + "/dt=a"


def test_java_and_we_exclude_each_other_through_the_metastore_lock(setup, tmp_path):
    ours, java, hms, db = setup
    ours.create_database(db)
    _ours(ours, f"{db}.t")
    short = load_catalog(str(tmp_path / "warehouse"), {**shared_metastore().options, "lock.enabled": "true",
                                                       "lock-acquire-timeout": "1 s", "lock-check-max-sleep": "100 ms"})
    lock = short.environment(Identifier(db, "t")).lock

    java.start("hold_lock", f"{db}.t", timeout_ms=60000, until_released=True)  # Java holds it until told
    try:
        assert java.driver.answer() == "held"
        with pytest.raises(PaimonError, match="could not acquire the Hive metastore lock"):
            lock(lambda: None)
    finally:
        java.driver.write("release")
    assert java.driver.rest() == ["ok"]
    assert lock(lambda: "ours") == "ours"  # released by Java

    held, release = threading.Event(), threading.Event()
    ours_holding = threading.Thread(target=lambda: lock(lambda: (held.set(), release.wait(120))))
    ours_holding.start()
    try:
        assert held.wait(60)
        result = java.run("hold_lock", f"{db}.t", seconds=0, timeout_ms=1000)
        assert "Acquire lock failed" in result["error"]
    finally:
        release.set()
        ours_holding.join(60)
    assert java.run("hold_lock", f"{db}.t", seconds=0, timeout_ms=10000) == "ok"
