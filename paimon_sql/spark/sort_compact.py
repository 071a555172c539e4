"""Sort compaction (``CALL sys.compact(order_strategy => ..., order_by => ...)``) as paimon-spark's
``sortCompactUnAwareBucketTable``: the chosen partitions of an append table without buckets are read,
clustered by the order, and written back as one OVERWRITE snapshot of exactly those partitions.

Rows are range-partitioned across Spark tasks by (partition columns, sort key) and sorted within
each task, so each task writes, per table partition, one file holding one slice of the order: the
files' min/max stats then skip most of them for queries on the order columns. The sort key is the
order columns themselves (``order``) or a z-order / Hilbert key computed from them in a vectorized
``mapInArrow`` (:mod:`paimon_sql.compact.sort_keys`). The write is a dynamic partition overwrite, as
paimon-spark's: partitions the read did not cover keep their files. How many files a partition gets
follows Spark's shuffle partitioning (``spark.sql.shuffle.partitions``, adaptive coalescing), as in
paimon-spark.
"""

from __future__ import annotations

from typing import List, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StructField, StructType

from paimon_sql.commit.table_commit import LAST_SAFE_SNAPSHOT
from paimon_sql.compact import sort_keys
from paimon_sql.data import predicate as P
from paimon_sql.exceptions import PaimonError
from paimon_sql.spark.scan import scan_dataframe

ORDER, ZORDER, HILBERT = "order", "zorder", "hilbert"
_KEY = "__paimon_sort_key"


def with_sort_key(df: DataFrame, strategy: str, columns: List[str], var_length: int) -> DataFrame:
    """``df`` plus a BINARY column of each row's z-order or Hilbert key over ``columns``."""
    def add_key(batches):
        for batch in batches:
            values = [batch.column(c) for c in columns]
            key = (sort_keys.zorder_keys(values, var_length) if strategy == ZORDER
                   else sort_keys.hilbert_keys(values))
            yield batch.append_column(_KEY, key)

    return df.mapInArrow(add_key, StructType(df.schema.fields + [StructField(_KEY, BinaryType(), False)]))


def sort_dataframe(df: DataFrame, strategy: str, columns: List[str], partition_keys: List[str],
                   var_length: int = sort_keys.PRIMITIVE_SIZE) -> DataFrame:
    """``df`` range-partitioned by (partition keys, sort key) and sorted within each task (Paimon's
    TableSorter.sort, with the table's partition first so a task's slice stays in few partitions)."""
    keyed = df if strategy == ORDER else with_sort_key(df, strategy, columns, var_length)
    parts = [F.col(f"`{c}`") for c in partition_keys]
    # led by the partition hash the native writer groups a task's rows by: its sort then keeps ours
    group = [F.xxhash64(*parts)] if parts else []
    order = group + parts + [F.col(f"`{c}`") for c in (columns if strategy == ORDER else [_KEY])]
    out = keyed.repartitionByRange(*order).sortWithinPartitions(*order)
    return out if strategy == ORDER else out.drop(_KEY)


def sort_compact(session, table, strategy: str, columns: List[str], predicate: Optional[P.Predicate]) -> bool:
    """Rewrite the partitions ``predicate`` selects (all when None) sorted by ``strategy`` over
    ``columns``, as one OVERWRITE snapshot; False when they hold no file (nothing is committed).
    A row-tracking table is refused: its rows, rewritten as new files, would get new row ids."""
    if table.options.get("row-tracking.enabled"):
        raise PaimonError(f"table {table.name}: sort compaction of a row-tracking table is not supported (the "
                          "rewritten rows would get new _ROW_IDs); CALL sys.compact without an order keeps them")
    snapshot = table.snapshot_manager.latest_id()
    if snapshot is None or not table.new_scan().filter(predicate).with_snapshot(snapshot).plan_entries():
        return False
    var_length = sort_keys.check_var_length(table.options.get(sort_keys.VAR_LENGTH_CONTRIBUTION))
    # read one snapshot; the overwrite refuses to replace what another writer committed after it
    df = scan_dataframe(session.spark, table.travel({"scan.snapshot-id": str(snapshot)}), session.warehouse,
                        predicate=predicate, catalog_options=session.catalog_options)
    session.write(sort_dataframe(df, strategy, columns, table.schema.partition_keys, var_length),
                  table.copy({LAST_SAFE_SNAPSHOT: str(snapshot)}), overwrite=True, dynamic=True)
    return True
