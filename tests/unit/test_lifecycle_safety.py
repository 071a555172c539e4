"""The snapshot lifecycle never loses a live file: random programs of writes, updates, deletes,
compactions, statistics, tags (deleted with their files, expired by time_retained, made and
dropped automatically after commits), branches, fast_forward, consumers, expiry, rollback, crashed
writers and orphan cleanup, on append and primary-key tables (partitioned or not, deletion
vectors, changelog producers, dynamic buckets, expiry and batch tags at commit).

A model keeps the rows every snapshot, tag and branch held when it was made, computed apart from
the table. After every step the snapshots on disk are the model's from the earliest on (with the
hole a fast-forward leaves when main was rolled back below the branch's first snapshot, as Java
Paimon's does), every snapshot still on disk, every tag and every branch reads exactly its model
rows, every file any of them names exists, and consumers keep their snapshots; after
``remove_orphan_files(older_than=now)`` the directory holds only what they name (and the
schema, snapshot, tag and consumer metadata)."""

import datetime as dt
import os
import shutil
import tempfile
import time
from collections import Counter
from typing import NamedTuple

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition, rule,
                                 run_state_machine_as_test)
from reliability.conftest import size as ci_or_full

from paimon_sql.catalog import load_catalog
from paimon_sql.data.predicate import equal
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from paimon_sql.maintenance.rollback import rollback_to_snapshot, rollback_to_tag
from paimon_sql.store.references import References, branch_tables, referenced_files
from paimon_sql.table.statistics import write_statistics
from paimon_sql.table.table import table_at
from paimon_sql.tag.tag_auto_creation import delete_tag, expire_tags

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64()), pa.field("dt", pa.string(), False)])
INSERT, UPDATE_AFTER, DELETE = 0, 2, 3
DAY_MILLIS = 24 * 3600 * 1000

# name: (partition keys, primary keys, options)
KINDS = {
    "append": ([], [], {"write-only": "true"}),
    "append-partitioned-dv": (["dt"], [], {"bucket": "1", "bucket-key": "id", "deletion-vectors.enabled": "true",
                                           "write-only": "true"}),
    "append-expire-at-commit": (["dt"], [], {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "3"}),
    "pk-partitioned-input": (["dt"], ["id", "dt"], {"bucket": "2", "changelog-producer": "input",
                                                    "write-only": "true"}),
    "pk-dv-lookup": ([], ["id"], {"bucket": "1", "deletion-vectors.enabled": "true", "changelog-producer": "lookup",
                                  "num-sorted-run.compaction-trigger": "2"}),
    "pk-dynamic-expire-at-commit": (["dt"], ["id", "dt"], {"bucket": "-1", "snapshot.num-retained.min": "2",
                                                           "snapshot.num-retained.max": "4"}),
    "pk-batch-tags-at-commit": (["dt"], ["id", "dt"], {"bucket": "1", "tag.automatic-creation": "batch",
                                                       "tag.num-retained-max": "3", "snapshot.num-retained.min": "1",
                                                       "snapshot.num-retained.max": "3"}),
}
# programs per kind: 8 in CI, 20 under scripts/reliability.sh (PAIMON_SQL_RELIABILITY=full)
EXAMPLES_PER_KIND = int(os.environ.get("LIFECYCLE_EXAMPLES", ci_or_full(8, 20)))
METADATA_DIRS = ("snapshot", "schema", "tag", "consumer", "changelog")


def rows_of(arrow) -> list:
    return sorted((r["id"], r["v"], r["dt"]) for r in arrow.to_pylist())


def on_disk(root) -> set:
    return {os.path.join(d, n) for d, _, names in os.walk(root) for n in names}


class Version(NamedTuple):
    """A snapshot as made: the rows it read then, and the rows written so far (the same but for
    a primary-key table with deletion vectors, which does not read level-0 files: its APPEND
    snapshot, before a compaction, reads less)."""
    read: list
    written: list


