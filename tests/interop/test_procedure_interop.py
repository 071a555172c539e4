"""After our CALL sys.<procedure>, pypaimon 2.1.0 and Java Paimon 1.0 and 2.0 read exactly the expected rows.

Each case is one partitioned table written by our writer (three overlapping inserts and a delete,
so primary-key buckets hold several sorted runs and the deletion-vector table has vectors) on which
one procedure is CALLed through SQL. Checked against a model of the rows kept apart from every
reader: our read, pypaimon's, Java's; Java's view of the snapshot directory (the ids and kinds it
lists, the EARLIEST/LATEST it resolves and the hint files); Java's time travel to the earliest kept
snapshot (pypaimon's too after expiry); and a Java write after the procedure, read back by Java and
by us. On primary-key tables that write upserts an existing key, so a row left in the wrong bucket
or level shows as a duplicate or a lost update (after rescale the table's `bucket` option is set to
the new number first: Paimon's rescale leaves it, and Java refuses to write a partition whose files
have another bucket count). All cases share one warehouse, built once; each Java version gets a copy
of it, and runs once for all of them (a JVM per case would cost seconds each).
"""

import copy
import shutil

import pyarrow as pa
import pytest
from java_paimon import java, ok, paimon_version  # noqa: F401  (fixtures: a JVM per Java version)
from spark.conftest import spark  # noqa: F401  (fixture: one SparkSession per run)

import paimon_sql
from paimon_sql.catalog import load_catalog
from paimon_sql.data import predicate as P

pytestmark = pytest.mark.interop
DELETE = 3  # the -D row kind
DATABASE = "procs"

SCHEMA = pa.schema([pa.field("p", pa.string(), False), pa.field("id", pa.int32(), False), ("v", pa.int64()),
                    ("s", pa.string())])
TABLES = {
    "pk": {"bucket": "2"},
    "pk_dv": {"bucket": "2", "deletion-vectors.enabled": "true"},
    "append": {},  # bucket -1: what sort compaction applies to
}
CALLS = {
    "compact_full": "CALL sys.compact(table => '{t}'{full})",
    "compact_minor": "CALL sys.compact(table => '{t}', compact_strategy => 'minor', options => '{trigger}')",
    "zorder": "CALL sys.compact(table => '{t}', order_strategy => 'zorder', order_by => 'id,v')",
    "expire_snapshots": "CALL sys.expire_snapshots(table => '{t}', retain_max => 2, retain_min => 1)",
    "rollback": "CALL sys.rollback(table => '{t}', snapshot => {target})",
    "rescale": "CALL sys.rescale(table => '{t}', bucket_num => 4)",
}
# an append table's compaction, as Paimon's AppendCompactCoordinator plans it, leaves fewer than
# compaction.min.file-num (5) small files of a partition alone: these tables have three or four
FULL = {"pk": "", "pk_dv": "", "append": ", options => 'compaction.min.file-num=2'"}
# minor compaction acts only past the table's triggers: set low enough for these few small files
MINOR_TRIGGER = {"pk": "num-sorted-run.compaction-trigger=2", "pk_dv": "num-sorted-run.compaction-trigger=2",
                 "append": "compaction.min.file-num=2,target-file-size=3kb"}
CASES = ([(kind, op) for op in ("compact_full", "compact_minor", "expire_snapshots", "rollback") for kind in TABLES]
         + [("append", "zorder"), ("pk", "rescale"), ("pk_dv", "rescale")])


