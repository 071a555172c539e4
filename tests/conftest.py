"""Shared fixtures: a fresh warehouse per test, and pypaimon (the oracle) in its own venv."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPAIMON_VENV = ROOT / ".venv-pypaimon"
PYPAIMON_VERSION = "2.1.0"
DRIVER = ROOT / "tests" / "interop" / "pypaimon_driver.py"

# the schema most tests use: the benchmark's shape (id, name, value, dt)
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("value", pa.float64()),
                    pa.field("dt", pa.string(), False)])


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse):
    from paimon_sql.catalog import load_catalog
    cat = load_catalog(warehouse)
    cat.create_database("db")
    return cat


def _ensure_pypaimon() -> str:
    python = PYPAIMON_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PYPAIMON_VENV)], check=True)
    probe = subprocess.run([str(python), "-c", "import pypaimon"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"pypaimon=={PYPAIMON_VERSION}"], check=True)
    return str(python)


class PyPaimon:
    """Drives tests/interop/pypaimon_driver.py in the pypaimon venv; one JSON command per call."""

    def __init__(self, python: str):
        self.python = python

    def __call__(self, **command):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        proc = subprocess.run([self.python, str(DRIVER), json.dumps(command)], capture_output=True, text=True,
                              env=env, timeout=300)
        if proc.returncode != 0:
            raise AssertionError(f"pypaimon {command.get('op')} failed:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def pypaimon():
    return PyPaimon(_ensure_pypaimon())
