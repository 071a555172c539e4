"""``rollback``, ``rollback_to_timestamp``, ``rollback_to_watermark``: paimon-spark's
RollbackProcedure family over :mod:`paimon_sql.maintenance.rollback`.

``rollback`` takes a ``snapshot`` id or a ``tag`` (``version``, deprecated in Paimon, is a tag name
or, all digits, a snapshot id); each returns the latest snapshot id before and after.
"""

from __future__ import annotations

from paimon_sql.maintenance import rollback as rb
from paimon_sql.procedures.base import Procedure, columns, optional, register, required

OUTPUT = columns("previous_snapshot_id BIGINT", "current_snapshot_id BIGINT")


@register
class RollbackProcedure(Procedure):
    name = "rollback"
    parameters = (required("table", "STRING"), optional("version", "STRING"), optional("snapshot", "BIGINT"),
                  optional("tag", "STRING"))
    output = OUTPUT
    description = "Roll a table back to a snapshot or tag; later snapshots, their tags and files only they used go."

    def call(self, session, args):
        given = [k for k in ("version", "snapshot", "tag") if args[k] not in (None, "")]
        if len(given) != 1:
            raise self.fail("give exactly one of snapshot, tag or version")
        table = self.table(session, args["table"])
        if args["snapshot"] is not None:
            return [rb.rollback_to_snapshot(table, args["snapshot"])]
        if args["tag"]:
            return [rb.rollback_to_tag(table, args["tag"])]
        version = args["version"].strip()
        if version.isdigit():
            return [rb.rollback_to_snapshot(table, int(version))]
        return [rb.rollback_to_tag(table, version)]


@register
class RollbackToTimestampProcedure(Procedure):
    name = "rollback_to_timestamp"
    parameters = (required("table", "STRING"), required("timestamp", "BIGINT"))
    output = OUTPUT
    description = "Roll a table back to the latest snapshot committed at or before timestamp (epoch millis)."

    def call(self, session, args):
        return [rb.rollback_to_timestamp(self.table(session, args["table"]), args["timestamp"])]


@register
class RollbackToWatermarkProcedure(Procedure):
    name = "rollback_to_watermark"
    parameters = (required("table", "STRING"), required("watermark", "BIGINT"))
    output = OUTPUT
    description = "Roll a table back to the earliest snapshot whose watermark is at least watermark."

    def call(self, session, args):
        return [rb.rollback_to_watermark(self.table(session, args["table"]), args["watermark"])]
