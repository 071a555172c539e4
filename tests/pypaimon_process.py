"""pypaimon (the oracle, in .venv-pypaimon) as one process per test run (per pytest-xdist worker):
the ``pypaimon`` fixture of tests/conftest.py. A process per command would pay its imports (pyarrow,
pypaimon: about 2 s of CPU) each time; this one serves every command (interop/pypaimon_driver.py
``-``), each on a fresh catalog."""

import json
import os

from support import LineProcess

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interop", "pypaimon_driver.py")


class PyPaimonProcess:
    """``pypaimon(op=..., ...)``: the command's result, AssertionError
    naming the op and pypaimon's traceback when it failed."""

    def __init__(self, python: str):
        self.python = python
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        self.process = LineProcess([python, DRIVER, "-"], "pypaimon", env=env)

    def __call__(self, timeout: float = 300, **command):
        self.process.write(json.dumps(command))
        answer = json.loads(self.process.read_line(timeout))
        if "error" in answer:
            raise AssertionError(f"pypaimon {command.get('op')} failed:\n{answer['error'][-3000:]}")
        return answer["result"]

    def close(self):
        self.process.close()
