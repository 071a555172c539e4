"""Compaction of a postpone table (``bucket = -2``): the postpone bucket's rows assigned to real buckets.

What ``CALL sys.compact`` does to a postpone table in Paimon 2.0 (paimon-spark's
SparkPostponeCompactProcedure), in one snapshot of the latest one:

1. each partition with postpone files gets its bucket count (:func:`paimon_sql.write.postpone.compaction_buckets`:
   the count of its real buckets, else from ``postpone.target-row-num-per-bucket``, else
   ``postpone.default-bucket-num``, else Spark's default parallelism);
2. the postpone files' rows, each with its row kind, are written — in the order they were
   written: by creation time — through a normal merge-tree writer (not write-only) into the
   bucket their key hashes to: new sequence numbers after the bucket's, duplicate keys folded
   by the merge engine, level-0 files, then the bucket's usual (not full) compaction;
3. real buckets holding level-0 files (fixed-bucket batch writes are write-only) are compacted too;
4. one COMPACT commit: the postpone files leave (``compactBefore`` of bucket -2), and everything
   written is ``compactAfter`` (Paimon's BucketFiles turns the writers' new files into it); the
   commit expires snapshots as any compaction does, unlike a postpone table's other commits.

A postpone compaction takes no partition filter, as in Paimon.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from paimon_sql.compact.merge_tree_compact import BucketCompactor
from paimon_sql.io.paths import POSTPONE_BUCKET
from paimon_sql.manifest.manifest_file import DataFileMeta, ManifestEntry
from paimon_sql.read.scan import ScanStore
from paimon_sql.read.split import Split
from paimon_sql.schema.table_schema import VALUE_KIND
from paimon_sql.write import postpone
from paimon_sql.write.commit_message import CommitMessage
from paimon_sql.write.table_write import TableWrite


def writer_prefix(file_name: str) -> str:
    """The prefix one postpone writer gives all its files (``data--u-<user>-s-<id>-w-``)."""
    cut = file_name.rfind("-w-")
    return file_name[:cut + 3] if cut >= 0 else file_name


def postpone_messages(table: ScanStore, default_parallelism: int) -> Tuple[int, List[CommitMessage]]:
    """(the snapshot compacted, the COMPACT commit's messages); no messages when the postpone bucket
    and the real buckets' level 0 are empty. A failure deletes what was written."""
    base = table.snapshot_manager.latest_id() or 0
    if not base:
        return base, []
    entries = table.new_scan().with_snapshot(base).plan_entries()
    postponed: Dict[bytes, List[Tuple[int, ManifestEntry]]] = {}
    for order, e in enumerate(entries):
        if e.bucket == POSTPONE_BUCKET:
            postponed.setdefault(e.partition, []).append((order, e))
    level0 = sorted({(e.partition, e.bucket) for e in entries
                     if e.bucket >= 0 and e.total_buckets > 0 and e.file.level == 0})
    if not postponed and not level0:
        return base, []
    known, rows = postpone.bucket_metadata(table, base)
    plan = dict(known)
    for p in postponed:
        plan.setdefault(p, postpone.compaction_buckets(table.options, rows.get(p, 0), default_parallelism))
    real = table.copy({"write-only": "false"})
    write = TableWrite(real, BucketCompactor, postpone_plan=plan)
    write.pin_base(base)  # its buckets continue from the snapshot compacted
    reader = table.new_scan().reader()
    names = table.schema.field_names
    try:
        for partition, files in sorted(postponed.items()):
            # the order the rows were written in: a writer's files by creation time, then scan order
            for _, e in sorted(files, key=lambda oe: (_created(oe[1].file), oe[0])):
                f = e.file
                kv = reader.read_kv(Split(partition, POSTPONE_BUCKET, (f,)), f)
                if kv.num_rows:
                    write.write_arrow(kv.select(names), row_kinds=kv.column(VALUE_KIND).combine_chunks())
        write.flush()
        write.compact_buckets([k for k in level0])
        messages = write.prepare_commit()
    except BaseException:
        write.abort()
        raise
    for m in messages:  # BucketFiles.makeMessage: what the writers wrote is the compaction's output
        m.compact_after = m.new_files + m.compact_after
        m.compact_changelog = m.changelog_files + m.compact_changelog
        m.new_files, m.changelog_files = [], []
    for partition, files in sorted(postponed.items()):
        messages.append(CommitMessage(partition, POSTPONE_BUCKET, files[0][1].total_buckets,
                                      compact_before=[e.file for _, e in files], base_snapshot=base))
    return base, messages


def _created(f: DataFileMeta) -> float:
    return f.creation_time.timestamp() if f.creation_time is not None else 0.0
