"""The shell's errors (issue 12): every failing statement is one line on stderr, never a traceback
or Spark's log of it, whether it failed before or while its rows were fetched; the prompt goes on."""

import os
import subprocess
import sys

from e2e.test_cli import BIN, QUICK_JVM, run


def after_startup(stderr):
    """stderr from the first statement on (Spark's startup notices come before it)."""
    lines = stderr.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith(("Time taken", "Error:")))
    return lines[first:]


def test_error_while_rows_are_fetched_stops_the_script_with_one_line(warehouse):
    proc = run(warehouse, "--output", "json", "-e",
               "CREATE TABLE t (a INT, b STRING); INSERT INTO t VALUES (1, 'x'); SELECT a / 0 FROM t; SELECT 1")
    assert proc.returncode == 1
    assert proc.stdout == ""  # json: the failed query prints no rows, the next one does not run
    lines = after_startup(proc.stderr)  # no progress bar, task stack trace or JSON log record among them
    assert [ln.startswith("Time taken") for ln in lines] == [True, True, False], proc.stderr[-3000:]
    assert lines[2].startswith("Error: [DIVIDE_BY_ZERO] Division by zero.")


def test_interactive_prompt_survives_every_error(warehouse):
    """The prompt: statements over several lines, every kind of error one line, and the session goes on
    after each (test_cli's former test_interactive_prompt_multiline runs here, in the same shell)."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, HOME=warehouse)
    os.makedirs(warehouse, exist_ok=True)
    stdin = ("CREATE TABLE t (a INT, b STRING);\nINSERT INTO t\n  VALUES (7, 'x');\n"
             "SELECT a / 0 FROM t;\nSELECT CAST(b AS INT) FROM t;\nSELECT * FROM t WHERE a = = 1;\n"
             "MSCK REPAIR TABLE t;\nSELECT a * 6\n AS x FROM t;\nSELEC;\nSELECT a AS y FROM t;\nquit\n")
    proc = subprocess.run([BIN, "--warehouse", warehouse, "--master", "local[2]", "--conf", QUICK_JVM,
                           "--output", "tsv"], input=stdin,
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "x\n42\n" in proc.stdout and "y\n7\n" in proc.stdout  # multi-line statements; errors end no session
    errors = [ln for ln in after_startup(proc.stderr) if not ln.startswith("Time taken")]
    assert [e.split(" ")[1] for e in errors] == ["[DIVIDE_BY_ZERO]", "[CAST_INVALID_INPUT]", "syntax", "unsupported",
                                                 "syntax"], proc.stderr[-3000:]
    assert errors[2] == "Error: syntax error at or near '=' (line 1, column 27)"
    assert errors[3] == "Error: unsupported statement on Paimon table default.t: MSCK REPAIR TABLE t"
    assert "SELEC" in errors[4]
