"""Runs inside .venv-pypaimon (Apache Paimon's Python API, pinned older pyarrow); never imports us.

Usage: python pypaimon_driver.py '<json command>'  → prints one JSON document on stdout;
python pypaimon_driver.py -  → commands from stdin, one a line, each answered on one line (``serve``):
one process (its imports, about 2 s of CPU) for many commands (tests/pypaimon_process.py).

Commands:
  {"op": "read", "warehouse": W, "table": "db.t", "snapshot": N|null, "tag": T|null,
   "columns": [...]|null}                                              → rows (list of dicts)
  {"op": "snapshots", "warehouse": W, "table": "db.t"}                → [snapshot ids]
  {"op": "bucket_of", "warehouse": W, "table": "db.t"}                → {"<json row>": bucket} of files
  {"op": "scenario", "warehouse": W, "name": S}                        → builds a named table
  {"op": "append", "warehouse": W, "table": "db.t", "rows": [...], "fixed": F} → appends rows (one commit;
                                                                        a postpone table's: fixed buckets if F)
  {"op": "files", "warehouse": W, "table": "db.t"}                     → [bucket, total_buckets, level, name]

Every command may carry "catalog": {options} instead of "warehouse" (a REST catalog: "metastore": "rest",
"uri", "warehouse", "token.provider", "token"); these catalog-level commands are for it:
  {"op": "create_database", "name": D}
  {"op": "create_table", "table": "db.t", "columns": [[name, arrow type, nullable]], "primary_keys": [...],
   "partition_keys": [...], "options": {...}}
  {"op": "add_column", "table": "db.t", "column": C, "type": "BIGINT"}  → ALTER TABLE ADD COLUMN
  {"op": "create_tag", "table": "db.t", "tag": T}                       → the latest snapshot tagged
  {"op": "tag_snapshot", "table": "db.t", "tag": T}                     → the tagged snapshot's id
  {"op": "drop_table", "table": "db.t"}
  {"op": "tables", "database": D}                                       → the database's table names
"""

import datetime
import decimal
import json
import sys

import pyarrow as pa
from pypaimon import CatalogFactory, Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange


def _jsonable(v):
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time, decimal.Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return v.hex()
    return v


def _rows(table):
    return [{k: _jsonable(v) for k, v in r.items()} for r in table.to_pylist()]


def read_table(table, columns=None):
    """All rows of a pypaimon table (also used by bench/pypaimon_core.py); ``columns``: a projection,
    which may name a row-tracking table's _ROW_ID and _SEQUENCE_NUMBER."""
    rb = table.new_read_builder()
    if columns is not None:
        rb = rb.with_projection(columns)
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def _read(cat, name, snapshot=None, tag=None, columns=None):
    t = cat.get_table(name)
    if tag is not None:
        t = t.copy({"scan.tag-name": tag})
    return read_table(t if snapshot is None else t.copy({"scan.snapshot-id": str(snapshot)}), columns)


def commit(table, data):
    """One batch commit of ``data`` (also used by bench/pypaimon_core.py)."""
    wb = table.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(data)
    c.commit(w.prepare_commit())
    w.close()
    c.close()


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("value", pa.float64()),
                    pa.field("dt", pa.string(), nullable=False)])


