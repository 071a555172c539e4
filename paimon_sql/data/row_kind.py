"""Row kinds: what a row of a primary-key table means (``_VALUE_KIND`` in data files)."""

import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.exceptions import SchemaError

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
SHORT_STRINGS = ("+I", "-U", "+U", "-D")


def is_add(kinds: pa.Array) -> pa.Array:
    """Rows that carry a value (+I, +U) as opposed to retracting one (-U, -D)."""
    return pc.or_(pc.equal(kinds, INSERT), pc.equal(kinds, UPDATE_AFTER))


def from_short_strings(column: pa.Array, field: str) -> pa.Array:
    """'+I'/'-U'/'+U'/'-D' (the ``rowkind.field`` column) → int8 kinds; anything else is an error."""
    codes = pc.index_in(column, value_set=pa.array(SHORT_STRINGS))
    if codes.null_count:
        bad = pc.filter(column, pc.is_null(codes))[0].as_py()
        raise SchemaError(f"rowkind.field '{field}' has value {bad!r}; expected one of {', '.join(SHORT_STRINGS)}")
    return codes.cast(pa.int8())
