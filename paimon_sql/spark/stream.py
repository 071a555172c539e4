"""Spark Structured Streaming source over a Paimon table (``spark.readStream.format("paimon")``).

Offsets are snapshot ids: ``{"snapshot": k, "full": f}`` says every change up to snapshot ``k``
was delivered, except that with ``full`` the snapshot ``k`` itself is still to be read whole.
A micro-batch from offset (k, f) to the latest snapshot m reads snapshot k in full when f, then
what the commits in (k, m] changed: their changelog files with a ``changelog-producer``, else the
files their APPEND commits added (merged by key; -U/-D retractions are not rows in Spark).

Where a new query starts (``scan.mode``, as Paimon's): ``latest-full``/``default``/``full`` read
the latest snapshot whole then follow; ``latest`` follows from the latest snapshot on;
``from-snapshot`` (``scan.snapshot-id``) follows from that snapshot on; ``from-snapshot-full``
reads it whole then follows; ``from-timestamp`` (``scan.timestamp-millis``) follows from the
snapshot at that time. With ``consumer-id`` the query resumes where that consumer stopped, and
each committed batch records ``consumer/consumer-<id>`` (next snapshot to read).
``load("db.t$audit_log")`` streams every change with its ``rowkind`` (+I/-U/+U/-D) first;
``load("db.t$binlog")`` the same with columns as arrays, an update's -U/+U as one ``[before, after]``.
"""

from __future__ import annotations

from typing import Iterator, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from paimon_sql.exceptions import InvalidOptionError, SnapshotNotFoundError
from paimon_sql.read import incremental
from paimon_sql.spark.columns import ROW_KIND_OUTPUTS
from paimon_sql.spark.types import to_spark_arrow
from paimon_sql.store.time_travel import snapshot_at


class _SplitPartition(InputPartition):
    def __init__(self, split):
        super().__init__(None)
        self.split = split


def _offset(snapshot: int, full: bool = False) -> dict:
    return {"snapshot": int(snapshot), "full": bool(full)}


class PaimonStreamReader(DataSourceStreamReader):
    def __init__(self, table, fields, row_kinds: Optional[str] = None):
        self.table = table
        self.fields = fields
        self.row_kinds = row_kinds  # "audit_log" / "binlog": every change with its kind (CDC)
        self.consumer = table.options.raw.get("consumer-id")

    def _latest(self) -> int:
        return self.table.snapshot_manager.latest_id() or 0

    def initialOffset(self) -> dict:
        if self.consumer:
            nxt = self.table.consumer_manager.next_snapshot(self.consumer)
            if nxt is not None:
                return _offset(nxt - 1)
        raw = self.table.options.raw
        mode = str(raw.get("scan.mode", "default")).lower()
        latest = self._latest()
        if mode in ("default", "latest-full", "full"):
            if raw.get("scan.snapshot-id"):
                return _offset(int(raw["scan.snapshot-id"]) - 1)
            if raw.get("scan.timestamp-millis"):
                return _offset(snapshot_at(self.table, int(raw["scan.timestamp-millis"])).id)
            return _offset(latest, full=latest > 0)
        if mode == "latest":
            return _offset(latest)
        if mode in ("from-snapshot", "from-snapshot-full"):
            if not raw.get("scan.snapshot-id"):
                raise InvalidOptionError(f"scan.mode '{mode}' needs option 'scan.snapshot-id'")
            sid = int(raw["scan.snapshot-id"])
            return _offset(sid, full=True) if mode == "from-snapshot-full" else _offset(sid - 1)
        if mode == "from-timestamp":
            if not raw.get("scan.timestamp-millis"):
                raise InvalidOptionError("scan.mode 'from-timestamp' needs option 'scan.timestamp-millis'")
            return _offset(snapshot_at(self.table, int(raw["scan.timestamp-millis"])).id)
        raise InvalidOptionError(f"scan.mode '{mode}' cannot start a streaming read")

    def latestOffset(self, start: Optional[dict] = None, limit=None) -> dict:
        """Up to the latest snapshot, but a batch stops before a snapshot whose changes are gone
        (expired, or in a hole a fast-forward left) and the stream then fails there with a one-line
        error: Java's stream waits at such a hole for ever, yet no commit can fill it (new ones take
        ids after the latest). Spark before 4.2 passes no ``start``: its batch fails in
        :meth:`partitions` instead. ``limit`` is not used: a batch reads all that is available."""
        latest = self._latest()
        if start is None or latest <= start["snapshot"]:
            return _offset(latest)
        until = incremental.readable_until(self.table, start["snapshot"], latest)
        if until == start["snapshot"] and not start.get("full"):
            later = next((i for i in self.table.snapshot_manager.listed_ids() if i > until), latest)
            raise SnapshotNotFoundError(
                f"cannot stream table {self.table.name} on after snapshot {until}: "
                f"{incremental.missing_snapshot(self.table, until + 1)}; start a new stream from snapshot {later} "
                f"('scan.mode' = 'from-snapshot-full', 'scan.snapshot-id' = '{later}')")
        return _offset(until)

    def partitions(self, start: dict, end: dict):
        scan = self.table.new_scan()
        splits = []
        if start.get("full") and start["snapshot"] > 0:
            splits += scan.with_snapshot(start["snapshot"]).plan().splits
        if end["snapshot"] > start["snapshot"]:
            mode = "delta" if self.table.options.get("changelog-producer") == "none" else "changelog"
            splits += incremental.splits(scan, start["snapshot"], end["snapshot"], mode, streaming=True)
        return [_SplitPartition(s) for s in splits]

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        scan = self.table.new_scan().select([f.name for f in self.fields]).with_row_kind(bool(self.row_kinds))
        rows = scan.reader().read(partition.split)
        convert = ROW_KIND_OUTPUTS[self.row_kinds] if self.row_kinds else to_spark_arrow
        out = convert(rows, self.fields)
        yield from out.to_batches()

    def commit(self, end: dict) -> None:
        if self.consumer:
            self.table.consumer_manager.record(self.consumer, end["snapshot"] + 1)
