"""paimon_sql/data/arrow_offsets.py: Arrow data as PySpark 4.1's JVM hands it to Python (empty nested
values with empty offsets buffers, read back from an IPC stream), rebuilt so that pyarrow's kernels can
read it. Without the rebuild ``nbytes`` on such a table crashes the process (a segmentation fault), which
is what crashed a Python worker writing ``array()`` or ``map()`` into a table on PySpark 4.1.2
(tests/differential/test_interop.py::nested_types runs that on PySpark 4.1.2)."""

import pyarrow as pa

from paimon_sql.data.arrow_offsets import with_offsets

MAP = pa.map_(pa.string(), pa.list_(pa.string()))


def _empty(t: pa.DataType) -> pa.Array:
    """A zero-length array of ``t`` whose buffers are all empty, as Arrow Java writes one."""
    if pa.types.is_list(t) or pa.types.is_map(t):
        child = t.value_type if pa.types.is_list(t) else pa.struct([t.key_field, t.item_field])
        return pa.Array.from_buffers(t, 0, [None, pa.py_buffer(b"")], children=[_empty(child)])
    if pa.types.is_struct(t):
        return pa.Array.from_buffers(t, 0, [None], children=[_empty(f.type) for f in t])
    if pa.types.is_string(t):
        return pa.Array.from_buffers(t, 0, [None, pa.py_buffer(b""), pa.py_buffer(b"")])
    return pa.Array.from_buffers(t, 0, [None, pa.py_buffer(b"")])


def _as_sent(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` through an IPC stream, as a Python worker reads what Spark's JVM wrote."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return pa.ipc.open_stream(sink.getvalue()).read_next_batch()


def _offsets_sizes(array: pa.Array) -> list:
    """The size of every offsets buffer in ``array`` (its own and its children's)."""
    t = array.type
    if pa.types.is_list(t) or pa.types.is_map(t):
        return [array.buffers()[1].size] + _offsets_sizes(array.values)
    if pa.types.is_struct(t):
        return [s for i in range(t.num_fields) for s in _offsets_sizes(array.field(i))]
    return [array.buffers()[1].size] if pa.types.is_string(t) else []


def test_empty_nested_values_get_their_offset():
    # array() of ARRAY<MAP<STRING, ARRAY<STRING>>>: the list has its 2 offsets, the maps under it none
    lists = pa.Array.from_buffers(pa.list_(MAP), 1, [None, pa.py_buffer(bytes(8))], children=[_empty(MAP)])
    # {x: {}}: a struct holding an empty map (1 entry list of 0 entries, its children empty)
    entries = pa.struct([MAP.key_field, MAP.item_field])
    maps = pa.Array.from_buffers(MAP, 1, [None, pa.py_buffer(bytes(8))], children=[_empty(entries)])
    structs = pa.StructArray.from_arrays([maps], ["x"])
    batch = _as_sent(pa.record_batch([pa.array([1], pa.int32()), lists, structs], names=["id", "a", "s"]))
    assert 0 in _offsets_sizes(batch.column(1)) + _offsets_sizes(batch.column(2))  # as PySpark 4.1 sends them
    for data in (batch, pa.Table.from_batches([batch])):
        fixed = with_offsets(data)
        columns = fixed.columns if isinstance(fixed, pa.RecordBatch) else [c.chunk(0) for c in fixed.columns]
        assert min(_offsets_sizes(columns[1]) + _offsets_sizes(columns[2])) >= 4
        assert fixed.schema == data.schema and fixed.to_pylist() == [{"id": 1, "a": [], "s": {"x": []}}]
    table = with_offsets(pa.Table.from_batches([batch]))
    assert table.nbytes > 0 and pa.concat_tables([table, table]).combine_chunks().num_rows == 2


def test_data_without_empty_nested_values_is_returned_as_it_is():
    batch = pa.record_batch([pa.array([1, 2]), pa.array([["a"], None], pa.list_(pa.string())),
                             pa.array([{"k": ["v"]}, {}], MAP)], names=["id", "l", "m"])
    assert with_offsets(batch) is batch
    table = pa.Table.from_batches([batch])
    assert with_offsets(table) is table
