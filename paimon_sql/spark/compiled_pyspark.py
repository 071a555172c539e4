"""PySpark's modules byte-compiled inside the ``pyspark.zip`` Spark's Python processes import.

Spark starts each Python process it needs with ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's
archive) first on ``PYTHONPATH``. These processes are the worker daemons, the source runner of each
streaming query and the planner of a Python data source read. PySpark's pip package ships that
archive with sources only, and Python never writes bytecode into an archive. So each process
compiles again every PySpark module it imports. A streaming source runner spends ~1.2 s of CPU on
this, and every new streaming query pays it (issue 46, docs/performance.md).

:func:`compile_archives` adds to each archive the bytecode of its modules for the running
interpreter. The bytecode is stored as unchecked hash-based ``.pyc`` entries beside their sources,
the layout zipimport looks for. Test modules are left out. An interpreter of another version
finds a bad magic number in the ``.pyc`` and compiles the source, as before. The archive is
rewritten whole to a temporary file, then renamed over the old one: a process that is importing
from it keeps the file it opened. ``scripts/install.sh`` runs this; so can a user:

    python -m paimon_sql.spark.compiled_pyspark
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import List

_UNCHECKED_HASH = (1).to_bytes(4, "little")  # PEP 552 flags: hash-based, source not checked


def archives() -> List[Path]:
    """The archives of the installed PySpark that Spark puts on its Python processes' path."""
    import pyspark
    lib = Path(pyspark.__file__).parent / "python" / "lib"
    return sorted(lib.glob("*.zip")) if lib.is_dir() else []


def _pyc(source: bytes, filename: str) -> bytes:
    code = compile(source, filename, "exec", dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + _UNCHECKED_HASH + importlib.util.source_hash(source) + marshal.dumps(code)


def _compiled(z: zipfile.ZipFile, name: str) -> bool:
    """Whether ``name`` (a ``.py`` entry) has a ``.pyc`` beside it for this interpreter."""
    try:
        return z.read(name + "c")[:4] == importlib.util.MAGIC_NUMBER
    except KeyError:
        return False


def compile_archive(path: Path) -> int:
    """Add the missing (or other-version) ``.pyc`` entries to the archive at ``path``; returns how
    many were written. An archive already compiled for this interpreter is left untouched."""
    with zipfile.ZipFile(path) as z:
        sources = [n for n in z.namelist() if n.endswith(".py") and "/tests/" not in n]
        todo = {n for n in sources if not _compiled(z, n)}
        if not todo:
            return 0
        # compiled before writing: writestr() of an entry moves its ZipInfo to the new archive
        pycs = [(zipfile.ZipInfo(n + "c", z.getinfo(n).date_time), _pyc(z.read(n), f"{path}/{n}"))
                for n in sorted(todo)]
        kept = [(info, z.read(info)) for info in z.infolist()
                if not (info.filename.endswith(".pyc") and info.filename[:-1] in todo)]  # another version's
        fd, tmp = tempfile.mkstemp(prefix=path.name, dir=path.parent)
        os.close(fd)
        try:
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
                for info, data in kept:
                    out.writestr(info, data)
                for info, data in pycs:
                    out.writestr(info, data, zipfile.ZIP_DEFLATED)
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    return len(todo)


def compile_archives() -> int:
    """:func:`compile_archive` on each of :func:`archives`; returns the ``.pyc`` entries written."""
    return sum(compile_archive(p) for p in archives())


if __name__ == "__main__":
    try:
        n = compile_archives()
    except (OSError, zipfile.BadZipFile) as e:  # read-only or unreadable: its processes compile as they did
        print(f"paimon-sql: PySpark's archives were not compiled ({e})", file=sys.stderr)
        sys.exit(0)
    print(f"paimon-sql: {n} PySpark modules byte-compiled in their archives" if n else
          "paimon-sql: PySpark's archives were compiled already")
