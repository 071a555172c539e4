"""``t$tags``: every tag with the snapshot it keeps."""

from paimon_sql.systables.base import SystemTable, columns, local_time, register


def _duration_text(td) -> str:
    """A retention as Java's ``Duration.toString()`` prints it (``PT24H``, ``PT30M``)."""
    seconds = int(td.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    return text + (f"{secs}S" if secs or text == "PT" else "")


@register
class TagsTable(SystemTable):
    name = "tags"
    FIELDS = columns("tag_name STRING NOT NULL", "snapshot_id BIGINT NOT NULL", "schema_id BIGINT NOT NULL",
                     "commit_time TIMESTAMP(3) NOT NULL", "record_count BIGINT", "create_time TIMESTAMP(3)",
                     "time_retained STRING")

    def rows(self, predicate=None):
        tags = self.table.tag_manager.tags()
        return self.table_of({
            "tag_name": [t.name for t in tags], "snapshot_id": [t.snapshot.id for t in tags],
            "schema_id": [t.snapshot.schema_id for t in tags],
            "commit_time": [local_time(t.snapshot.time_millis) for t in tags],
            "record_count": [t.snapshot.total_record_count for t in tags],
            "create_time": [t.create_time for t in tags],
            "time_retained": [None if t.time_retained is None else _duration_text(t.time_retained) for t in tags],
        })
