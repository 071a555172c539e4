"""Postpone bucket mode (``bucket = -2``) on the read side: what a read sees of a postpone table.

A postpone writer (Flink's, pypaimon's default batch write, ours with
``postpone.batch-write-fixed-bucket = false``) leaves its files in ``<partition>/bucket-postpone``
(bucket -2 in the manifest); ``CALL sys.compact`` assigns their rows to real buckets. Until then a
batch read does not see them, as Paimon's batch scan reads real buckets only.
"""

from __future__ import annotations

from typing import List

from paimon_sql.io.paths import POSTPONE_BUCKET
from paimon_sql.manifest.manifest_file import ManifestEntry


def postpone_table(table) -> bool:
    """``bucket = -2`` on a primary-key table: writers may leave files in the postpone bucket."""
    return table.schema.is_primary_key_table and table.options.bucket == POSTPONE_BUCKET


def real_buckets(table, entries: List[ManifestEntry]) -> List[ManifestEntry]:
    """What a batch read of ``table`` reads: a postpone table's real buckets only, as Paimon's batch
    scan (``onlyReadRealBuckets``): rows in ``bucket-postpone`` are invisible until compaction
    assigns them a bucket. So are their files to what Paimon plans with that scan: ``$files``,
    ``$file_key_ranges``, ``$partitions`` and SHOW PARTITIONS (``$buckets`` lists them)."""
    return [e for e in entries if e.bucket >= 0] if postpone_table(table) else entries
