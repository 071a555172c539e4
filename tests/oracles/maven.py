"""Artifacts from Maven Central, fetched by Maven itself (``mvn dependency:copy``) into
``<cache>/maven/`` and reused from there on every later run.

Example: ``artifact("org.apache.paimon:paimon-core:2.0.0")`` -> ``.../maven/paimon-core-2.0.0.jar``.
"""

import os
import re
import subprocess
import tempfile
from pathlib import Path

from oracles import OracleUnavailable, cache_dir, tool

INSTALL_MAVEN = "install Maven (Debian: apt-get install maven) to fetch the Java oracles from Maven Central"


def artifact(coordinate: str) -> Path:
    """The jar of ``group:artifact:version`` (or ``group:artifact:version:jar:classifier``),
    downloaded once; OracleUnavailable with Maven's reason when it cannot be had."""
    _, name, version, *classified = coordinate.split(":")
    suffix = f"-{classified[1]}" if len(classified) == 2 else ""
    target = cache_dir() / "maven" / f"{name}-{version}{suffix}.jar"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        proc = subprocess.run(
            [tool("mvn", INSTALL_MAVEN), "-q", "-B", "dependency:copy",
             f"-Dartifact={coordinate}", f"-DoutputDirectory={tmp}"],
            capture_output=True, text=True, cwd=tmp)
        fetched = Path(tmp) / target.name
        if proc.returncode != 0 or not fetched.exists():
            reason = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in proc.stdout.splitlines() if "ERROR" in line][:1] \
                or [proc.stderr.strip()[-300:]]
            raise OracleUnavailable(f"Maven could not fetch {coordinate}: {reason[0]}")
        os.replace(fetched, target)
    return target