def _scenario(cat, name):
    cat.create_database("db", True)
    if name == "append_partitioned":
        cat.create_table("db.append_partitioned", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]), False)
        t = cat.get_table("db.append_partitioned")
        commit(t, pa.table({"id": [1, 2, 3], "name": ["a", "b", None], "value": [1.0, 2.0, 3.0],
                             "dt": ["2024-01-01", "2024-01-01", "2024-01-02"]}, schema=SCHEMA))
        commit(t, pa.table({"id": [4], "name": ["dddddddddddddddddddddd"], "value": [4.5], "dt": ["2024-01-02"]},
                            schema=SCHEMA))
    elif name == "pk_rowkind":
        schema = pa.schema(list(SCHEMA) + [pa.field("op", pa.string())])
        cat.create_table("db.pk_rowkind", Schema.from_pyarrow_schema(
            schema, partition_keys=["dt"], primary_keys=["id", "dt"],
            options={"bucket": "2", "rowkind.field": "op"}), False)
        t = cat.get_table("db.pk_rowkind")
        commit(t, pa.table({"id": [1, 2, 3, 4], "name": ["a", "b", "c", "d"], "value": [1.0, 2.0, 3.0, 4.0],
                             "dt": ["x", "x", "y", "y"], "op": ["+I", "+I", "+I", "+I"]}, schema=schema))
        commit(t, pa.table({"id": [2, 3], "name": ["b2", "c"], "value": [20.0, 3.0], "dt": ["x", "y"],
                             "op": ["+U", "-D"]}, schema=schema))
        commit(t, pa.table({"id": [5, 1], "name": ["e", "a3"], "value": [5.0, 10.0], "dt": ["x", "x"],
                             "op": ["+I", "+U"]}, schema=schema))
    elif name == "pk_dynamic":
        cat.create_table("db.pk_dynamic", Schema.from_pyarrow_schema(
            SCHEMA, primary_keys=["id"], options={"bucket": "-1", "dynamic-bucket.target-row-num": "3"}), False)
        t = cat.get_table("db.pk_dynamic")
        commit(t, pa.table({"id": [1, 2, 3, 4, 5], "name": list("abcde"), "value": [1.0] * 5, "dt": ["d"] * 5},
                            schema=SCHEMA))
        commit(t, pa.table({"id": [2, 6], "name": ["B", "f"], "value": [2.0, 6.0], "dt": ["d", "d"]}, schema=SCHEMA))
    elif name == "pk_tags":
        cat.create_table("db.pk_tags", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"],
                                                                   options={"bucket": "1"}), False)
        t = cat.get_table("db.pk_tags")
        commit(t, pa.table({"id": [1, 2], "name": ["a", "b"], "value": [1.0, 2.0], "dt": ["d", "d"]}, schema=SCHEMA))
        t.create_tag("v1")
        commit(t, pa.table({"id": [2, 3], "name": ["B", "c"], "value": [2.5, 3.0], "dt": ["d", "d"]}, schema=SCHEMA))
    elif name == "evolved":
        from pypaimon.schema.data_types import AtomicType
        from pypaimon.schema.schema_change import SchemaChange
        cat.create_table("db.evolved", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"],
                                                                   options={"bucket": "1"}), False)
        commit(cat.get_table("db.evolved"), pa.table({"id": [1, 2], "name": ["a", "b"], "value": [1.0, 2.0],
                                                      "dt": ["d", "d"]}, schema=SCHEMA))
        cat.alter_table("db.evolved", [SchemaChange.add_column("extra", AtomicType("STRING")),
                                       SchemaChange.rename_column("name", "label"),
                                       SchemaChange.drop_column("value")])
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("label", pa.string()),
                            pa.field("dt", pa.string(), nullable=False), ("extra", pa.string())])
        commit(cat.get_table("db.evolved"), pa.table({"id": [2, 3], "label": ["B", "c"], "dt": ["d", "d"],
                                                      "extra": ["x2", "x3"]}, schema=schema))
    elif name == "bucket_keys":
        for key_name, arrow_type, values in (
                ("int_key", pa.int32(), list(range(-50, 50))),
                ("bigint_key", pa.int64(), [i * 7919 - 10 ** 12 for i in range(100)]),
                ("string_key", pa.string(), [f"k{i}" * (i % 5 + 1) for i in range(100)])):
            schema = pa.schema([pa.field("k", arrow_type, nullable=False), ("v", pa.int64())])
            cat.create_table(f"db.{key_name}", Schema.from_pyarrow_schema(schema, primary_keys=["k"],
                                                                         options={"bucket": "5"}), False)
            commit(cat.get_table(f"db.{key_name}"), pa.table({"k": values, "v": list(range(100))}, schema=schema))
        schema = pa.schema([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string(), nullable=False),
                            ("v", pa.int64())])
        cat.create_table("db.composite_key", Schema.from_pyarrow_schema(schema, primary_keys=["a", "b"],
                                                                        options={"bucket": "7"}), False)
        commit(cat.get_table("db.composite_key"),
                pa.table({"a": [i % 13 for i in range(100)], "b": [f"s{i}-long-string-{i}" for i in range(100)],
                          "v": list(range(100))}, schema=schema))
    elif name == "postpone":  # bucket = -2: postpone writes (invisible), a fixed-bucket write, deletes
        schema = pa.schema(list(SCHEMA) + [pa.field("op", pa.string())])
        cat.create_table("db.postpone", Schema.from_pyarrow_schema(
            schema, partition_keys=["dt"], primary_keys=["id", "dt"],
            options={"bucket": "-2", "rowkind.field": "op"}), False)
        t = cat.get_table("db.postpone")
        commit(t, pa.table({"id": [1, 2, 3, 1], "name": ["a", "b", "c", "a2"], "value": [1.0, 2.0, 3.0, 1.5],
                             "dt": ["x", "x", "y", "x"], "op": ["+I", "+I", "+I", "+U"]}, schema=schema))
        commit_fixed(t, pa.table({"id": [4, 5], "name": ["d", "e"], "value": [4.0, 5.0], "dt": ["x", "z"],
                                   "op": ["+I", "+I"]}, schema=schema))
        commit(t, pa.table({"id": [2, 6], "name": ["b", "f"], "value": [2.0, 6.0], "dt": ["x", "y"],
                             "op": ["-D", "+I"]}, schema=schema))
    elif name == "row_tracking":  # row ids: 0-2 in snapshot 1, then 3-5 over two partitions in snapshot 2
        cat.create_table("db.row_tracking", Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], options={"row-tracking.enabled": "true"}), False)
        t = cat.get_table("db.row_tracking")
        commit(t, pa.table({"id": [1, 2, 3], "name": ["a", "b", None], "value": [1.0, 2.0, 3.0],
                             "dt": ["x", "x", "x"]}, schema=SCHEMA))
        commit(t, pa.table({"id": [4, 5, 6], "name": ["d", "e", "f"], "value": [4.0, 5.0, 6.0],
                             "dt": ["y", "x", "y"]}, schema=SCHEMA))
    elif name == "data_evolution":  # row tracking + data evolution + deletion vectors; snapshot 3 updates
        # `name` of row ids 0 and 4 (pypaimon's update by row id: a file of `name` beside each group),
        # snapshot 4 deletes row id 1 (a vector keyed by the group's oldest file)
        cat.create_table("db.data_evolution", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], options={
            "row-tracking.enabled": "true", "data-evolution.enabled": "true", "deletion-vectors.enabled": "true"}),
            False)
        t = cat.get_table("db.data_evolution")
        commit(t, pa.table({"id": [1, 2, 3], "name": ["a", "b", None], "value": [1.0, 2.0, 3.0],
                             "dt": ["x", "x", "x"]}, schema=SCHEMA))
        commit(t, pa.table({"id": [4, 5, 6], "name": ["d", "e", "f"], "value": [4.0, 5.0, 6.0],
                             "dt": ["y", "x", "y"]}, schema=SCHEMA))
        wb = t.new_batch_write_builder()
        update = wb.new_update().with_update_type(["name"])
        c = wb.new_commit()
        c.commit(update.update_by_arrow_with_row_id(pa.table({"_ROW_ID": pa.array([0, 4], pa.int64()),
                                                               "name": ["A", "F"]})))
        c.close()
        from pypaimon.write.table_delete import TableDeleteByRowId  # snapshot 4: row id 1 by deletion vector
        c = wb.new_commit()
        c.commit(TableDeleteByRowId(cat.get_table("db.data_evolution")).delete([1]))
        c.close()
    else:
        raise SystemExit(f"unknown scenario {name}")


