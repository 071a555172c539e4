"""CALL sys.mark_partition_done and the partition statements (SHOW / ADD / DROP PARTITION) through SQL."""

import json
import os
import re

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows

SIGNATURE = r"; expected sys\.mark_partition_done\(table STRING, partitions STRING\)$"


def table(session, extra=""):
    session.sql(f"CREATE TABLE t (id INT, dt STRING, h INT) PARTITIONED BY (dt, h){extra}")
    session.sql("INSERT INTO t VALUES (1, '2024-01-01', 1), (2, '2024-01-02', 2)")
    return session.catalog.get_table("default.t")


def success_files(t):
    """{partition directory: the _SUCCESS file's text}."""
    out = {}
    for root, _, names in os.walk(t.path):
        if "_SUCCESS" in names:
            out[os.path.relpath(root, t.path)] = open(os.path.join(root, "_SUCCESS")).read()
    return out


def test_success_file_is_written_as_java_writes_it(session):
    t = table(session)
    assert rows(session, "CALL sys.mark_partition_done('t', 'dt=2024-01-01,h=1;dt=\"2024-01-09\",h=9')") == [(True,)]
    written = success_files(t)
    assert sorted(written) == ["dt=2024-01-01/h=1", "dt=2024-01-09/h=9"]  # as Java: an empty partition is marked too
    text = written["dt=2024-01-01/h=1"]
    assert re.fullmatch(r'\{\n  "creationTime" : (\d+),\n  "modificationTime" : \1\n\}', text), text
    assert rows(session, "SELECT partition FROM t$partitions ORDER BY partition") == [("dt=2024-01-01/h=1",),
                                                                                     ("dt=2024-01-02/h=2",)]
    assert [s for (s,) in rows(session, "SELECT commit_kind FROM t$snapshots")] == ["APPEND"]  # no snapshot


def test_marking_again_keeps_the_creation_time_and_moves_the_modification_time(session):
    t = table(session)
    path = os.path.join(t.path, "dt=2024-01-02", "h=2", "_SUCCESS")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write('{"creationTime": 1000, "modificationTime": 2000, "extra": 1}')  # Java ignores unknown fields
    session.sql("CALL sys.mark_partition_done(table => 't', partitions => 'DT=2024-01-02,h=2')")
    marked = json.loads(open(path).read())
    assert marked["creationTime"] == 1000 and marked["modificationTime"] > 2000 and set(marked) == {
        "creationTime", "modificationTime"}


@pytest.mark.parametrize("action, needs", [
    ("done-partition", "a metastore"), ("mark-event", "a Hive metastore"), ("success-file,http-report", "Java's HTTP"),
    ("custom", "a Java class"), ("nope", None)])
def test_actions_that_need_a_metastore_or_java_are_refused_before_anything_is_written(session, action, needs):
    t = table(session, f" TBLPROPERTIES ('partition.mark-done-action'='{action}')")
    problem = f"action '{action.split(',')[-1]}' needs {needs}" if needs else "unknown action 'nope'"
    with pytest.raises(PaimonError, match=r"^CALL sys\.mark_partition_done: option 'partition\.mark-done-action'.*"
                                          + re.escape(problem) + ".*" + SIGNATURE):
        session.sql("CALL sys.mark_partition_done('t', 'dt=2024-01-01,h=1')")
    assert success_files(t) == {}


@pytest.mark.parametrize("partitions, problem", [
    ("dt=2024-01-01", r"partition 'dt=2024-01-01' must name every partition column \(dt, h\)"),
    ("dt=2024-01-01,h=1;x=1", r"partitions must be 'key=value,...;...' over partition columns \(dt, h\)"),
    ("dt=2024-01-01,h=one", r"partition value 'one' of 'h' is not a INT"),
])
def test_bad_partitions_fail_in_one_line_and_mark_nothing(session, partitions, problem):
    t = table(session)
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.mark_partition_done('t', '{partitions}')")
    assert "\n" not in str(e.value) and re.match(r"CALL sys\.mark_partition_done: " + problem, str(e.value)), str(e.value)
    assert success_files(t) == {}


def test_an_unpartitioned_table_has_nothing_to_mark(session):
    session.sql("CREATE TABLE u (id INT)")
    with pytest.raises(PaimonError, match=r"table 'u' is not partitioned" + ".*" + SIGNATURE):
        session.sql("CALL sys.mark_partition_done('u', 'id=1')")


def test_show_add_drop_partition_as_paimon_spark(session):
    t = table(session)
    assert rows(session, "SHOW PARTITIONS t") == [("dt=2024-01-01/h=1",), ("dt=2024-01-02/h=2",)]
    with pytest.raises(PaimonError, match=r"^ALTER TABLE \.\.\. ADD PARTITION is not supported on Paimon table "
                                          r"default\.t: a partition is created by writing rows into it$"):
        session.sql("ALTER TABLE t ADD PARTITION (dt='2024-03-01', h=3)")
    assert len(rows(session, "SELECT * FROM t$snapshots")) == 1
    session.sql("ALTER TABLE t DROP PARTITION (dt='2024-01-01', h=1)")
    assert rows(session, "SHOW PARTITIONS t") == [("dt=2024-01-02/h=2",)]
    assert rows(session, "SELECT id FROM t") == [(2,)]
    assert t.schema.partition_keys == ["dt", "h"]


JAVA_CHECK = """
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.partition.file.SuccessFile;

public class SuccessFileCheck {
    public static void main(String[] args) throws Exception {
        SuccessFile ours = SuccessFile.safelyFromPath(LocalFileIO.create(), new Path(args[0]));
        System.out.print(new SuccessFile(ours.creationTime(), ours.modificationTime()).toJson());
    }
}
"""


def test_java_paimon_reads_the_success_file_and_writes_the_same_bytes(session, tmp_path):
    """Java Paimon 1.0 parses our _SUCCESS and its SuccessFile.toJson() of the same times is our file, byte
    for byte."""
    import subprocess

    from oracles import tool
    from oracles.paimon_java import INSTALL_JDK, bundle
    t = table(session)
    session.sql("CALL sys.mark_partition_done('t', 'dt=2024-01-01,h=1')")
    path = os.path.join(t.path, "dt=2024-01-01", "h=1", "_SUCCESS")
    source = tmp_path / "SuccessFileCheck.java"
    source.write_text(JAVA_CHECK)
    out = subprocess.run([tool("java", INSTALL_JDK), "-cp", str(bundle("1.0")[0]), str(source), path],
                         capture_output=True, text=True, check=True).stdout
    assert out == open(path).read()
