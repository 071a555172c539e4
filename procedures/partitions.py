"""``mark_partition_done``: paimon-spark's MarkPartitionDoneProcedure.

``partitions`` is ``;``-separated specs, each ``k=v,k2=v2`` naming every partition column (a mark
belongs to one partition directory). The table's ``partition.mark-done-action`` says what marking
does (:mod:`paimon_sql.maintenance.mark_partition_done`): ``success-file`` writes the ``_SUCCESS`` file; the
metastore, HTTP and custom actions are refused in one line before anything is written. As in Java,
a partition is marked whether or not it holds data yet (a day with no rows can be complete too).
"""

from __future__ import annotations

from paimon_sql.exceptions import PaimonError, ProcedureError
from paimon_sql.maintenance.mark_partition_done import mark_done
from paimon_sql.procedures.base import Procedure, register, required


@register
class MarkPartitionDoneProcedure(Procedure):
    name = "mark_partition_done"
    parameters = (required("table", "STRING"), required("partitions", "STRING"))
    description = "Mark partitions done by the table's 'partition.mark-done-action' (a _SUCCESS file)."

    def call(self, session, args):
        table = self.table(session, args["table"])
        keys = table.schema.partition_keys
        if not keys:
            raise self.fail(f"table '{args['table']}' is not partitioned: there is no partition to mark done")
        try:
            specs = self.partition_specs(table, args["partitions"])
        except ProcedureError:
            raise
        except PaimonError as e:  # a value that is not of its column's type
            raise self.fail(str(e)) from None
        for spec in specs:
            if len(spec) != len(keys):
                raise self.fail(f"partition '{','.join(f'{k}={v}' for k, v in spec.items())}' must name every "
                                f"partition column ({', '.join(keys)})")
        try:
            mark_done(table, [[spec[k] for k in keys] for spec in specs])
        except PaimonError as e:
            raise self.fail(str(e)) from None
        return [(True,)]
