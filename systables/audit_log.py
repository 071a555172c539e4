"""``t$audit_log``: the table's rows with their row kind (``rowkind``: +I, -U, +U, -D) first.

A batch read merges primary-key files as a normal read does but keeps the retractions merging
leaves (a key whose last record is a -D shows as -D until compaction drops it). With
``table-read.sequence-number.enabled`` each row's ``_SEQUENCE_NUMBER`` follows ``rowkind``.
"""

import json

from paimon_sql.data import predicate as P
from paimon_sql.data.types import AtomicType, DataField
from paimon_sql.schema.table_schema import SEQUENCE_NUMBER
from paimon_sql.spark.columns import ROWKIND_NAME
from paimon_sql.spark.scan import source_reader
from paimon_sql.systables.base import SystemTable, register

ROWKIND_FIELD = DataField(-1, ROWKIND_NAME, AtomicType("VARCHAR", (2147483647,), nullable=False))


@register
class AuditLogTable(SystemTable):
    name = "audit_log"

    @property
    def with_sequence_number(self) -> bool:
        return str(self.table.options.raw.get("table-read.sequence-number.enabled", "false")).lower() == "true"

    @property
    def fields(self):
        seq = [DataField(-2, SEQUENCE_NUMBER, AtomicType("BIGINT"))] if self.with_sequence_number else []
        return [ROWKIND_FIELD] + seq + list(self.table.schema.fields)

    def to_dataframe(self, session, columns=None, predicate=None):
        return self.row_kind_dataframe(session, columns, predicate).select(
            *[f"`{c}`" for c in (columns or self.field_names)])

    def row_kind_dataframe(self, session, columns=None, predicate=None, mode: str = "true"):
        """rowkind, _SEQUENCE_NUMBER and the data columns asked for (all when ``columns`` is None);
        ``mode`` "binlog": rowkind and the columns as arrays."""
        table = self.table
        names = table.schema.field_names
        data_cols = [c for c in names if columns is None or c in columns] or names[:1]
        pushed = predicate.only(set(names)) if predicate is not None else None
        reader = source_reader(session.spark, table, session.warehouse, session.catalog_options,
                               table.new_scan().snapshot())
        reader = reader.option("paimon.row-kind", mode).option("paimon.columns", json.dumps(data_cols))
        return reader.option("paimon.filter", P.to_json(pushed)).load(table.name)
