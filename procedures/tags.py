"""Tag procedures: paimon-spark's CreateTag, ReplaceTag, RenameTag, DeleteTag,
CreateTagFromTimestamp, ExpireTags and TriggerTagAutomaticCreation, over
:class:`~paimon_sql.snapshot.tag_manager.TagManager` and :mod:`paimon_sql.tag.tag_auto_creation`.

``time_retained`` is a duration as Paimon writes one (``'1 d'``, ``'12 h'``, ``'30 min'``); a tag
created with it is deleted by tag expiry once that long has passed since its creation.
"""

from __future__ import annotations

import datetime as dt

from paimon_sql.exceptions import SnapshotNotFoundError, TagError
from paimon_sql.options.core_options import parse_duration_ms
from paimon_sql.procedures.base import Procedure, columns, optional, register, required
from paimon_sql.snapshot.tag_manager import check_tag_name, find_snapshot
from paimon_sql.tag import tag_auto_creation as auto

RESULT = columns("result BOOLEAN")
TAG_PARAMETERS = (required("table", "STRING"), required("tag", "STRING"), optional("snapshot", "BIGINT"),
                  optional("time_retained", "STRING"))


class _TagProcedure(Procedure):
    def retained(self, text):
        if text is None:
            return None
        try:
            return dt.timedelta(milliseconds=parse_duration_ms(text))
        except ValueError:
            raise self.fail(f"time_retained must be a duration such as '1 d' or '12 h', got '{text}'") from None

    def name_of(self, tag: str) -> str:
        try:
            return check_tag_name(tag)
        except TagError as e:
            raise self.fail(str(e)) from None

    def snapshot_of(self, table, snapshot_id):
        try:
            return find_snapshot(table, snapshot_id)
        except SnapshotNotFoundError as e:
            raise self.fail(str(e)) from None


@register
class CreateTagProcedure(_TagProcedure):
    name = "create_tag"
    parameters = TAG_PARAMETERS
    output = RESULT
    description = "Tag a snapshot (default: the latest), optionally kept only for time_retained."

    def call(self, session, args):
        name, retained = self.name_of(args["tag"]), self.retained(args["time_retained"])
        table = self.table(session, args["table"])
        if table.tag_manager.exists(name):
            raise self.fail(f"tag '{name}' already exists")
        table.tag_manager.create(name, self.snapshot_of(table, args["snapshot"]), retained)
        return [(True,)]


@register
class ReplaceTagProcedure(_TagProcedure):
    name = "replace_tag"
    parameters = TAG_PARAMETERS
    output = RESULT
    description = "Point an existing tag at another snapshot (default: the latest) and retention."

    def call(self, session, args):
        name, retained = self.name_of(args["tag"]), self.retained(args["time_retained"])
        table = self.table(session, args["table"])
        if not table.tag_manager.exists(name):
            raise self.fail(f"tag '{name}' does not exist")
        table.tag_manager.create(name, self.snapshot_of(table, args["snapshot"]), retained, replace=True)
        return [(True,)]


@register
class RenameTagProcedure(_TagProcedure):
    name = "rename_tag"
    parameters = (required("table", "STRING"), required("tag", "STRING"), required("target_tag", "STRING"))
    output = RESULT
    description = "Rename a tag."

    def call(self, session, args):
        table = self.table(session, args["table"])
        try:
            table.tag_manager.rename(args["tag"], args["target_tag"])
        except TagError as e:
            raise self.fail(str(e)) from None
        return [(True,)]


@register
class DeleteTagProcedure(_TagProcedure):
    name = "delete_tag"
    parameters = (required("table", "STRING"), required("tag", "STRING"))
    output = RESULT
    description = "Delete tags (comma-separated) and the files only they kept; a missing tag is passed over."

    def call(self, session, args):
        names = [n.strip() for n in args["tag"].split(",")]
        if not all(names):
            raise self.fail(f"tag must be tag names separated by commas, got '{args['tag']}'")
        table = self.table(session, args["table"])
        for name in names:
            auto.delete_tag(table, name)
        return [(True,)]


@register
class CreateTagFromTimestampProcedure(_TagProcedure):
    name = "create_tag_from_timestamp"
    parameters = (required("table", "STRING"), required("tag", "STRING"), optional("timestamp", "BIGINT"),
                  optional("time_retained", "STRING"))
    output = columns("tagName STRING", "snapshot BIGINT", "commit_time BIGINT", "watermark STRING")
    description = ("Tag the earliest snapshot committed at or after timestamp (epoch millis), or an earlier "
                   "tag's snapshot when no snapshot is left that qualifies.")

    def call(self, session, args):
        name, retained = self.name_of(args["tag"]), self.retained(args["time_retained"])
        millis = args["timestamp"]
        if millis is None:
            raise self.fail("timestamp (epoch milliseconds) must be given")
        table = self.table(session, args["table"])
        if table.tag_manager.exists(name):
            raise self.fail(f"tag '{name}' already exists")
        snap = next((s for s in table.snapshot_manager.snapshots() if s.time_millis >= millis), None)
        tagged = next((t.snapshot for t in table.tag_manager.tags() if t.snapshot.time_millis >= millis), None)
        if tagged is not None and (snap is None or tagged.time_millis < snap.time_millis):
            snap = tagged
        if snap is None:
            raise self.fail(f"no snapshot of table {table.name} was committed at or after {millis}")
        table.tag_manager.create(name, snap, retained)
        return [(name, snap.id, snap.time_millis, str(snap.watermark) if snap.watermark is not None else "null")]


@register
class ExpireTagsProcedure(_TagProcedure):
    name = "expire_tags"
    parameters = (required("table", "STRING"), optional("older_than", "STRING"))
    output = columns("expired_tags STRING")
    description = "Delete tags whose time_retained has passed, and those created before older_than."

    def call(self, session, args):
        text = args["older_than"]
        try:
            older_than = dt.datetime.fromisoformat(text.strip()) if text and text.strip() else None
        except ValueError:
            raise self.fail(f"older_than must be a timestamp such as '2024-05-01 12:00:00', got '{text}'") from None
        expired = auto.expire_tags(self.table(session, args["table"]), older_than)
        return [(n,) for n in expired] or [("No expired tags.",)]


@register
class TriggerTagAutomaticCreationProcedure(_TagProcedure):
    name = "trigger_tag_automatic_creation"
    parameters = (required("table", "STRING"),)
    output = RESULT
    description = "Run automatic tag creation (tag.automatic-creation process-time/watermark) and tag expiry now."

    def call(self, session, args):
        table = self.table(session, args["table"])
        try:
            auto.run_tag_maintenance(table)
        except TagError as e:
            raise self.fail(str(e)) from None
        return [(True,)]

