"""``refresh_object_table``: Paimon 1.0's procedure, which wrote an object table's rows from a listing.

Since Paimon 2.0 an object table is the listing of its location made at each read
(:mod:`paimon_sql.table.object_table`): there is nothing to refresh, and Paimon 2.0 has no such
procedure. The name stays, so that a 1.0 script calling it fails in one line saying so.
"""

from __future__ import annotations

from paimon_sql.procedures.base import columns, register, required
from paimon_sql.procedures.unsupported import Refused


@register
class RefreshObjectTableProcedure(Refused):
    name = "refresh_object_table"
    parameters = (required("table", "STRING"),)
    output = columns("file_number BIGINT NOT NULL")
    description = "Paimon 1.0's refresh of an object table; refused: since 2.0 an object table lists its files at each read."
    needs = ("Paimon 1.0's object tables; since Paimon 2.0 an object table lists the files under its directory at "
             "each read, so there is nothing to refresh")
