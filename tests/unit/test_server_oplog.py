"""The operation log (paimon_sql/server/oplog.py): a statement's end costs no poll of Spark's status
until a client reads the log; then the stages' last counts come before the end line."""

from paimon_sql.server.oplog import OperationLog


def test_the_end_is_polled_when_the_log_is_read_not_when_the_statement_ends():
    calls = []

    def stages():
        calls.append(1)
        return [(3, 4, 4, 0)]
    log = OperationLog()
    log.add("Executing statement: SELECT 1")
    log.finish(stages, "Completed in 0.1 s")
    assert calls == []  # nothing asked Spark yet: a client that never reads the log costs nothing
    assert log.read(first=False) == ["INFO  : Executing statement: SELECT 1", "INFO  : Stage-3: 4/4 tasks (0 running)",
                                     "INFO  : Completed in 0.1 s"]
    assert calls == [1]
    assert log.read(first=False) == [] and log.text().endswith("Completed in 0.1 s") and calls == [1]
    log.poll(stages)  # after the end line nothing more is added
    log.add("late")
    assert log.read(first=True)[-1] == "INFO  : Completed in 0.1 s"


def test_only_the_first_end_counts():
    log = OperationLog()
    log.finish(lambda: [], "Failed after 1.0 s: boom", "ERROR")
    log.finish(lambda: [], "Cancelled after 1.0 s")
    assert log.text() == "ERROR : Failed after 1.0 s: boom"
