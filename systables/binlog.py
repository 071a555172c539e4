"""``t$binlog``: ``$audit_log`` with each data column as an ARRAY — ``[value]`` for +I/-D, and
``[before, after]`` for an update whose -U/+U pair a stream delivers together (a batch read has
no such pairs: merging folds them away)."""

from paimon_sql.data.types import ArrayType, DataField
from paimon_sql.systables.audit_log import ROWKIND_FIELD, AuditLogTable
from paimon_sql.systables.base import register


@register
class BinlogTable(AuditLogTable):
    name = "binlog"

    @property
    def fields(self):
        return [ROWKIND_FIELD] + [DataField(f.id, f.name, ArrayType(element=f.type)) for f in self.table.schema.fields]

    def to_dataframe(self, session, columns=None, predicate=None):
        # the pushed filter would speak of arrays here: scalar conjuncts on data columns do not apply
        df = self.row_kind_dataframe(session, columns, None, mode="binlog")
        return df.select(*[f"`{c}`" for c in (columns or self.field_names)])
