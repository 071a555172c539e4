"""The oracles the tests compare us with, fetched once and cached under ``~/.cache/paimon-sql/``
(``$PAIMON_SQL_CACHE`` overrides it).

- Java Apache Paimon 1.0: the bundle jar inside the PyPI wheel ``paimon-python-ali==0.1.1``.
- Java Apache Paimon 2.0: from Maven Central by ``mvn dependency:copy`` (``maven.py``).
- Apache Iceberg Java 1.10.1 and 1.8.1, readers of our Iceberg metadata: Maven Central (``iceberg_java.py``).
- pypaimon 2.1 (PyPI) lives in its own venv, ``.venv-pypaimon``, made by ``scripts/setup-tests.sh``.

Whatever is missing (java, javac, mvn, a registry) raises ``OracleUnavailable`` naming it and the
fix: a test that needs an oracle fails with the reason, it never skips.
``python -m oracles`` (from tests/) fetches and compiles everything ahead of the tests.
"""

import os
import shutil
from pathlib import Path


class OracleUnavailable(RuntimeError):
    """An oracle cannot be run here; the message says what is missing and how to get it."""


def cache_dir() -> Path:
    """Where fetched oracles live: ``$PAIMON_SQL_CACHE`` or ``~/.cache/paimon-sql``."""
    return Path(os.environ.get("PAIMON_SQL_CACHE") or Path.home() / ".cache" / "paimon-sql")


def tool(name: str, install: str) -> str:
    """The path of command ``name``; ``install`` says how to get it when it is not on PATH."""
    path = shutil.which(name)
    if path is None:
        raise OracleUnavailable(f"`{name}` is not on PATH: {install}")
    return path