class Model:
    """The rows a table should hold: by key for primary-key tables, a list for append tables;
    ``history`` holds the rows of every snapshot the writes made (their compactions included)."""

    def __init__(self, keyed, deletion_vectors):
        self.keyed, self.rows, self.history = keyed, ({} if keyed else []), {}
        self.deletion_vectors = deletion_vectors

    def insert(self, rows):
        for r in rows:
            if self.keyed:
                self.rows[(r[0], r[1])] = r
            else:
                self.rows.append(r)

    def delete(self, ids):
        if self.keyed:
            self.rows = {k: r for k, r in self.rows.items() if r[1] not in ids}
        else:
            self.rows = [r for r in self.rows if r[1] not in ids]

    def reset(self, rows):
        self.rows = {} if self.keyed else []
        self.insert(rows)

    def current(self):
        return ordered(self.rows.values() if self.keyed else self.rows)

    def record(self, table):
        """The rows of the snapshots committed since the last call. With deletion vectors a
        primary-key table's level-0 files are invisible to batch reads (Paimon's rule, which
        pypaimon and we follow): an APPEND snapshot shows the rows of the one before it, its own
        rows appear with the COMPACT snapshot the writer commits next."""
        for snapshot in table.snapshot_manager.snapshots():
            hidden = self.deletion_vectors and self.keyed and snapshot.commit_kind == "APPEND"
            self.history.setdefault(snapshot.id, self.history.get(snapshot.id - 1, []) if hidden else self.current())


def ordered(rows):
    return sorted((list(r) for r in rows), key=lambda r: (r[0], r[1], r[2] is None, r[2] or 0, r[3] or ""))


def arrow(rows):
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in rows], schema=SCHEMA)


def build(catalog, name, kind):
    """Table ``name`` of ``kind`` after four commits through our writer; its Model."""
    keys = [] if kind == "append" else ["p", "id"]
    table = catalog.create_table_from_arrow(name, SCHEMA, partition_keys=["p"], primary_keys=keys,
                                            options=TABLES[kind])
    model = Model(bool(keys), TABLES[kind].get("deletion-vectors.enabled") == "true")
    for rows in ([["ab"[i % 2], i, i, f"s{i}"] for i in range(40)],
                 [["ab"[i % 2], i, 100 + i, f"u{i}"] for i in range(10)],
                 [["ab"[i % 2], i, 200 + i, None] for i in range(5, 15)]):
        table.write_arrow(arrow(rows))
        model.insert(rows)
        model.record(table)
    gone = [r for r in model.current() if r[1] in (30, 31, 7)]
    if keys:  # retractions by key, as a primary-key DELETE writes them
        table.write_arrow(arrow(gone), row_kinds=[DELETE] * len(gone))
    else:
        table.delete_where(P.is_in("id", [30, 31, 7]))
    model.delete({30, 31, 7})
    model.record(table)
    return model


class Case:
    """One table and the procedure CALLed on it; ``error`` is what the CALL raised, if anything."""

    def __init__(self, session, kind, op):
        self.name, self.error = f"{DATABASE}.{kind}_{op}", None
        self.model = build(session.catalog, self.name, kind)
        table = session.catalog.get_table(self.name)
        before = [s.id for s in table.snapshot_manager.snapshots()]
        target = sorted(self.model.history)[1]  # rollback: to the first snapshot after the first insert's
        try:
            call = CALLS[op].format(t=self.name, trigger=MINOR_TRIGGER[kind], full=FULL[kind], target=target)
            session.sql(call).collect()
            if op == "rescale":  # as Paimon's, rescale leaves the option: writers need it set to match
                session.sql(f"ALTER TABLE {self.name} SET TBLPROPERTIES ('bucket' = '4')").collect()
        except Exception as e:  # noqa: BLE001  (raised again by the case's test)
            self.error = e
            return
        self.kept = {"expire_snapshots": before[-2:], "rollback": [i for i in before if i <= target]}.get(op)
        if op == "rollback":
            self.model.reset(self.model.history[target])
        self.snapshots = list(table.snapshot_manager.snapshots())
        self.files = table.new_scan().plan_entries()
        self.ours = ordered(list(r.values()) for r in table.to_arrow().to_pylist())
        self.expected = self.model.current()
        self.java_row = ["a", 1, -1, "java"] if self.model.keyed else ["c", 1000, -1, "java"]

    def java_commands(self, warehouse):
        """Read, list snapshots, travel to the earliest, write one row, read again."""
        w = dict(warehouse=warehouse, table=self.name)
        return [dict(op="read", **w), dict(op="snapshots", **w), dict(op="read", snapshot=self.snapshots[0].id, **w),
                dict(op="write", rows=[self.java_row], **w), dict(op="read", **w)]


