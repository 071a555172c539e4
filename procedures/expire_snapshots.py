"""``expire_snapshots``: paimon-spark's ExpireSnapshotsProcedure over :func:`expire_snapshots`.

Arguments left out come from the table's options (with ``options`` applied for this run), as
paimon-spark's ``fillInSnapshotOptions`` does; ``older_than`` is a local timestamp
(``'2024-05-01 12:00:00[.fff]'``) and takes the place of ``snapshot.time-retained``.
"""

from __future__ import annotations

import datetime as dt

from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.procedures.base import Procedure, columns, optional, register, required


@register
class ExpireSnapshotsProcedure(Procedure):
    name = "expire_snapshots"
    parameters = (required("table", "STRING"), optional("retain_max", "INT"), optional("retain_min", "INT"),
                  optional("older_than", "STRING"), optional("max_deletes", "INT"), optional("options", "STRING"))
    output = columns("deleted_snapshots_count INT")
    description = ("Expire old snapshots (retain_min/retain_max/older_than/max_deletes, else the table's "
                   "snapshot.* options) and delete the files only they referenced.")

    def call(self, session, args):
        older_than = self.timestamp(args["older_than"])
        for key in ("retain_max", "retain_min", "max_deletes"):
            if args[key] is not None and args[key] < 0:
                raise self.fail(f"{key} must not be negative, got {args[key]}")
        if None not in (args["retain_max"], args["retain_min"]) and args["retain_max"] < args["retain_min"]:
            raise self.fail(f"retain_max ({args['retain_max']}) must not be less than retain_min ({args['retain_min']})")
        table = self.table(session, args["table"]).copy(self.dynamic_options(args["options"]))
        return [(expire_snapshots(table, args["retain_max"], args["retain_min"], older_than, args["max_deletes"]),)]

    def timestamp(self, text):
        if text is None or not text.strip():
            return None
        try:
            return dt.datetime.fromisoformat(text.strip())
        except ValueError:
            raise self.fail(f"older_than must be a timestamp such as '2024-05-01 12:00:00', got '{text}'") from None
