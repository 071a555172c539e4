"""``compact_database``: ``compact`` every matching table of the warehouse, as paimon-spark's
CompactDatabaseProcedure.

Names are chosen by Java regular expressions matched against the whole name (Python's
``re.fullmatch`` here): ``including_databases`` against the database name (default ``.*``),
``including_tables`` (default ``.*``) and ``excluding_tables`` against ``db.table``. Each table is
compacted as ``CALL sys.compact(table => 'db.t', options => options)`` would (full compaction, each
bucket in a Spark task, one COMPACT snapshot per table). A table that fails is logged and counted,
and the others still run; a format table is passed by, counted neither way (as Paimon passes by
what is not a data table); the result is Paimon's line ``Compact database finished. Success: N,
Failed: M``.
"""

from __future__ import annotations

import logging
import re

from paimon_sql.procedures.base import Procedure, bind, columns, optional, register
from paimon_sql.procedures.compact import CompactProcedure
from paimon_sql.table.format_table import FormatTable


@register
class CompactDatabaseProcedure(Procedure):
    name = "compact_database"
    parameters = (optional("including_databases", "STRING"), optional("including_tables", "STRING"),
                  optional("excluding_tables", "STRING"), optional("options", "STRING"))
    output = columns("result STRING")
    description = "Compact every table of the databases and tables the regular expressions match."

    def call(self, session, args):
        databases = self.pattern(args, "including_databases", ".*")
        including = self.pattern(args, "including_tables", ".*")
        excluding = self.pattern(args, "excluding_tables", None)
        self.dynamic_options(args["options"])  # 'k=v,...' checked before any table is touched
        catalog = session.catalog
        chosen = [f"{db}.{t}" for db in catalog.list_databases() if databases.fullmatch(db)
                  for t in catalog.list_tables(db)
                  if including.fullmatch(f"{db}.{t}") and not (excluding and excluding.fullmatch(f"{db}.{t}"))]
        failed, skipped = 0, 0
        for name in chosen:
            db, table = name.split(".", 1)
            try:
                if isinstance(self.table(session, f"`{db}`.`{table}`", format_tables=True), FormatTable):
                    skipped += 1  # as Paimon: only data tables compact; passed by, neither success nor failure
                    logging.getLogger(__name__).warning("compact_database: %s is a format table, not compacted", name)
                    continue
                CompactProcedure().call(session, bind(CompactProcedure, [], [
                    ("table", f"`{db}`.`{table}`"), ("options", args["options"])]))
            except Exception as e:  # as Paimon: one table's failure is logged and counted, the rest go on
                failed += 1
                logging.getLogger(__name__).error("compact_database: table %s failed: %s", name, e)
        return [(f"Compact database finished. Success: {len(chosen) - failed - skipped}, Failed: {failed}",)]

    def pattern(self, args, name: str, default):
        text = args[name]
        if text is None or (default is None and not text.strip()):
            return re.compile(default) if default else None
        try:
            return re.compile(text)
        except re.error as e:
            raise self.fail(f"{name} '{text}' is not a regular expression: {e}") from None
