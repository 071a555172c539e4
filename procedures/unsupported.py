"""paimon-spark procedures that need catalog or table features paimon-sql does not have.

Each is registered with paimon-spark's exact signature and output columns, so a script calling it
gets its arguments checked as paimon-spark checks them and then one line saying what the procedure
needs, instead of ``unknown procedure``. Nothing is changed.
"""

from __future__ import annotations

from paimon_sql.procedures.base import Procedure, optional, register, required


class Refused(Procedure):
    """A procedure whose every call is refused, naming what it needs (``needs``)."""

    needs = ""

    def call(self, session, args):
        raise self.fail(f"not supported by paimon-sql: it needs {self.needs}")


@register
class AlterViewDialectProcedure(Refused):
    name = "alter_view_dialect"
    parameters = (required("view", "STRING"), required("action", "STRING"), optional("engine", "STRING"),
                  optional("query", "STRING"))
    description = "Add, update or drop a view's query for one engine dialect (needs view dialects)."
    needs = "views with per-engine dialects (Paimon's REST catalog); views here keep one Spark SQL query"


_GLOBAL_INDEX = ("global indexes (Paimon 2.0's indexes over row-tracking and data-evolution tables), which "
                 "paimon-sql does not build")


@register
class CreateGlobalIndexProcedure(Refused):
    name = "create_global_index"
    parameters = (required("table", "STRING"), required("index_column", "STRING"), required("index_type", "STRING"),
                  optional("partitions", "STRING"), optional("options", "STRING"))
    description = "Build a global index on a column (needs row tracking)."
    needs = _GLOBAL_INDEX


@register
class ReassignRowIdProcedure(Refused):
    name = "reassign_row_id"
    parameters = (required("table", "STRING"), optional("partitions", "STRING"))
    description = "Assign new row ids to a row-tracking table's files (needs row tracking)."
    needs = "reassigning row ids, which paimon-sql does not do (rows keep the ids a commit gave them)"


@register
class CompactChainTableProcedure(Refused):
    name = "compact_chain_table"
    parameters = (required("table", "STRING"), required("partition", "STRING"), optional("overwrite", "BOOLEAN"))
    description = "Merge a chain table's snapshot and delta branches into a partition (needs chain tables)."
    needs = "chain tables ('chain-table.enabled'), which paimon-sql does not read or write"
