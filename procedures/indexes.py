"""``rewrite_file_index`` and ``materialize_deletion_vectors``: paimon-spark's procedures on the
indexes kept beside data files.

``rewrite_file_index`` re-indexes the live data files of the partitions ``where`` chooses (all when
not given) by the table's current ``file-index.*`` options, one Spark task per file, and commits
one COMPACT snapshot (:mod:`paimon_sql.maintenance.rewrite_file_index`). It returns the partitions and
files whose index changed (paimon-spark counts every file it visited, changed or not; a file whose
index is already right is not rewritten here, so a second run writes nothing and returns 0, 0).

``drop_global_index`` counts a column's global index files (Java 2.0's indexes over row-tracking
tables, which paimon-sql does not build) as paimon-spark does: ``dry_run`` or none found answers
``true`` and the count; dropping files it found is refused, as paimon-sql does not commit to tables
with global indexes.

``materialize_deletion_vectors`` is, as in paimon-spark, for unaware-bucket data-evolution tables
with deletion vectors: each row id group with deleted rows is rewritten without them, its rows
given new row ids, one COMPACT snapshot (:func:`paimon_sql.spark.compact.materialize_deletion_vectors`).
Other tables are refused, as paimon-spark refuses them; ``CALL sys.compact`` drops the rows deletion
vectors delete on any deletion-vector table.
"""

from __future__ import annotations

from functools import partial

from paimon_sql.data import binary_row
from paimon_sql.data.partition_names import specs_predicate
from paimon_sql.maintenance.rewrite_file_index import rewrite
from paimon_sql.read import data_evolution
from paimon_sql.spark.compact import materialize_deletion_vectors
from paimon_sql.procedures.base import Procedure, columns, optional, register, required
from paimon_sql.spark.tasks import guarded, run_tasks


@register
class RewriteFileIndexProcedure(Procedure):
    name = "rewrite_file_index"
    rewrites_files = True
    parameters = (required("table", "STRING"), optional("where", "STRING"))
    output = columns("written_partitions INT", "written_indexes INT")
    description = "Rebuild the file indexes of a table's data files by its current file-index options."

    def call(self, session, args):
        table = self.table(session, args["table"])
        specs = self.partition_selection(session, table, None, args["where"])
        if specs == []:
            return [(0, 0)]

        def in_tasks(fn, items):
            outcomes = run_tasks(session.spark, f"paimon rewrite_file_index {table.name}", partial(guarded, fn), items)
            errors = [v for ok, v in outcomes if not ok]
            if errors:
                raise self.fail(f"rewriting the file index of table '{args['table']}' failed, nothing committed: "
                                f"{errors[0]}")
            return [v for _, v in outcomes]

        predicate = None if specs is None else specs_predicate(table.schema, specs)
        _, partitions, files = rewrite(table, predicate, run=in_tasks)
        return [(partitions, files)]


@register
class DropGlobalIndexProcedure(Procedure):
    name = "drop_global_index"
    parameters = (required("table", "STRING"), required("index_column", "STRING"), required("index_type", "STRING"),
                  optional("partitions", "STRING"), optional("dry_run", "BOOLEAN"))
    output = columns("result BOOLEAN", "dropped_file_count BIGINT")
    description = "Drop a column's global index files (found none: nothing to do; dropping some is not supported)."

    def call(self, session, args):
        names = [c.strip() for c in args["index_column"].split(",") if c.strip()]
        if not names:
            raise self.fail("index_column must name at least one column")
        table = self.table(session, args["table"])
        schema = table.schema
        missing = [n for n in names if n not in schema.field_names]
        if missing:
            raise self.fail(f"column '{missing[0]}' does not exist in table '{args['table']}'")
        specs = self.partition_specs(table, args["partitions"]) if (args["partitions"] or "").strip() else None
        latest = table.snapshot_manager.latest()
        if latest is None:
            raise self.fail(f"table '{args['table']}' has no snapshot")
        ids = [schema.field(n).id for n in names]
        types = [f.type for f in schema.fields_of(schema.partition_keys)]

        def chosen(partition: bytes) -> bool:
            values = dict(zip(schema.partition_keys, binary_row.from_bytes(partition, types)))
            return specs is None or any(all(values[k] == v for k, v in spec.items()) for spec in specs)
        index_type = args["index_type"].strip().lower()
        found = [e for e in (table.index_manifest_entries(latest.index_manifest) if latest.index_manifest else [])
                 if e.index_type == index_type and e.global_index is not None
                 and [e.global_index.index_field_id, *(e.global_index.extra_field_ids or ())] == ids
                 and chosen(e.partition)]
        if found and not args["dry_run"]:
            raise self.fail(f"table '{args['table']}' has {len(found)} {index_type} global index file(s) on "
                            f"{', '.join(names)}: dropping them is not supported by paimon-sql, which does not "
                            "commit to tables with global indexes")
        return [(True, len(found))]


@register
class MaterializeDeletionVectorsProcedure(Procedure):
    name = "materialize_deletion_vectors"
    rewrites_files = True
    parameters = (required("table", "STRING"), optional("partitions", "STRING"), optional("options", "STRING"),
                  optional("where", "STRING"))
    description = "Apply deletion vectors and assign new row ids (unaware-bucket data-evolution tables only)."

    def call(self, session, args):
        if (args["partitions"] or "").strip() and (args["where"] or "").strip():
            raise self.fail("partitions and where cannot be used together")
        table = self.table(session, args["table"]).copy(self.dynamic_options(args["options"]))
        if not data_evolution.enabled(table) or table.options.bucket != -1:
            raise self.fail(f"materializing deletion vectors only supports unaware-bucket data-evolution tables "
                            f"('data-evolution.enabled'); table '{args['table']}' is not one (CALL sys.compact "
                            f"drops the rows its deletion vectors delete)")
        specs = self.partition_selection(session, table, args["partitions"], args["where"])
        if specs == []:
            return [(True,)]
        predicate = None if specs is None else specs_predicate(table.schema, specs)
        materialize_deletion_vectors(session.spark, table, predicate)
        return [(True,)]
