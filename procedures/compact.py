"""``compact``: compact a table's buckets into one COMPACT snapshot, as paimon-spark's CompactProcedure.

The driver plans the chosen partitions' buckets; each bucket is compacted in a Spark task (primary-key
buckets' LSM trees, append buckets' small files) and the driver commits one snapshot
(:mod:`paimon_sql.spark.compact`). Partitions are chosen by ``partitions`` (``k=v,k2=v2`` within a
spec is AND, ``;`` between specs OR) or by ``where`` (a SQL predicate on partition columns,
evaluated by Spark over the table's partitions, so its meaning is exactly Spark's), never both.
"""

from __future__ import annotations

import time
from typing import Dict, List, Optional

from paimon_sql.compact.sort_keys import sortable
from paimon_sql.data.partition_names import specs_predicate
from paimon_sql.options.core_options import parse_duration_ms
from paimon_sql.procedures.base import Procedure, optional, register, required
from paimon_sql.read.postpone import postpone_table
from paimon_sql.spark.compact import compact
from paimon_sql.spark.sort_compact import sort_compact

STRATEGIES = ("full", "minor")
ORDER_STRATEGIES = ("none", "order", "zorder", "hilbert")


@register
class CompactProcedure(Procedure):
    name = "compact"
    rewrites_files = True
    parameters = (required("table", "STRING"), optional("partitions", "STRING"),
                  optional("compact_strategy", "STRING"), optional("order_strategy", "STRING"),
                  optional("order_by", "STRING"), optional("where", "STRING"), optional("options", "STRING"),
                  optional("partition_idle_time", "STRING"), optional("buckets", "STRING"))
    description = "Compact a table's files (all partitions, or those partitions/where select) into one snapshot."

    def call(self, session, args):
        strategy = (args["compact_strategy"] or "full").strip().lower()
        if strategy not in STRATEGIES:
            raise self.fail(f"compact_strategy must be 'full' or 'minor', got '{args['compact_strategy']}'")
        order = self.sort_order(args)
        if args["partitions"] and args["where"]:
            raise self.fail("partitions and where cannot be used together")
        table = self.table(session, args["table"]).copy(self.dynamic_options(args["options"]))
        columns = self.sort_columns(table, order, args["order_by"]) if order else None
        buckets = self.bucket_ids(args["buckets"])
        idle_ms = self.idle_millis(args["partition_idle_time"])
        keys = table.schema.partition_keys
        if (args["partitions"] or args["where"]) and not keys:
            raise self.fail(f"table '{args['table']}' is not partitioned: partitions/where select nothing")
        specs = (self.partition_specs(table, args["partitions"]) if args["partitions"]
                 else self.where_specs(session, table, args["where"]) if args["where"] else None)
        if postpone_table(table) and (specs is not None or buckets is not None or idle_ms is not None):
            raise self.fail(f"table '{args['table']}' has bucket = -2 (postpone bucket): its compaction assigns "
                            f"every postpone file to a bucket and takes no partitions, where, buckets or "
                            f"partition_idle_time, as in Paimon")
        if specs == []:
            return [(True,)]  # no partition matches: nothing to compact, as paimon-spark
        predicate = None if specs is None else specs_predicate(table.schema, specs)
        if order is not None:
            sort_compact(session, table, order, columns, predicate)
            return [(True,)]
        chosen = None if buckets is None and idle_ms is None else self.chosen_buckets(table, predicate, buckets, idle_ms)
        compact(session.spark, table, predicate, strategy == "full", chosen)
        return [(True,)]

    def sort_order(self, args) -> Optional[str]:
        """The sort compaction ``order_strategy`` asks for (None: ``none``, plain compaction), its
        arguments checked as paimon-spark checks them."""
        order = (args["order_strategy"] or "none").strip().lower()
        if order not in ORDER_STRATEGIES:
            raise self.fail(f"order_strategy must be 'order', 'zorder', 'hilbert' or 'none', "
                            f"got '{args['order_strategy']}'")
        if order == "none":
            if args["order_by"]:
                raise self.fail("order_strategy 'none' cannot work with order_by columns")
            return None
        if not (args["order_by"] or "").strip():
            raise self.fail(f"order_strategy '{order}' needs order_by columns")
        for arg in ("partition_idle_time", "buckets"):
            if args[arg]:
                raise self.fail(f"sort compaction (order_strategy '{order}') does not support {arg}")
        return order  # it rewrites every file of the partitions, whatever compact_strategy says (as paimon-spark)

    def sort_columns(self, table, order: str, text: str) -> List[str]:
        """``order_by`` as the table's column names; as paimon-spark, only append tables without
        buckets are sorted, and the columns must be sortable non-partition columns."""
        schema = table.schema
        kind = ("a primary-key table" if schema.is_primary_key_table
                else f"bucket = {table.options.bucket}" if table.options.bucket != -1 else None)
        if kind:
            raise self.fail(f"sort compaction (order_strategy '{order}') only supports append tables with "
                            f"bucket = -1 (unaware bucket); '{table.name}' is {kind}")
        by_name = {n.lower(): n for n in schema.field_names}
        columns = []
        for item in text.split(","):
            name = by_name.get(item.strip().lower())
            if name is None:
                raise self.fail(f"order_by column '{item.strip()}' is not a column of '{table.name}' "
                                f"(columns: {', '.join(schema.field_names)})")
            if name in schema.partition_keys:
                raise self.fail(f"order_by should not contain partition columns ({', '.join(schema.partition_keys)}): "
                                f"every row of a partition has the same value")
            field = schema.field(name)
            if not sortable(field.type.to_arrow()):
                raise self.fail(f"order_by column '{name}' of type {field.type} cannot be sorted by")
            columns.append(name)
        if order == "hilbert" and len(columns) < 2:
            raise self.fail("order_strategy 'hilbert' needs at least two order_by columns")
        return columns

    def idle_millis(self, text: Optional[str]) -> Optional[int]:
        if not text:
            return None
        try:
            return parse_duration_ms(text)
        except ValueError:
            raise self.fail(f"partition_idle_time must be a duration such as '1 d' or '30 min', got '{text}'") from None

    @staticmethod
    def chosen_buckets(table, predicate, buckets: Optional[set], idle_ms: Optional[int]) -> set:
        """(partition, bucket) pairs to compact: those of ``buckets``, in partitions whose newest file
        is older than ``idle_ms`` (Paimon's partition_idle_time: only idle partitions are compacted)."""
        entries = table.new_scan().filter(predicate).plan_entries()
        newest: Dict[bytes, float] = {}
        for e in entries:
            created = e.file.creation_time.timestamp() * 1000 if e.file.creation_time is not None else 0
            newest[e.partition] = max(newest.get(e.partition, 0), created)
        cutoff = time.time() * 1000 - (idle_ms or 0)
        return {(e.partition, e.bucket) for e in entries
                if (buckets is None or e.bucket in buckets) and (idle_ms is None or newest[e.partition] < cutoff)}

    def bucket_ids(self, text: Optional[str]) -> Optional[set]:
        if not text:
            return None
        try:
            return {int(b) for b in text.split(",")}
        except ValueError:
            raise self.fail(f"buckets must be bucket numbers separated by ',', got '{text}'") from None
