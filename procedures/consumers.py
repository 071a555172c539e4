"""Consumer procedures: paimon-spark's ResetConsumer and ClearConsumers over
:class:`~paimon_sql.consumer.consumer_manager.ConsumerManager`.

A consumer (``consumer/consumer-<id>``) is where a streaming reader with that ``consumer-id``
resumes, and expiry keeps the snapshots it has not read yet; these procedures move or remove it.
On ``t$branch_b`` they act on the branch's consumers.
"""

from __future__ import annotations

import re

from paimon_sql.procedures.base import Procedure, columns, optional, register, required

RESULT = columns("result BOOLEAN")


@register
class ResetConsumerProcedure(Procedure):
    name = "reset_consumer"
    parameters = (required("table", "STRING"), required("consumerId", "STRING"), optional("nextSnapshotId", "BIGINT"))
    output = RESULT
    description = "Set the snapshot a consumer reads next; without nextSnapshotId the consumer is deleted."

    def call(self, session, args):
        consumer, nxt = args["consumerId"], args["nextSnapshotId"]
        if not consumer.strip():
            raise self.fail("consumerId must not be blank")
        table = self.table(session, args["table"])
        sm = table.snapshot_manager
        if nxt is not None and (nxt < 1 or not sm.io.exists(sm.paths.snapshot_path(nxt))):
            # as Java, which reads the snapshot first: it must exist (not expired, not beyond the latest)
            raise self.fail(f"nextSnapshotId {nxt}: table '{args['table']}' has no such snapshot")
        manager = table.consumer_manager
        if nxt is None:
            manager.delete(consumer)  # as Java: deleting a consumer that is not there is no error
        else:
            manager.record(consumer, nxt)
        return [(True,)]


@register
class ClearConsumersProcedure(Procedure):
    name = "clear_consumers"
    parameters = (required("table", "STRING"), optional("includingConsumers", "STRING"),
                  optional("excludingConsumers", "STRING"))
    output = RESULT
    description = "Delete the consumers whose id matches includingConsumers (default all) and not excludingConsumers."

    def call(self, session, args):
        including = self.pattern(args["includingConsumers"], "includingConsumers") or re.compile(".*")
        excluding = self.pattern(args["excludingConsumers"], "excludingConsumers")
        manager = self.table(session, args["table"]).consumer_manager
        for consumer in manager.consumers():
            if including.fullmatch(consumer) and not (excluding and excluding.fullmatch(consumer)):
                manager.delete(consumer)
        return [(True,)]

    def pattern(self, text, argument):
        """A regular expression matched against the whole id (Java's ``Matcher.matches``); blank is none."""
        if text is None or not text.strip():
            return None
        try:
            return re.compile(text)
        except re.error as e:
            raise self.fail(f"{argument} is not a regular expression: '{text}' ({e})") from None