def commit_fixed(table, data):
    """One batch commit of a postpone table written straight into real buckets (pypaimon's
    ``new_postpone_fixed_bucket_write_builder``, its postpone.batch-write-fixed-bucket)."""
    wb = table.new_postpone_fixed_bucket_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(data)
    c.commit(w.prepare_commit())
    w.close()
    c.close()


def _bucket_of(cat, name):
    """key tuple (JSON) -> bucket, read file by file from the plan."""
    t = cat.get_table(name)
    rb = t.new_read_builder()
    out = {}
    for split in rb.new_scan().plan().splits():
        rows = rb.new_read().to_arrow([split])
        keys = t.table_schema.primary_keys
        for r in rows.to_pylist():
            out[json.dumps([r[k] for k in keys])] = split.bucket
    return out


def _catalog_op(cat, cmd):
    """The catalog-level commands (create, alter, tag, drop), which a REST catalog sends to its server."""
    op = cmd["op"]
    if op == "create_database":
        cat.create_database(cmd["name"], True)
    elif op == "create_table":
        schema = pa.schema([pa.field(n, getattr(pa, t)(), nullable) for n, t, nullable in cmd["columns"]])
        cat.create_table(cmd["table"], Schema.from_pyarrow_schema(
            schema, partition_keys=cmd.get("partition_keys"), primary_keys=cmd.get("primary_keys"),
            options=cmd.get("options")), False)
    elif op == "add_column":
        cat.alter_table(cmd["table"], [SchemaChange.add_column(cmd["column"], AtomicType(cmd["type"]))], False)
    elif op == "create_tag":
        cat.create_tag(cmd["table"], cmd["tag"])
    elif op == "tag_snapshot":
        return cat.get_tag(cmd["table"], cmd["tag"]).snapshot.id
    elif op == "drop_table":
        cat.drop_table(cmd["table"], False)
    elif op == "tables":
        return cat.list_tables(cmd["database"])
    else:
        raise SystemExit(f"unknown op {op}")
    return "ok"


