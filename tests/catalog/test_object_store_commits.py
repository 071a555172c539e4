"""Concurrent committers on an S3 warehouse lose nothing: by conditional puts (If-None-Match: *), or,
with them disabled, under the JDBC catalog's lock; without either, a commit is refused.

The server is moto's, run single-threaded (tests/conftest.py ``s3_server``), so its check of
``If-None-Match: *`` is exact.
"""

import uuid

import pyarrow as pa
import pytest
from catalog.committers import assert_nothing_lost, commit_concurrently
from conftest import s3_bucket

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import InvalidOptionError

PROCS, COMMITS = 3, 6


@pytest.fixture(scope="module")
def serial_s3(s3_server):
    """The run's S3 server (single-threaded, so its If-None-Match check is exact) with a bucket."""
    return s3_bucket(s3_server, "commits")


def _table(warehouse: str, options: dict):
    catalog = load_catalog(warehouse, options)
    catalog.create_database("db")
    return catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))


def test_concurrent_committers_with_conditional_puts_lose_nothing(serial_s3, tmp_path):
    warehouse = f"s3://commits/{uuid.uuid4().hex}"
    _table(warehouse, serial_s3)
    commit_concurrently(warehouse, serial_s3, tmp_path / "barrier", PROCS, COMMITS)
    assert_nothing_lost(warehouse, serial_s3, PROCS, COMMITS)


def test_without_conditional_puts_the_jdbc_lock_serialises_committers(serial_s3, tmp_path):
    warehouse = f"s3://commits/{uuid.uuid4().hex}"
    options = {**serial_s3, "s3.create.conditional.enabled": "false", "metastore": "jdbc",
               "uri": f"jdbc:sqlite:{tmp_path}/catalog.db", "lock.enabled": "true"}
    _table(warehouse, options)
    commit_concurrently(warehouse, options, tmp_path / "barrier", PROCS, COMMITS)
    assert_nothing_lost(warehouse, options, PROCS, COMMITS)


def test_without_conditional_puts_or_a_lock_a_commit_is_refused(serial_s3):
    warehouse = f"s3://commits/{uuid.uuid4().hex}"
    options = {**serial_s3, "s3.create.conditional.enabled": "false"}
    with pytest.raises(InvalidOptionError, match="concurrent commits need 'lock.enabled' = 'true' with a jdbc "
                                                 "or hive catalog") as refused:
        _table(warehouse, options)
    assert "\n" not in str(refused.value) and "test" not in str(refused.value)  # one line, no credentials
    single = load_catalog(warehouse, {**options, "lock.enabled": "false"})  # one writer, by the user's word
    table = single.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    table.write_arrow(pa.table({"id": [7]}))
    assert table.new_scan().to_arrow().column("id").to_pylist() == [7]