class Branch:
    """The model of one branch: each snapshot and tag as made, and the rows written so far."""

    def __init__(self, snapshots=None, tags=None):
        self.snapshots = dict(snapshots or {})  # id -> Version
        self.tags = dict(tags or {})  # name -> (snapshot id, Version)
        self.latest = max(self.snapshots, default=None)

    @property
    def rows(self) -> list:
        return self.snapshots[self.latest].written if self.latest is not None else []


class Lifecycle(RuleBasedStateMachine):
    kind = "append"

    def __init__(self):
        super().__init__()
        self.root = tempfile.mkdtemp(prefix="lifecycle-")
        catalog = load_catalog(self.root)
        catalog.create_database("db")
        partition, pk, options = KINDS[self.kind]
        self.path = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=partition, primary_keys=pk,
                                                    options=dict(options)).path
        self.pk = pk
        self.level0_hidden = bool(pk) and options.get("deletion-vectors.enabled") == "true"
        self.branches = {"main": Branch()}
        self.consumers = {}  # main branch's consumers: id -> next snapshot
        self.short_lived = set()  # tags whose time_retained has passed: commits may expire them
        self.counter = 0
        self.seen = set()  # the files on disk at the last check
        self.verified = set()  # (branch, snapshot id or tag) read since the last file vanished

    def teardown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers ----------------------------------------------------------------------------------

    def table(self, branch="main"):
        """A fresh table object (no cached manifests) of ``branch``."""
        t = table_at(self.path)
        return t if branch == "main" else t.switch_to_branch(branch)

    def pick_branch(self, i: int) -> str:
        names = sorted(self.branches)
        return names[i % len(names)]

    def key(self, row):
        return row[0] if self.pk == ["id"] else (row[0], row[2])

    def apply(self, rows: list, changes: list, kinds: list) -> list:
        """The model's result of writing ``changes`` (rows) with row ``kinds`` over ``rows``."""
        if not self.pk:
            return sorted(rows + changes)
        by_key = {self.key(r): r for r in rows}
        for r, k in zip(changes, kinds):
            if k == DELETE:
                by_key.pop(self.key(r), None)
            else:
                by_key[self.key(r)] = r
        return sorted(by_key.values())

    def committed(self, branch: str, before, rows: list, read_as=None) -> None:
        """Record each snapshot the last operation committed on ``branch``: it holds ``rows``
        and reads ``read_as`` (default: them, the latest always: writes and compactions leave no
        level-0 file behind when deletion vectors are on)."""
        model = self.branches[branch]
        t = self.table(branch)
        latest = t.snapshot_manager.latest_id()
        for sid in range((before or 0) + 1, (latest or 0) + 1):
            read = rows_of(t.new_scan().with_snapshot(sid).to_arrow())
            expected = rows if read_as is None else read_as
            assert read == expected or self.level0_hidden and sid != latest, (branch, sid, read, expected)
            model.snapshots[sid] = Version(read, rows)
        if latest != before:
            model.latest = latest

    def write(self, branch: str, changes: list, kinds: list) -> None:
        t = self.table(branch)
        before = t.snapshot_manager.latest_id()
        data = pa.table({"id": [r[0] for r in changes], "v": [r[1] for r in changes],
                         "dt": [r[2] for r in changes]}, schema=SCHEMA)
        t.write_arrow(data, row_kinds=kinds if self.pk else None)
        STEPS[self.kind, "wrote on a branch" if branch != "main" else "wrote"] += 1
        self.committed(branch, before, self.apply(self.branches[branch].rows, changes, kinds))

    # -- steps ------------------------------------------------------------------------------------

    @initialize(ids=st.lists(st.integers(0, 7), min_size=1, max_size=4), v=st.integers(0, 99))
    def first_insert(self, ids, v):
        self.write("main", [(i, v, "ab"[i % 2]) for i in ids], [INSERT] * len(ids))

    @rule(b=st.integers(0, 3), ids=st.lists(st.integers(0, 7), min_size=1, max_size=4),
          dt=st.sampled_from(["a", "b"]), v=st.integers(0, 99))
    def insert(self, b, ids, dt, v):
        self.write(self.pick_branch(b), [(i, v, dt) for i in ids], [INSERT] * len(ids))

    @precondition(lambda self: any(m.rows for m in self.branches.values()))
    @rule(b=st.integers(0, 3), pick=st.integers(0, 100), v=st.integers(100, 199))
    def update(self, b, pick, v):
        """Primary keys: an UPDATE_AFTER of a live row. Append: a delete, as UPDATE rewrites."""
        branch = self.pick_branch(b)
        rows = self.branches[branch].rows
        if not rows:
            return
        row = rows[pick % len(rows)]
        if self.pk:
            self.write(branch, [(row[0], v, row[2])], [UPDATE_AFTER])
        else:
            self.delete_id(branch, row[0])

    @precondition(lambda self: any(m.rows for m in self.branches.values()))
    @rule(b=st.integers(0, 3), pick=st.integers(0, 100))
    def delete(self, b, pick):
        branch = self.pick_branch(b)
        rows = self.branches[branch].rows
        if not rows:
            return
        row = rows[pick % len(rows)]
        if self.pk:
            self.write(branch, [row], [DELETE])
        else:
            self.delete_id(branch, row[0])

    def delete_id(self, branch, ident):
        t = self.table(branch)
        before = t.snapshot_manager.latest_id()
        t.delete_where(equal("id", ident))
        self.committed(branch, before, [r for r in self.branches[branch].rows if r[0] != ident])

    @rule(b=st.integers(0, 3), full=st.booleans())
    def compact(self, b, full):
        branch = self.pick_branch(b)
        t = self.table(branch)
        before = t.snapshot_manager.latest_id()
        t.compact(full=full)
        self.committed(branch, before, self.branches[branch].rows)

    @precondition(lambda self: self.branches["main"].latest is not None)
    @rule()
    def analyze(self):
        t = self.table()
        before = t.snapshot_manager.latest_id()
        model = self.branches["main"]
        write_statistics(t, len(model.rows), None, {})
        self.committed("main", before, model.rows, model.snapshots[before].read)

    @rule(ids=st.lists(st.integers(0, 7), min_size=1, max_size=3))
    def crashed_write(self, ids):
        """A writer that staged its files and died before committing: orphans to be."""
        write = self.table().new_write()
        write.write_arrow(pa.table({"id": ids, "v": [0] * len(ids), "dt": ["a"] * len(ids)}, schema=SCHEMA))
        write.prepare_commit()

    @precondition(lambda self: self.branches["main"].latest is not None)
    @rule(pick=st.integers(0, 100), short_lived=st.booleans())
    def create_tag(self, pick, short_lived):
        """A tag, perhaps with a time_retained that has passed by the next expire_tags."""
        t, model = self.table(), self.branches["main"]
        ids = t.snapshot_manager.listed_ids()
        sid = ids[pick % len(ids)]
        self.counter += 1
        name = f"tag{self.counter}"
        t.tag_manager.create(name, t.snapshot_manager.snapshot(sid),
                             dt.timedelta(milliseconds=1) if short_lived else None)
        model.tags[name] = (sid, model.snapshots[sid])
        if short_lived:
            self.short_lived.add(name)
        STEPS[self.kind, "tagged"] += 1

    @precondition(lambda self: self.branches["main"].tags)
    @rule(pick=st.integers(0, 100))
    def delete_tag(self, pick):
        """Paimon's TagDeletion: the files only the tag named go with it."""
        tags = sorted(self.branches["main"].tags)
        name = tags[pick % len(tags)]
        assert delete_tag(self.table(), name)
        del self.branches["main"].tags[name]
        STEPS[self.kind, "deleted a tag"] += 1

    @precondition(lambda self: self.branches["main"].tags)
    @rule()
    def expire_tags(self):
        time.sleep(0.002)
        for name in expire_tags(self.table()):
            del self.branches["main"].tags[name]
            STEPS[self.kind, "expired a tag"] += 1

    @precondition(lambda self: len(self.branches) > 1)
    @rule(pick=st.integers(0, 100))
    def fast_forward(self, pick):
        """Main takes a branch's state: main's snapshots and tags from the branch's earliest
        snapshot on are replaced by the branch's. Main's snapshots below it stay, so when main was
        rolled back (or the branch expired) below the branch's first snapshot, main's ids have a
        hole, as Java's fastForward leaves (docs/branches.md)."""
        name = sorted(n for n in self.branches if n != "main")[pick % (len(self.branches) - 1)]
        branch, main, t = self.branches[name], self.branches["main"], self.table()
        earliest = self.table(name).snapshot_manager.earliest_id()
        t.branch_manager.fast_forward(t, name)
        main.snapshots = {i: v for i, v in main.snapshots.items() if i < earliest}
        main.snapshots.update({i: v for i, v in branch.snapshots.items() if i >= earliest})
        main.tags = {n: tag for n, tag in main.tags.items() if tag[0] < earliest}
        main.tags.update(branch.tags)
        main.latest = branch.latest
        STEPS[self.kind, "fast-forwarded"] += 1

    @precondition(lambda self: len(self.branches) < 3 and self.branches["main"].tags)
    @rule(pick=st.integers(0, 100), drop_tag=st.booleans())
    def create_branch(self, pick, drop_tag):
        """From a tag of main, which may go at once: the branch keeps its own copy."""
        t, model = self.table(), self.branches["main"]
        tags = sorted(model.tags)
        tag = tags[pick % len(tags)]
        self.counter += 1
        name = f"b{self.counter}"
        t.branch_manager.create(name, t, tag=tag)
        sid, version = model.tags[tag]
        self.branches[name] = Branch({sid: version}, {tag: (sid, version)})
        if drop_tag:
            t.tag_manager.delete(tag)
            del model.tags[tag]
        STEPS[self.kind, "branched"] += 1

    @precondition(lambda self: self.branches["main"].latest is not None)
    @rule(pick=st.integers(0, 100), ahead=st.booleans())
    def record_consumer(self, pick, ahead):
        ids = self.table().snapshot_manager.listed_ids()
        nxt = ids[-1] + 1 if ahead else ids[pick % len(ids)]
        name = f"c{pick % 2}"
        self.table().consumer_manager.record(name, nxt)
        self.consumers[name] = nxt

    @precondition(lambda self: self.consumers)
    @rule(pick=st.integers(0, 100))
    def delete_consumer(self, pick):
        name = sorted(self.consumers)[pick % len(self.consumers)]
        self.table().consumer_manager.delete(name)
        del self.consumers[name]

    @rule(b=st.integers(0, 3), retain_min=st.integers(1, 3), extra=st.one_of(st.none(), st.integers(0, 3)),
          age=st.sampled_from(["default", "now", "future", "future"]))
    def expire(self, b, retain_min, extra, age):
        branch = self.pick_branch(b)
        t = self.table(branch)
        sm = t.snapshot_manager
        before, latest = sm.listed_ids(), sm.latest_id()
        now = int(time.time() * 1000)
        older_than = {"default": None, "now": now, "future": now + DAY_MILLIS}[age]
        retain_max = None if extra is None else retain_min + extra
        if expire_snapshots(t, retain_max=retain_max, retain_min=retain_min, older_than=older_than):
            STEPS[self.kind, "expired"] += 1
        after = sm.listed_ids()
        assert sm.latest_id() == latest
        # Expiry removes the oldest snapshots; its bounds count ids, as Java's: with a hole they
        # keep the ids [latest - retain_min + 1, latest] that exist, and remove the ids before
        # latest - retain_max + 1 unless the first id to keep is in the hole (then none goes).
        assert after == before[len(before) - len(after):]
        assert set(before) & set(range(latest - retain_min + 1, latest + 1)) <= set(after)
        if retain_max is not None:
            holed = after == before and before != list(range(before[0], latest + 1))
            assert after[0] > latest - max(retain_max, 1) or branch == "main" and self.consumers or holed

    @rule(b=st.integers(0, 3), to_tag=st.booleans(), pick=st.integers(0, 100))
    def rollback(self, b, to_tag, pick):
        branch = self.pick_branch(b)
        t, model = self.table(branch), self.branches[branch]
        tags = sorted(model.tags)
        if to_tag and tags:
            name = tags[pick % len(tags)]
            target, version = model.tags[name]
            if target not in t.snapshot_manager.listed_ids():
                STEPS[self.kind, "rolled back to an expired tag"] += 1
            rollback_to_tag(t, name)
        else:
            ids = t.snapshot_manager.listed_ids()
            target = ids[pick % len(ids)]
            version = model.snapshots[target]
            rollback_to_snapshot(t, target)
        STEPS[self.kind, "rolled back"] += 1
        model.snapshots = {i: r for i, r in model.snapshots.items() if i < target}
        model.snapshots[target] = version
        model.tags = {n: tag for n, tag in model.tags.items() if tag[0] <= target}
        model.latest = target

    @rule()
    def remove_orphans(self):
        time.sleep(0.002)  # every file so far is older than now
        if remove_orphan_files(self.table(), older_than_millis=int(time.time() * 1000))[0]:
            STEPS[self.kind, "orphans removed"] += 1
        named = self.named_files()
        left = {p for p in on_disk(self.path) - named if not self.is_metadata(p)}
        assert not left, f"orphan cleanup left unreferenced files: {sorted(left)}"
        assert on_disk(self.path) == referenced_files(self.table())

    # -- checks -----------------------------------------------------------------------------------

    def is_metadata(self, path) -> bool:
        rel = os.path.relpath(path, self.path).split(os.sep)
        if rel[0] == "branch":
            rel = rel[2:]
        return rel[0] in METADATA_DIRS

    def named_files(self) -> set:
        """Every file a snapshot on disk or a tag of any branch names, read strictly (a missing
        manifest fails here), each checked to exist."""
        out = set()
        for bt in branch_tables(self.table()):
            refs = References(bt)
            snaps = [bt.snapshot_manager.snapshot(i) for i in bt.snapshot_manager.listed_ids()]
            for snap in snaps + [tag.snapshot for tag in bt.tag_manager.tags()]:
                files = refs.whole(snap)
                missing = sorted(p for p in files if not os.path.exists(p))
                assert not missing, f"branch {bt.branch} snapshot {snap.id} lost {missing}"
                out |= files
        return out

    def follow_automatic_tags(self):
        """Tags the table makes and drops itself (``tag.automatic-creation`` = batch after each
        commit, ``tag.num-retained-max``, and tags past their time_retained once a commit runs tag
        maintenance) enter the model as the version they name, and leave it."""
        options = KINDS[self.kind][2]
        if options.get("write-only") != "true":  # commits expire tags past their time_retained
            for name, model in self.branches.items():
                kept = set(self.table(name).tag_manager.names())
                model.tags = {n: tag for n, tag in model.tags.items() if n in kept or n not in self.short_lived}
        if "tag.automatic-creation" not in options:
            return
        for name, model in self.branches.items():
            kept = {tag.name: tag.snapshot.id for tag in self.table(name).tag_manager.tags()}
            model.tags = {n: tag for n, tag in model.tags.items() if kept.get(n) == tag[0]}
            for n, sid in kept.items():
                if n not in model.tags:
                    model.tags[n] = (sid, model.snapshots[sid])
                    STEPS[self.kind, "tagged automatically"] += 1

    @invariant()
    def every_kept_version_reads_its_rows(self):
        """Every kept version is read again after any file vanished (data and metadata files are
        never rewritten in place, so while none vanishes a version read once reads the same);
        every file each names exists, always."""
        self.follow_automatic_tags()
        disk = on_disk(self.path)
        if self.seen - disk:
            self.verified.clear()
        self.seen = disk
        for name, model in self.branches.items():
            t = self.table(name)
            sm = t.snapshot_manager
            ids = sm.listed_ids()
            assert sm.latest_id() == model.latest, name
            # the model's snapshots from the earliest on: consecutive but for a fast-forward's hole
            assert ids[0] == sm.earliest_id() and ids == [i for i in sorted(model.snapshots) if i >= ids[0]], \
                (name, ids)
            assert sorted(t.tag_manager.names()) == sorted(model.tags), name
            versions = [(sid, t.new_scan().with_snapshot(sid), model.snapshots[sid]) for sid in ids]
            for tag, (sid, version) in model.tags.items():
                assert t.tag_manager.get(tag).snapshot.id == sid
                versions.append((tag, t.new_scan().with_tag(tag), version))
            for key, scan, version in versions:
                if (name, key) not in self.verified:
                    assert rows_of(scan.to_arrow()) == version.read, (name, key)
                    self.verified.add((name, key))
        self.named_files()

    @invariant()
    def consumers_keep_what_they_read_next(self):
        sm = self.table().snapshot_manager
        latest = sm.latest_id()
        for nxt in self.consumers.values():
            if latest is not None and nxt <= latest:
                assert sm.earliest_id() <= nxt, (nxt, sm.listed_ids())


