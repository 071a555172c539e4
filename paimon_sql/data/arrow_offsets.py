"""Arrow data from Spark's JVM given the offsets pyarrow's kernels read.

A variable-size Arrow array (string, binary, list, map) of n values has n + 1 offsets. Arrow Java
leaves the offsets buffer of an empty array empty, and PySpark 4.0 and 4.1 send such arrays to Python
(to a data source writer, a ``mapInArrow`` function, ``toArrow``) for every empty nested value: the
elements of ``array()``, the entries of ``map()``, the child of a NULL list or map. pyarrow's kernels
(``cast``, ``concat``, ``take``) read the missing offset and crash the process (a segmentation fault in
a Python worker). PySpark 4.2 and later send the one offset. :func:`with_offsets` rebuilds the arrays
that hold an empty array, with an empty array that has its offset; other data is returned as it is.
"""

from __future__ import annotations

from typing import Optional, Union

import pyarrow as pa

_NESTED = (pa.types.is_list, pa.types.is_large_list, pa.types.is_map)
_VARIABLE = (pa.types.is_string, pa.types.is_binary, pa.types.is_large_string, pa.types.is_large_binary)


def with_offsets(data: Union[pa.Table, pa.RecordBatch]) -> Union[pa.Table, pa.RecordBatch]:
    """``data`` with every empty variable-size array in its columns given its offset (see the module's
    docstring); ``data`` itself when none lacks it."""
    if isinstance(data, pa.RecordBatch):
        columns = [_repaired(c) for c in data.columns]
        if all(c is None for c in columns):
            return data
        return pa.RecordBatch.from_arrays([c if c is not None else o for c, o in zip(columns, data.columns)],
                                          schema=data.schema)
    columns, changed = [], False
    for column in data.columns:
        chunks = [_repaired(c) for c in column.chunks]
        changed = changed or any(c is not None for c in chunks)
        columns.append(pa.chunked_array([c if c is not None else o for c, o in zip(chunks, column.chunks)],
                                        column.type))
    return pa.Table.from_arrays(columns, schema=data.schema) if changed else data


def _repaired(array: pa.Array) -> Optional[pa.Array]:
    """``array`` rebuilt where it holds an empty variable-size array, or None when nothing is."""
    t = array.type
    if len(array) == 0:
        return pa.array([], t) if _holds_offsets(t) else None
    if array.offset:  # a slice of ours, not an array as Spark sends it
        return None
    if any(test(t) for test in _NESTED):
        child = _repaired(array.values)
        if child is None:
            return None
        return pa.Array.from_buffers(t, len(array), array.buffers()[:2], array.null_count, children=[child])
    if pa.types.is_struct(t):
        children = [array.field(i) for i in range(t.num_fields)]
        fixed = [_repaired(c) for c in children]
        if all(f is None for f in fixed):
            return None
        return pa.Array.from_buffers(t, len(array), array.buffers()[:1], array.null_count,
                                     children=[f if f is not None else c for f, c in zip(fixed, children)])
    return None


def _holds_offsets(t: pa.DataType) -> bool:
    if any(test(t) for test in _NESTED + _VARIABLE):
        return True
    return pa.types.is_struct(t) and any(_holds_offsets(t.field(i).type) for i in range(t.num_fields))
