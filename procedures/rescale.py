"""``rescale``: rewrite partitions with another bucket number, as paimon-spark's RescaleProcedure.

The chosen partitions (all, or those ``partitions`` / ``where`` select, as for ``compact``) are read
as a DataFrame at the latest snapshot and written back through the Spark write path with
``bucket = bucket_num`` as a dynamic-partition overwrite: one OVERWRITE snapshot replaces exactly
the partitions read (an unpartitioned table whole). The table's ``bucket`` option is not changed —
as in Paimon, ``ALTER TABLE ... SET TBLPROPERTIES ('bucket' = 'N')`` first, then rescale (without
``bucket_num`` the table's current ``bucket`` is used). Each data file records the bucket count it
was written with (``total_buckets``); readers take each partition's files as they lie.

Deletion-vector and first-row tables read a level-0 file only once it is compacted; such files in
the chosen partitions are compacted first (a COMPACT snapshot before the OVERWRITE), so no row is
left out of the rewrite.
"""

from __future__ import annotations

from paimon_sql.commit.table_commit import LAST_SAFE_SNAPSHOT
from paimon_sql.data.partition_names import specs_predicate
from paimon_sql.procedures.base import Procedure, optional, register, required
from paimon_sql.spark.compact import compact


@register
class RescaleProcedure(Procedure):
    name = "rescale"
    rewrites_files = True
    parameters = (required("table", "STRING"), optional("bucket_num", "INT"), optional("partitions", "STRING"),
                  optional("where", "STRING"))
    description = "Rewrite a table's partitions (all, or those partitions/where select) with a new bucket number."

    def call(self, session, args):
        table = self.table(session, args["table"])
        bucket_num = args["bucket_num"]
        if bucket_num is not None and bucket_num <= 0:
            raise self.fail(f"bucket_num must be a positive number of buckets, got {bucket_num}")
        if table.options.bucket <= 0:
            mode = "postpone bucket" if table.options.bucket == -2 else \
                "dynamic bucket" if table.schema.is_primary_key_table else "unaware bucket"
            raise self.fail(f"table '{args['table']}' has bucket = {table.options.bucket} ({mode}): only a "
                            f"fixed-bucket table can be rescaled")
        snapshot = table.snapshot_manager.latest_id()
        specs = self.partition_selection(session, table, args["partitions"], args["where"])
        if snapshot is None:
            raise self.fail(f"table '{args['table']}' has no snapshot, no need to rescale")
        if specs == []:
            return [(True,)]  # no partition matches: nothing to rewrite, as paimon-spark
        predicate = None if specs is None else specs_predicate(table.schema, specs)
        entries = table.new_scan().filter(predicate).with_snapshot(snapshot).plan_entries()
        if not entries:
            return [(True,)]  # the chosen partitions hold no file: nothing to rewrite, no snapshot
        read = {f.file_name for s in table.new_scan().filter(predicate).with_snapshot(snapshot).plan().splits
                for f in s.files}
        if any(e.file.file_name not in read for e in entries):  # level-0 files a batch read leaves out
            compact(session.spark, table, predicate, full=True)
            snapshot = table.snapshot_manager.latest_id()
        # read one snapshot; the overwrite refuses to replace what another writer committed after it
        source = session.scan_dataframe(table.travel({"scan.snapshot-id": str(snapshot)}), None, predicate)
        rescaled = table.copy({"bucket": str(bucket_num or table.options.bucket), LAST_SAFE_SNAPSHOT: str(snapshot)})
        session.write(source, rescaled, overwrite=True, dynamic=True)
        return [(True,)]
