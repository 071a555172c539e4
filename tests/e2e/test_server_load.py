"""The load harness at a small size (bench/server_load.py; full size by hand, docs/performance.md):
a few LDAP clients at once against a real paimon-sql-server with a policy file, mixing reads and
writes; no statement fails, every acknowledged write is in its table once, and the server's status
line (SIGUSR1) shows the clients' sessions while they run and none once they left."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import server_load  # noqa: E402


def test_a_few_clients_at_once_lose_and_double_nothing(capsys):
    out = server_load.main(["--clients", "3", "--seconds", "20", "--rows", "20000", "--servers", "ours",
                            "--auth", "ldap", "--settle", "2"])["ours"]
    assert out["errors"] == 0, out["first_errors"]
    assert out["inserts_acknowledged"] > 0
    assert (out["lost"], out["doubled"], out["merge_keys_wrong"]) == (0, 0, 0)
    done = sum(out[k]["n"] for k in server_load.KINDS if k in out)
    assert done >= 10 and out["statements_per_s"] > 0
    assert out["rss_mb"]["before"] > 0 and out["rss_mb"]["peak"] >= out["rss_mb"]["before"]
    assert out["status"]["before"].startswith("0 sessions"), out["status"]
    assert out["status"]["during"].startswith("3 sessions"), out["status"]
    assert re.search(r", [0-3] planning \(limit \d+\), [0-3] waiting$", out["status"]["during"]), out["status"]
    assert server_load.NOTHING_HELD.fullmatch(out["status"]["after"] or ""), out["status"]
    # none while serving, nor when stopped with its JVM (SIGTERM to the process group)
    assert out["python_tracebacks"] == 0, out.get("first_traceback")
    assert out["processes"]["before"] >= 2 and out["processes"]["after"] >= 2  # the server and its JVM
    assert "statements/s" in capsys.readouterr().out
