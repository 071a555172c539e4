"""The snapshot lifecycle through SQL: seeded random programs of INSERT, UPDATE, DELETE,
``CALL sys.compact``, tags (ALTER TABLE), a branch, ``CALL sys.expire_snapshots``,
``CALL sys.rollback`` and ``CALL sys.remove_orphan_files`` (local and distributed). After every
step each kept snapshot, tag and branch reads the rows it had when made and keeps every file it
names; after orphan removal with ``older_than`` = now the table holds only what they name.
tests/unit/test_lifecycle_safety.py runs many more programs against the core API."""

import datetime as dt
import os
import random
import time

import pytest

from paimon_sql.store.references import References, branch_tables, referenced_files
from tests.spark.conftest import rows

STEPS = 14
METADATA_DIRS = ("snapshot", "schema", "tag", "consumer", "changelog")


def on_disk(root):
    return {os.path.join(d, n) for d, _, names in os.walk(root) for n in names}


class Program:
    def __init__(self, session, rng, ddl):
        self.session, self.rng = session, rng
        session.sql(ddl)
        self.versions = {"main": {}, "b": {}}  # branch -> snapshot id -> rows it read when made
        self.tags = {}  # main's tags: name -> (snapshot id, rows)
        self.branch = None  # (tag it was made from, rows)

    def table(self, branch="main"):
        from paimon_sql.sql import parse
        t = self.session.find_table(parse.table_reference("default.t"))
        return t if branch == "main" else t.switch_to_branch(branch)

    def read(self, t, sid=None, tag=None):
        scan = t.new_scan().with_tag(tag) if tag else t.new_scan().with_snapshot(sid)
        return sorted(tuple(r.values()) for r in scan.to_arrow().to_pylist())

    def sql(self, text):
        return rows(self.session, text)

    def record(self, branch, before):
        t = self.table(branch)
        for sid in range((before or 0) + 1, (t.snapshot_manager.latest_id() or 0) + 1):
            self.versions[branch][sid] = self.read(t, sid)

    def plan(self):
        """Two inserts and a tag, then every kind of step once and some at random, shuffled."""
        r = self.rng
        ops = ["update", "delete", "compact", "expire", "rollback", "orphans", "branch", "branch_insert"]
        ops += r.choices(["insert", "tag", "expire", "rollback", "compact"], k=STEPS - len(ops) - 3)
        r.shuffle(ops)
        return ["insert", "insert", "tag"] + ops

    def step(self, op):
        """Run ``op`` (an insert when it cannot run yet: no tag to branch from, no branch)."""
        r, t = self.rng, self.table()
        sm = t.snapshot_manager
        ids = sm.listed_ids()
        if op == "branch" and not self.tags or op == "branch_insert" and not self.branch:
            op = "insert"
        before = sm.latest_id()
        if op == "insert":
            values = ", ".join(f"({r.randrange(8)}, {r.randrange(100)}, '{r.choice('ab')}')" for _ in range(3))
            self.sql(f"INSERT INTO t VALUES {values}")
        elif op == "update":
            self.sql(f"UPDATE t SET v = v + 100 WHERE id = {r.randrange(8)}")
        elif op == "delete":
            self.sql(f"DELETE FROM t WHERE id = {r.randrange(8)}")
        elif op == "compact":
            strategy = r.choice(["minor", "full"])
            self.sql(f"CALL sys.compact(table => 'default.t', compact_strategy => '{strategy}')")
        elif op == "tag":
            sid = r.choice(ids)
            name = f"tag{len(self.tags) + 1}"
            self.sql(f"ALTER TABLE t CREATE TAG `{name}` AS OF VERSION {sid}")
            self.tags[name] = (sid, self.versions["main"][sid])
        elif op == "branch":
            tag = r.choice(sorted(self.tags))
            t.branch_manager.create("b", t, tag=tag)  # no SQL statement makes a branch yet
            self.branch = (tag, self.tags[tag][1])
            self.versions["b"] = {self.tags[tag][0]: self.tags[tag][1]}
        elif op == "branch_insert":
            before = self.table("b").snapshot_manager.latest_id()
            self.sql(f"INSERT INTO `t$branch_b` VALUES ({r.randrange(8)}, {r.randrange(100)}, 'c')")
            self.record("b", before)
            return
        elif op == "expire":
            retain_min = r.randint(1, 3)
            older_than = (dt.datetime.now() + dt.timedelta(days=r.choice([0, 1]))).isoformat(" ")
            self.sql(f"CALL sys.expire_snapshots(table => 'default.t', retain_min => {retain_min}, "
                     f"retain_max => {retain_min + r.randint(0, 2)}, older_than => '{older_than}')")
        elif op == "rollback":
            if self.tags and r.random() < 0.5:
                name = r.choice(sorted(self.tags))
                target, version = self.tags[name]
                self.sql(f"CALL sys.rollback(table => 'default.t', tag => '{name}')")
            else:
                target = r.choice(ids)
                version = self.versions["main"][target]
                self.sql(f"CALL sys.rollback(table => 'default.t', snapshot => {target})")
            self.versions["main"] = {i: v for i, v in self.versions["main"].items() if i < target}
            self.versions["main"][target] = version
            self.tags = {n: tag for n, tag in self.tags.items() if tag[0] <= target}
        elif op == "orphans":
            time.sleep(0.01)
            now = dt.datetime.now().isoformat(" ")
            mode = r.choice(["local", "distributed"])
            self.sql(f"CALL sys.remove_orphan_files(table => 'default.t', older_than => '{now}', mode => '{mode}')")
            self.check_only_referenced()
        self.record("main", before)

    def check(self):
        for bt in branch_tables(self.table()):
            sm = bt.snapshot_manager
            versions = self.versions[bt.branch]
            for sid in sm.listed_ids():
                assert self.read(bt, sid) == versions[sid], (bt.branch, sid)
            for tag in bt.tag_manager.names():
                expected = self.tags[tag][1] if bt.branch == "main" else self.branch[1]
                assert self.read(bt, tag=tag) == expected, (bt.branch, tag)
            refs = References(bt)
            snaps = [sm.snapshot(i) for i in sm.listed_ids()] + [tag.snapshot for tag in bt.tag_manager.tags()]
            for snap in snaps:
                missing = [p for p in refs.whole(snap) if not os.path.exists(p)]
                assert not missing, (bt.branch, snap.id, missing)
        assert sorted(self.table().tag_manager.names()) == sorted(self.tags)

    def check_only_referenced(self):
        t = self.table()
        named = set()
        for bt in branch_tables(t):
            refs = References(bt)
            for snap in [bt.snapshot_manager.snapshot(i) for i in bt.snapshot_manager.listed_ids()] + \
                    [tag.snapshot for tag in bt.tag_manager.tags()]:
                named |= refs.whole(snap)
        left = {p for p in on_disk(t.path) - named
                if os.path.relpath(p, t.path).split(os.sep)[2 if p.startswith(t.path + "/branch/") else 0]
                not in METADATA_DIRS}
        assert not left, sorted(left)
        assert on_disk(t.path) == referenced_files(t)


@pytest.mark.parametrize("seed,ddl", [
    (1, "CREATE TABLE t (id INT, v INT, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ("
        "'primary-key'='id,dt', 'bucket'='2', 'changelog-producer'='input', 'write-only'='true')"),
    (2, "CREATE TABLE t (id INT, v INT, dt STRING) TBLPROPERTIES ("
        "'primary-key'='id', 'bucket'='1', 'deletion-vectors.enabled'='true', 'changelog-producer'='lookup')"),
    (3, "CREATE TABLE t (id INT, v INT, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ("
        "'bucket'='1', 'bucket-key'='id', 'deletion-vectors.enabled'='true', 'write-only'='true')"),
])
def test_random_sql_programs_never_lose_a_live_file(session, seed, ddl):
    program = Program(session, random.Random(seed), ddl)
    for op in program.plan():
        program.step(op)
        program.check()
    latest = program.table().snapshot_manager.latest_id()
    assert sorted(program.sql("SELECT id, v, dt FROM t")) == program.versions["main"][latest]
    assert sorted(program.sql("SELECT id, v, dt FROM `t$branch_b`")) == \
        program.versions["b"][program.table("b").snapshot_manager.latest_id()]
