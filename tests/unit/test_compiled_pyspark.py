"""PySpark's archive byte-compiled for Spark's Python processes (spark/compiled_pyspark.py): each
module's bytecode beside its source, imported from the archive, no test modules, rewritten only
when something is missing, another interpreter's bytecode replaced."""

import importlib.util
import subprocess
import sys
import zipfile

import pyspark

from paimon_sql.spark.compiled_pyspark import archives, compile_archive

_PROBE = "import pyspark.sql.functions as f, pyspark.serializers as s; print(f.__file__); print(s.__file__)"


def _copy(tmp_path):
    """The installed archive as PySpark ships it: sources only (the installed one may be compiled)."""
    (source,) = [p for p in archives() if p.name == "pyspark.zip"]
    path = tmp_path / "pyspark.zip"
    with zipfile.ZipFile(source) as z, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            if not info.filename.endswith(".pyc"):
                out.writestr(info.filename, z.read(info))
    return path


def _import_from(path) -> list:
    done = subprocess.run([sys.executable, "-c", _PROBE], env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_the_archive_spark_starts_its_python_with_is_found():
    assert {p.name for p in archives()} >= {"pyspark.zip"}
    assert all(str(p).startswith(str(pyspark.__path__[0])) for p in archives())


def test_modules_are_imported_from_their_bytecode_in_the_archive(tmp_path):
    path = _copy(tmp_path)
    assert [f.endswith(".py") for f in _import_from(path)] == [True, True]  # sources only: compiled on import
    written = compile_archive(path)
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        sources = {n for n in names if n.endswith(".py")}
        compiled = {n[:-1] for n in names if n.endswith(".pyc")}
        assert written == len(compiled) > 300
        assert compiled == {n for n in sources if "/tests/" not in n}
        assert z.read("pyspark/serializers.pyc")[:4] == importlib.util.MAGIC_NUMBER
        assert z.testzip() is None
    files = _import_from(path)
    assert files == [f"{path}/pyspark/sql/functions/__init__.pyc", f"{path}/pyspark/serializers.pyc"]
    before = path.stat().st_mtime_ns
    assert compile_archive(path) == 0 and path.stat().st_mtime_ns == before  # nothing missing: untouched


def test_another_interpreters_bytecode_is_replaced(tmp_path):
    path = _copy(tmp_path)
    compile_archive(path)
    with zipfile.ZipFile(path) as z:
        entries = {i.filename: z.read(i) for i in z.infolist()}
    entries["pyspark/serializers.pyc"] = b"\x00\x00\r\n" + entries["pyspark/serializers.pyc"][4:]
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    assert compile_archive(path) == 1
    with zipfile.ZipFile(path) as z:
        assert z.namelist().count("pyspark/serializers.pyc") == 1
        assert z.read("pyspark/serializers.pyc")[:4] == importlib.util.MAGIC_NUMBER
    assert _import_from(path)[1].endswith("serializers.pyc")
