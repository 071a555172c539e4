"""``remove_orphan_files``: paimon-spark's RemoveOrphanFilesProcedure over
:func:`paimon_sql.maintenance.remove_orphan_files.remove_orphan_files`.

``table`` is ``db.t`` or ``db.*`` (every table of the database, counts summed); ``older_than`` a
local timestamp (``'2024-05-01 12:00:00[.fff]'``, default one day ago). ``mode`` is paimon-spark's:
``distributed`` (default) lists the folders and deletes the orphans in Spark tasks
(``parallelism`` of them at most, default Spark's parallelism); ``local`` does it all in the driver.
The result is the same.
"""

from __future__ import annotations

import datetime as dt

from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from paimon_sql.procedures.base import Procedure, columns, optional, register, required
from paimon_sql.spark import orphan_files as distributed
from paimon_sql.table.format_table import FormatTable

MODES = ("local", "distributed")


@register
class RemoveOrphanFilesProcedure(Procedure):
    name = "remove_orphan_files"
    parameters = (required("table", "STRING"), optional("older_than", "STRING"), optional("dry_run", "BOOLEAN", False),
                  optional("parallelism", "INT"), optional("mode", "STRING"))
    output = columns("deletedFileCount BIGINT", "deletedFileTotalLenInBytes BIGINT")
    description = ("Delete files no snapshot, tag, branch or changelog references and older than older_than "
                   "(default one day ago); dry_run only counts them.")

    def call(self, session, args):
        if args["mode"] is not None and args["mode"].strip().lower() not in MODES:
            raise self.fail(f"mode must be local or distributed, got '{args['mode']}'")
        if args["parallelism"] is not None and args["parallelism"] < 1:
            raise self.fail(f"parallelism must be at least 1, got {args['parallelism']}")
        older_than = self.millis(args["older_than"])
        local = (args["mode"] or "distributed").strip().lower() == "local"
        count = size = 0
        for table in self.tables(session, args["table"]):
            c, s = (remove_orphan_files(table, older_than, args["dry_run"]) if local else
                    distributed.remove_orphan_files(session.spark, table, older_than, args["dry_run"],
                                                    args["parallelism"]))
            count, size = count + c, size + s
        return [(count, size)]

    def millis(self, text):
        if text is None or not text.strip():
            return None
        try:
            return int(dt.datetime.fromisoformat(text.strip()).timestamp() * 1000)
        except ValueError:
            raise self.fail(f"older_than must be a timestamp such as '2024-05-01 12:00:00', got '{text}'") from None

    def tables(self, session, name: str):
        """``db.*``: every table of ``db`` but its format tables (whose directories hold only the
        user's own files: none is an orphan); else the one table."""
        name = name.strip()
        if not name.endswith(".*"):
            return [self.table(session, name)]
        found = [self.table(session, t, format_tables=True) for t in self.table_names(session, name[:-2])]
        return [t for t in found if not isinstance(t, FormatTable)]
