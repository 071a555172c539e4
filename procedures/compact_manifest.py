"""``compact_manifest``: paimon-spark's CompactManifestProcedure over :meth:`TableCommit.compact_manifest`.

Paimon's full manifest compaction: the table's manifests are merged (DELETE entries cancelled
against their ADDs, full-size untouched manifests kept; :mod:`paimon_sql.manifest.manifest_merge`) in a
COMPACT snapshot; data files are untouched. No snapshot when no manifest would change. ``dry_run`` checks the arguments and commits
nothing. Manifest sorting (``manifest_sort_*``) is refused: it is not implemented.
"""

from __future__ import annotations

from paimon_sql.procedures.base import Procedure, optional, register, required


@register
class CompactManifestProcedure(Procedure):
    name = "compact_manifest"
    parameters = (required("table", "STRING"), optional("options", "STRING"), optional("dry_run", "BOOLEAN", False),
                  optional("manifest_sort_enabled", "BOOLEAN", False),
                  optional("manifest_sort_partition_field", "STRING"),
                  optional("manifest_sort_max_rewrite_size", "STRING"))
    description = "Merge a table's manifests (DELETE entries cancelled) into one COMPACT snapshot; data files untouched."

    def call(self, session, args):
        if args["manifest_sort_enabled"] or args["manifest_sort_partition_field"] \
                or args["manifest_sort_max_rewrite_size"]:
            raise self.fail("manifest_sort_enabled/manifest_sort_partition_field/manifest_sort_max_rewrite_size "
                            "(sorted manifest compaction) is not supported yet")
        table = self.table(session, args["table"]).copy(self.dynamic_options(args["options"]))
        if not args["dry_run"]:
            table.new_commit().compact_manifest()
        return [(True,)]
