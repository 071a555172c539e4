"""pypaimon (the oracle, in .venv-pypaimon) as one process per test run (per pytest-xdist worker):
the ``pypaimon`` fixture of tests/conftest.py. A process per command would pay its imports (pyarrow,
pypaimon: about 2 s of CPU) each time; this one serves every command (interop/pypaimon_driver.py
``-``), each on a fresh catalog."""

import json
import os
import select
import subprocess
import tempfile
import time

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interop", "pypaimon_driver.py")


class PyPaimonProcess:
    """``pypaimon(op=..., ...)``: the command's result, AssertionError
    naming the op and pypaimon's traceback when it failed."""

    def __init__(self, python: str):
        self.python = python
        self.proc = None
        self.stderr = None

    def _start(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([self.python, DRIVER, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, bufsize=0)
        self.pending = b""

    def __call__(self, timeout: float = 300, **command):
        if self.proc is None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(command).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # died: reading finds the end of its output and reports why
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(fd, 1 << 16) if ready else None
            if not chunk:
                self._died(command, f"did not answer within {timeout:.0f} s" if chunk is None else "exited")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        answer = json.loads(line)
        if "error" in answer:
            raise AssertionError(f"pypaimon {command.get('op')} failed:\n{answer['error'][-3000:]}")
        return answer["result"]

    def _died(self, command, what):
        self.proc.kill()
        self.proc.wait()
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace")
        self.close()
        raise AssertionError(f"pypaimon {command.get('op')} failed: the process {what}:\n{text[-3000:]}")

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()  # it exits at the end of its input
            if self.proc.poll() is None:
                try:
                    self.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc.stdout.close()
            self.stderr.close()
            self.proc = None
