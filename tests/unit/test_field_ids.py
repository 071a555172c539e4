"""Field ids of nested columns, numbered as Java Paimon 1.0 numbers them (issue 13).

The expected ids are what Paimon 1.0's ``Schema.Builder`` and ``SchemaManager`` give for the same
columns (printed by the 1.0 bundle): a top-level column's id first, then inside a ROW each field's
children before the field; ARRAY elements and MAP keys/values are walked. Before, a ROW nested in a
ROW got its first child's id (two fields, one id) and ROWs under ARRAY/MAP kept id 0.
"""

from paimon_sql.data.types import DataField, RowType, parse_type
from paimon_sql.schema import schema_change
from paimon_sql.schema.table_schema import TableSchema


def _ids(t, out):
    """(name, id) of every field, depth first."""
    for f in t.fields:
        out.append((f.name, f.id))
        inner = f.type
        while not isinstance(inner, RowType) and inner is not None:
            inner = getattr(inner, "element", None) or getattr(inner, "value", None)
        if inner is not None:
            _ids(inner, out)
    return out


def _schema():
    cols = [("id", "INT"), ("s", "ROW<a INT, b ROW<c INT>, d ARRAY<ROW<e INT>>>"), ("m", "MAP<STRING, ROW<f INT>>"),
            ("z", "INT")]
    return TableSchema.create([DataField(i, n, parse_type(t)) for i, (n, t) in enumerate(cols)])


def test_create_numbers_nested_fields_as_java():
    schema = _schema()
    assert _ids(schema, []) == [("id", 0), ("s", 1), ("a", 2), ("b", 4), ("c", 3), ("d", 6), ("e", 5), ("m", 7),
                                ("f", 8), ("z", 9)]
    assert schema.highest_field_id == 9


def test_add_column_numbers_the_column_then_its_fields():
    schema = schema_change.apply(_schema(), [schema_change.AddColumn("n", parse_type("ROW<x INT, y ROW<w INT>>"))])
    assert _ids(schema, [])[-4:] == [("n", 10), ("x", 11), ("y", 13), ("w", 12)]
    assert schema.highest_field_id == 13
