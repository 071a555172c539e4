"""Row filters and column masks applied to one read of a table (Paimon's table query auth).

The read is the front layer's scan of the columns a query needs; under rules it reads, besides,
the columns the filters and masks name, keeps the rows every filter accepts, and gives each
masked column its mask's value cast to the column's type, so the query sees the table's schema
unchanged. The query's own predicate is pushed into the scan only when no column is masked: pushed
against real values, it would choose rows by what the mask hides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional

import sqlglot
from pyspark.sql import functions as F
from sqlglot import exp

from paimon_sql.access.policy import Rules

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

Read = Callable[[List[str], Optional[object]], "DataFrame"]


def guarded(rules: Rules, table_columns: List[str], read: Read, columns: List[str], predicate) -> "DataFrame":
    """``read(columns, predicate)`` through ``rules``; ``table_columns``: the names the table has."""
    by_lower = {c.lower(): c for c in table_columns}
    masked = {c: rules.masks[c.lower()] for c in columns if c.lower() in rules.masks}
    wanted = list(columns)
    for text in [*rules.filters, *masked.values()]:
        for name in _columns_named(text):
            if name in by_lower and by_lower[name] not in wanted:
                wanted.append(by_lower[name])
    df = read(wanted, None if masked else predicate)
    for text in rules.filters:
        df = df.where(F.expr(f"coalesce(({text}), false)"))
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    return df.select(*[F.expr(f"CAST(({masked[c]}) AS {types[c]})").alias(c) if c in masked else F.col(f"`{c}`")
                       for c in columns])


def _columns_named(text: str) -> List[str]:
    return [c.name.lower() for c in sqlglot.parse_one(text, dialect="spark").find_all(exp.Column)]
