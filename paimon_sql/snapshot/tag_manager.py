"""TagManager: the ``tag/tag-<name>`` files of a table (or branch).

A tag keeps one snapshot alive under a name. Its file is that snapshot's JSON plus two keys of
Java's ``Tag``: ``tagCreateTime`` (a LocalDateTime, written by Jackson as
``[year, month, day, hour, minute, second, nanos]``) and ``tagTimeRetained`` (a Duration, written
as decimal seconds); both are omitted when unknown, so pypaimon and Java read our tags as theirs.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

from paimon_sql.exceptions import SnapshotNotFoundError, TagError
from paimon_sql.io import FileIO
from paimon_sql.io.paths import PathFactory
from paimon_sql.snapshot.snapshot import Snapshot

TagCallback = Callable[[str, Optional[Snapshot]], None]


@dataclass(frozen=True)
class Tag:
    name: str
    snapshot: Snapshot
    create_time: Optional[dt.datetime] = None  # local time, as Java's LocalDateTime
    time_retained: Optional[dt.timedelta] = None

    def to_json(self) -> str:
        d = self.snapshot.to_dict()
        if self.create_time is not None:
            t = self.create_time
            d["tagCreateTime"] = [t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond * 1000]
        if self.time_retained is not None:
            d["tagTimeRetained"] = self.time_retained.total_seconds()
        return json.dumps(d, indent=2)

    @staticmethod
    def from_json(name: str, text: str) -> "Tag":
        d = json.loads(text)
        created = d.get("tagCreateTime")
        if isinstance(created, list) and len(created) >= 3:
            parts = list(created) + [0] * (7 - len(created))
            created = dt.datetime(*parts[:6], parts[6] // 1000)
        elif isinstance(created, str):
            created = dt.datetime.fromisoformat(created)
        else:
            created = None
        retained = d.get("tagTimeRetained")
        retained = dt.timedelta(seconds=float(retained)) if retained is not None else None
        return Tag(name, Snapshot.from_dict(d), created, retained)


def check_tag_name(name: str) -> str:
    """Paimon 2.0's rule for a new tag: not blank. A name of digits is allowed (``VERSION AS OF 5``
    then reads tag ``5`` before snapshot 5, as Paimon's TimeTravelUtil). Whether it is safe as a
    file name is the path guard's to say, when its path is built (:meth:`PathFactory.tag_path`)."""
    if not name or not name.strip():
        raise TagError("tag name must not be blank")
    return name


def find_snapshot(table, snapshot_id: Optional[int]) -> Snapshot:
    """The snapshot a new tag points at, as Java's ``findSnapshot``: the latest (``snapshot_id``
    None), the snapshot ``snapshot_id``, or, once that expired, the copy a tag keeps of it."""
    sm = table.snapshot_manager
    if snapshot_id is None:
        snap = sm.latest()
        if snap is None:
            raise SnapshotNotFoundError(f"table {table.name} has no snapshot to tag yet")
        return snap
    if sm.io.exists(sm.paths.snapshot_path(snapshot_id)):
        return sm.snapshot(snapshot_id)
    for tag in table.tag_manager.tags():
        if tag.snapshot.id == snapshot_id:
            return tag.snapshot
    raise SnapshotNotFoundError(f"snapshot {snapshot_id} of table {table.name} does not exist")


class TagManager:
    def __init__(self, io: FileIO, paths: PathFactory, callbacks: Sequence[TagCallback] = ()):
        self.io = io
        self.paths = paths
        # each ``callback(name, snapshot)`` runs once tag ``name`` was created or replaced (its
        # snapshot) or deleted (None), a rename as both (Paimon's TagCallback: Iceberg's tag refs)
        self.callbacks = tuple(callbacks)

    def _notify(self, name: str, snapshot: Optional[Snapshot]) -> None:
        for callback in self.callbacks:
            callback(name, snapshot)

    def exists(self, name: str) -> bool:
        return self.io.exists(self.paths.tag_path(name))

    def get(self, name: str) -> Tag:
        try:
            text = self.io.read_text(self.paths.tag_path(name))
        except (FileNotFoundError, OSError):
            raise SnapshotNotFoundError(f"tag '{name}' does not exist") from None
        return Tag.from_json(name, text)

    def names(self) -> List[str]:
        return [n[4:] for n in self.io.list_names(self.paths.tag_dir) if n.startswith("tag-")]

    def tags(self) -> List[Tag]:
        """Every tag, ordered by snapshot id then name (as Java's ``$tags``)."""
        return sorted((self.get(n) for n in self.names()), key=lambda t: (t.snapshot.id, t.name))

    def create(self, name: str, snapshot: Snapshot, time_retained: Optional[dt.timedelta] = None,
               replace: bool = False, ignore_if_exists: bool = False) -> Tag:
        """Tag ``snapshot`` as ``name``; an existing tag is kept (``ignore_if_exists``), overwritten
        (``replace``) or an error. As Java's TagManager, the creation time is written only with a
        ``time_retained`` (a tag without one is the snapshot's JSON, which Paimon 0.7 still reads)."""
        check_tag_name(name)
        if self.exists(name) and not replace:
            if ignore_if_exists:
                return self.get(name)
            raise TagError(f"tag '{name}' already exists")
        tag = Tag(name, snapshot, None if time_retained is None else dt.datetime.now(), time_retained)
        self.io.write_bytes(self.paths.tag_path(name), tag.to_json().encode("utf-8"))
        self._notify(name, snapshot)
        return tag

    def delete(self, name: str, ignore_if_missing: bool = False) -> None:
        if not self.exists(name):
            if ignore_if_missing:
                return
            raise TagError(f"tag '{name}' does not exist")
        self.io.delete(self.paths.tag_path(name))
        self._notify(name, None)

    def rename(self, old: str, new: str) -> None:
        if not self.exists(old):
            raise TagError(f"tag '{old}' does not exist")
        check_tag_name(new)
        if self.exists(new):
            raise TagError(f"tag '{new}' already exists")
        self.io.rename(self.paths.tag_path(old), self.paths.tag_path(new))
        self._notify(old, None)
        self._notify(new, self.get(new).snapshot)