def machine_for(kind):
    return type(f"Lifecycle_{kind}", (Lifecycle,), {"kind": kind})


PROGRAMS = Counter()
STEPS = Counter()  # (kind, what happened): that the programs reach every part of the lifecycle


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_random_programs_never_lose_a_live_file(kind):
    machine = machine_for(kind)
    original = machine.__init__

    def counted(self):
        PROGRAMS[kind] += 1
        original(self)
    machine.__init__ = counted
    run_state_machine_as_test(machine, settings=settings(
        max_examples=EXAMPLES_PER_KIND, stateful_step_count=25, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
    assert PROGRAMS[kind] >= EXAMPLES_PER_KIND
    print(kind, PROGRAMS[kind], {k[1]: n for k, n in STEPS.items() if k[0] == kind})


def test_a_branch_expiring_keeps_what_main_fast_forwarded_to():
    """Found by the programs above: after a fast-forward main's snapshots go on with the branch's,
    built on the branch's, not on main's own before them. A later commit on the branch expired a
    branch snapshot and deleted a file main's copy of the next one still read, because main's
    references took each snapshot as its predecessor plus its delta."""
    s = machine_for("pk-batch-tags-at-commit")()
    steps = [lambda: s.first_insert(ids=[0], v=0), lambda: s.update(b=0, pick=0, v=100),
             lambda: s.create_branch(drop_tag=True, pick=1),  # b1 from main's 2, the tag gone
             lambda: s.delete(b=1, pick=0),  # main's 3
             lambda: s.update(b=0, pick=0, v=101),  # b1's 3: a file main's 3 does not have
             lambda: s.delete(b=0, pick=0), lambda: s.insert(b=0, dt="a", ids=[0], v=0),
             lambda: s.fast_forward(pick=0),  # main's 4.. are b1's, built on b1's 3
             lambda: s.update(b=0, pick=0, v=102),
             lambda: s.compact(b=0, full=True)]  # b1 expires its 5 (retained max 3)
    try:
        for step in steps:
            step()
            s.every_kept_version_reads_its_rows()
        assert s.table().snapshot_manager.listed_ids() == [1, 2, 3, 4, 5, 6]
        assert s.table("b1").snapshot_manager.listed_ids() == [6, 7, 8]
    finally:
        s.teardown()
