"""Shared fixtures: a fresh warehouse per test, and pypaimon (the oracle) in its own venv."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import free_port

ROOT = Path(__file__).resolve().parent.parent
PYPAIMON_VENV = ROOT / ".venv-pypaimon"
PYPAIMON_VERSION = "2.1.0"
DRIVER = ROOT / "tests" / "interop" / "pypaimon_driver.py"



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


@pytest.fixture(scope="session")
def s3_server():
    """A real S3-compatible server (moto_server) on 127.0.0.1; yields catalog options for it."""
    port = free_port()
    server = Path(sys.executable).parent / "moto_server"
    proc = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        raise RuntimeError("moto_server did not start")
    yield {"s3.endpoint": f"http://127.0.0.1:{port}", "s3.access-key": "test", "s3.secret-key": "test",
           "s3.region": "us-east-1"}
    proc.terminate()
    proc.wait(timeout=10)
