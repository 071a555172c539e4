"""A commit's PartitionStatistics (commit/partition_statistics.py), the deltas a REST catalog's
commit request carries: per partition, spelled as its directories, ADDs counted up and DELETEs down."""

from dataclasses import replace

import pyarrow as pa

from paimon_sql.catalog import FileSystemCatalog
from paimon_sql.commit.partition_statistics import partition_statistics
from paimon_sql.manifest.manifest_file import DELETE


def test_deltas_per_partition(tmp_path):
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table_from_arrow("db.t", pa.schema([("p", pa.string()), ("v", pa.int32())]),
                                            partition_keys=["p"], options={"partition.default-name": "none"})
    table.write_arrow(pa.table({"p": ["a", "a", "b", None], "v": pa.array([1, 2, 3, 4], pa.int32())}))
    entries = catalog.get_table("db.t").new_scan().plan_entries()
    stats = {tuple(s["spec"].items()): s for s in partition_statistics(table, entries)}
    assert set(stats) == {(("p", "a"),), (("p", "b"),), (("p", "none"),)}
    a = stats[(("p", "a"),)]
    assert (a["recordCount"], a["fileCount"], a["totalBuckets"]) == (2, 1, entries[0].total_buckets)
    assert a["fileSizeInBytes"] > 0 and a["lastFileCreationTime"] > 1_700_000_000_000
    gone = partition_statistics(table, [replace(e, kind=DELETE) for e in entries if e.partition == entries[0].partition])
    assert len(gone) == 1 and gone[0]["recordCount"] < 0 and gone[0]["fileCount"] == -1