@pytest.fixture(scope="module")
def cases(spark, tmp_path_factory):  # noqa: F811
    """Every case's table and CALL in one warehouse: (warehouse, {(kind, op): Case})."""
    warehouse = str(tmp_path_factory.mktemp("procedures") / "warehouse")
    session = paimon_sql.connect(warehouse, spark=spark)
    try:
        session.sql(f"CREATE DATABASE {DATABASE}")
        yield warehouse, {(kind, op): Case(session, kind, op) for kind, op in CASES}
    finally:
        paimon_sql.session.route(spark, None)
        paimon_sql.session.hooks.uninstall(spark)
        spark.sql(f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")


@pytest.fixture(scope="module")
def java_runs(cases, java, tmp_path_factory):  # noqa: F811
    """Java's commands for every case in one batch, on a copy of the warehouse of its own (Java
    writes): (the copy, {(kind, op): Java's results})."""
    warehouse, built = cases
    own = str(tmp_path_factory.mktemp(f"procedures-java{java.version}") / "warehouse")
    shutil.copytree(warehouse, own)
    ran = {key: c for key, c in built.items() if c.error is None}
    results = iter(java.run([cmd for c in ran.values() for cmd in c.java_commands(own)]))
    return own, {key: [next(results) for _ in c.java_commands(own)] for key, c in ran.items()}


@pytest.mark.parametrize("kind, op", CASES, ids=[f"{kind}-{op}" for kind, op in CASES])
def test_readers_after_procedure(kind, op, cases, java_runs, pypaimon):
    c = cases[1][kind, op]
    if c.error is not None:
        raise c.error
    warehouse, java_results = java_runs
    ids = [s.id for s in c.snapshots]
    if c.kept is not None:
        assert ids == c.kept
    if op in ("compact_full", "compact_minor", "zorder"):  # the CALL did rewrite files (a sort compaction
        # is a dynamic-partition overwrite, as paimon-spark's)
        assert c.snapshots[-1].commit_kind == ("OVERWRITE" if op == "zorder" else "COMPACT")
    if op == "rescale":
        assert {e.bucket for e in c.files} <= set(range(4)) and max(e.bucket for e in c.files) >= 2
    assert c.ours == c.expected
    theirs = pypaimon(op="read", warehouse=warehouse, table=c.name, snapshot=ids[-1])  # Java wrote after it
    assert ordered(r.values() for r in theirs) == c.expected

    read, listed, travelled, _, after = [ok(r) for r in java_results[kind, op]]
    assert ordered(read) == c.expected
    assert listed["ids"] == ids and (listed["earliest"], listed["latest"]) == (ids[0], ids[-1])
    assert listed["kinds"] == [s.commit_kind for s in c.snapshots] and listed["latest_hint"] == ids[-1]
    if op == "expire_snapshots":
        assert listed["earliest_hint"] == ids[0]
    if ids[0] in c.model.history:  # a snapshot the writes made, not one the procedure added
        assert ordered(travelled) == c.model.history[ids[0]]
    if op == "expire_snapshots":
        theirs = pypaimon(op="read", warehouse=warehouse, table=c.name, snapshot=ids[0])
        assert ordered(r.values() for r in theirs) == c.model.history[ids[0]]
    model = copy.deepcopy(c.model)  # the case's model stays as the procedure left it, for the other version
    model.insert([c.java_row])
    ours_after = ordered(list(r.values()) for r in load_catalog(warehouse).get_table(c.name).to_arrow().to_pylist())
    assert ordered(after) == ours_after == model.current()
