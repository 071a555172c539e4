"""``rewrite_file_index`` and ``materialize_deletion_vectors``: paimon-spark's procedures on the
indexes kept beside data files.

``rewrite_file_index`` re-indexes the live data files of the partitions ``where`` chooses (all when
not given) by the table's current ``file-index.*`` options, one Spark task per file, and commits
one COMPACT snapshot (:mod:`paimon_sql.maintenance.rewrite_file_index`). It returns the partitions and
files whose index changed (paimon-spark counts every file it visited, changed or not; a file whose
index is already right is not rewritten here, so a second run writes nothing and returns 0, 0).

``materialize_deletion_vectors`` is, in paimon-spark, only for unaware-bucket data-evolution tables
(it applies the vectors and assigns new row ids); paimon-sql has no data-evolution tables, so it
checks its arguments and refuses, as paimon-spark refuses every other table. ``CALL sys.compact``
drops the rows deletion vectors delete on any deletion-vector table.
"""

from __future__ import annotations

from functools import partial

from paimon_sql.data.partition_names import specs_predicate
from paimon_sql.maintenance.rewrite_file_index import rewrite
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
class MaterializeDeletionVectorsProcedure(Procedure):
    name = "materialize_deletion_vectors"
    rewrites_files = True
    parameters = (required("table", "STRING"), optional("partitions", "STRING"), optional("options", "STRING"),
                  optional("where", "STRING"))
    description = "Apply deletion vectors and assign new row ids (unaware-bucket data-evolution tables only)."

    def call(self, session, args):
        if (args["partitions"] or "").strip() and (args["where"] or "").strip():
            raise self.fail("partitions and where cannot be used together")
        self.table(session, args["table"]).copy(self.dynamic_options(args["options"]))
        raise self.fail(f"materializing deletion vectors only supports unaware-bucket data-evolution tables "
                        f"('data-evolution.enabled', which paimon-sql does not support); table '{args['table']}' "
                        f"is not one (CALL sys.compact drops the rows its deletion vectors delete)")