def run(cmd):
    """The result of one command (a fresh catalog each: nothing is cached from an earlier one)."""
    cat = CatalogFactory.create(cmd.get("catalog") or {"warehouse": cmd["warehouse"]})
    op = cmd["op"]
    if op == "read":
        return _rows(_read(cat, cmd["table"], cmd.get("snapshot"), cmd.get("tag"), cmd.get("columns")))
    if op == "snapshots":
        t = cat.get_table(cmd["table"])
        latest = t.snapshot_manager().get_latest_snapshot()
        return list(range(1, latest.id + 1)) if latest else []
    if op == "bucket_of":
        return _bucket_of(cat, cmd["table"])
    if op == "scenario":
        _scenario(cat, cmd["name"])
        return "ok"
    if op == "append":  # "fixed": a postpone table's rows into real buckets (else its postpone bucket)
        t = cat.get_table(cmd["table"])
        schema = _read(cat, cmd["table"]).schema
        (commit_fixed if cmd.get("fixed") else commit)(t, pa.Table.from_pylist(cmd["rows"], schema=schema))
        return "ok"
    if op == "files":  # [bucket, total_buckets, level, file name] of every live file
        t = cat.get_table(cmd["table"])
        scan = t.new_read_builder().new_scan().file_scanner
        manifests, _ = scan.manifest_scanner()
        entries = scan.manifest_file_manager.read_entries_parallel(manifests)
        return sorted([e.bucket, e.total_buckets, e.file.level, e.file.file_name] for e in entries)
    return _catalog_op(cat, cmd)


def serve():
    """Commands from stdin, one JSON document a line, each answered by one JSON line on stdout:
    {"result": ...} or {"error": "<traceback>"}; until stdin closes. Whatever pypaimon prints goes
    to stderr (stdout carries only the answers)."""
    import traceback
    out, sys.stdout = sys.stdout, sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = {"result": run(json.loads(line))}
        except (Exception, SystemExit):
            answer = {"error": traceback.format_exc()}
        out.write(json.dumps(answer) + "\n")
        out.flush()


def main():
    if sys.argv[1] == "-":
        serve()
    else:
        json.dump(run(json.loads(sys.argv[1])), sys.stdout)


if __name__ == "__main__":
    main()
