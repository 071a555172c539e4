"""``expire_partitions``: paimon-spark's ExpirePartitionsProcedure over
:func:`paimon_sql.maintenance.expire_partitions.expire_partitions`.

The arguments become table options for this run, as Paimon's ``fillInPartitionOptions`` does
(``options`` first, then ``expiration_time`` → ``partition.expiration-time``,
``timestamp_formatter``, ``timestamp_pattern``, ``expire_strategy``, ``max_expires`` →
``partition.expiration-max-num``), and the check interval is ignored. One row per expired
partition, ``k1=v1, k2=v2``; ``No expired partitions.`` when there is none, as Paimon prints.
"""

from __future__ import annotations

from paimon_sql.exceptions import PaimonError
from paimon_sql.maintenance.expire_partitions import check_options, expire_partitions
from paimon_sql.procedures.base import Procedure, columns, optional, register, required

ARGUMENT_OPTIONS = {"expiration_time": "partition.expiration-time", "timestamp_formatter": "partition.timestamp-formatter",
                    "timestamp_pattern": "partition.timestamp-pattern", "expire_strategy": "partition.expiration-strategy",
                    "max_expires": "partition.expiration-max-num"}


@register
class ExpirePartitionsProcedure(Procedure):
    name = "expire_partitions"
    parameters = (required("table", "STRING"), optional("expiration_time", "STRING"),
                  optional("timestamp_formatter", "STRING"), optional("timestamp_pattern", "STRING"),
                  optional("expire_strategy", "STRING"), optional("max_expires", "INT"), optional("options", "STRING"))
    output = columns("expired_partitions STRING")
    description = ("Drop the partitions older than expiration_time (by their values or their last update) "
                   "in OVERWRITE snapshots; one row per expired partition.")

    def call(self, session, args):
        options = self.dynamic_options(args["options"])
        for arg, key in ARGUMENT_OPTIONS.items():
            if args[arg] is not None and str(args[arg]).strip():
                options[key] = str(args[arg])
        table = self.table(session, args["table"])
        try:
            table = table.copy(options)
            check_options(table)
        except PaimonError as e:
            raise self.fail(str(e)) from None
        expired = expire_partitions(table)
        return [(p,) for p in expired] or [("No expired partitions.",)]
