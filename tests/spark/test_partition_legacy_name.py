"""Partitioned tables through SQL under both values of ``partition.legacy-name``: the directories
are Java Paimon's names (``d=19844`` by default, ``d=2024-05-01`` with false), while SQL shows the
values (SHOW PARTITIONS, partition specs) and ``$partitions`` the cast spelling, either way."""

import datetime as dt
import os
from decimal import Decimal

import pytest
from spark.conftest import rows

LEGACY = {"": "d=19844/ts=2024-05-01T12%3A30/p=1.50/b=true",
          "false": "d=2024-05-01/ts=2024-05-01 12%3A30%3A00.000000/p=1.50/b=true"}


@pytest.mark.parametrize("legacy", ["", "false"])
def test_partition_statements_on_legacy_and_cast_names(session, warehouse, legacy):
    props = f" TBLPROPERTIES ('partition.legacy-name' = '{legacy}')" if legacy else ""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id INT, d DATE, ts TIMESTAMP_NTZ, p DECIMAL(10, 2), b BOOLEAN) "
                f"PARTITIONED BY (d, ts, p, b){props}")
    session.sql("INSERT INTO db.t VALUES (1, DATE'2024-05-01', TIMESTAMP_NTZ'2024-05-01 12:30:00', 1.5, true), "
                "(2, DATE'2024-05-02', TIMESTAMP_NTZ'2024-05-01 12:30:00', 1.5, true)")
    [(path,)] = rows(session, "SELECT file_path FROM db.t$files WHERE partition LIKE '{2024-05-01,%'")
    assert path.startswith(f"{warehouse}/db.db/t/{LEGACY[legacy]}/bucket-0/") and os.path.isfile(path)
    assert rows(session, "SELECT id FROM db.t WHERE d = DATE'2024-05-01'") == [(1,)]
    spec = "ts=2024-05-01 12%3A30%3A00/p=1.50/b=true"
    assert rows(session, "SHOW PARTITIONS db.t") == [(f"d=2024-05-01/{spec}",), (f"d=2024-05-02/{spec}",)]
    assert [r[0] for r in rows(session, "SELECT partition FROM db.t$partitions ORDER BY partition")] == [
        f"d=2024-05-0{i}/ts=2024-05-01 12:30:00.000000/p=1.50/b=true" for i in (1, 2)]
    session.sql("INSERT OVERWRITE db.t PARTITION (d='2024-05-01', ts='2024-05-01 12:30:00', p=1.5, b=true) "
                "VALUES (10)")
    session.sql("TRUNCATE TABLE db.t PARTITION (d='2024-05-02', ts='2024-05-01 12:30:00', p='1.50', b=true)")
    assert rows(session, "SELECT id, d, p, b FROM db.t") == [(10, dt.date(2024, 5, 1),
                                                              Decimal("1.50"), True)]
    [(path,)] = rows(session, "SELECT file_path FROM db.t$files")
    assert f"/{LEGACY[legacy]}/bucket-0/" in path and os.path.isfile(path)


@pytest.mark.parametrize("legacy,name", [("true", "d=19844"), ("false", "d=2024-05-01")])
def test_native_spark_writer_names_directories_as_java(session, warehouse, legacy, name):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.a (id INT, v STRING, d DATE) PARTITIONED BY (d) "
                f"TBLPROPERTIES ('partition.legacy-name' = '{legacy}')")
    session.sql("INSERT INTO db.a SELECT id, 'x', DATE'2024-05-01' FROM range(3)")
    assert os.listdir(f"{warehouse}/db.db/a/{name}") == ["bucket-0"]
    assert rows(session, "SELECT count(*) FROM db.a WHERE d = DATE'2024-05-01'") == [(3,)]
