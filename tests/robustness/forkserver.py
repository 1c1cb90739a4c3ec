"""A fork server for the robustness suite's CLI runs: ``python tests/robustness/forkserver.py``.

Starting ``facet`` costs about a second of imports, nearly all of a small case's time.
This process imports the command line once, then runs each request in a child process
forked from that pristine state: the child gets its own working directory, stdin,
stdout and stderr (files), ``sys.argv``, and runs the console script's
``sys.exit(facet.cli.main())``; its exit status is the run's exit code.  Everything
else -- argument parsing, loading, warm-up, errors, writing --out -- happens in the
child as it does in a fresh ``facet`` process.  tests/robustness/test_fork_server.py
checks that both give the same exit code, stderr and output; ``FACET_ROBUSTNESS_EXEC=1``
runs every case through the real ``facet`` executable instead.

Protocol: one JSON request per line on stdin, ``{"argv", "cwd", "stdin", "stdout",
"stderr", "timeout"}`` (paths; stdin may be null), one JSON reply per line on stdout,
``{"code": int | null}`` (null: killed after ``timeout`` seconds).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import time
import traceback

sys.path.pop(0)  # this script's directory: imports resolve as in the facet console script

import facet.api  # noqa: E402, F401 - imported once, here, for every child
import facet.cli  # noqa: E402


def _stream(fd: int, like: io.TextIOWrapper, mode: str) -> io.TextIOWrapper:
    """A text stream on ``fd`` set up as this interpreter set up ``like`` at start."""
    return io.TextIOWrapper(
        io.FileIO(fd, mode, closefd=False),
        encoding=like.encoding,
        errors=like.errors,
        line_buffering=like.line_buffering,
        write_through=getattr(like, "write_through", False),
    )


def _child(req: dict, protocol: tuple[int, int]) -> None:
    """Run one ``facet`` command line in this (forked) process; never returns."""
    code = 1
    try:
        for fd in protocol:
            os.close(fd)
        os.chdir(req["cwd"])
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        sources = (
            os.open(req["stdin"] or os.devnull, os.O_RDONLY),
            os.open(req["stdout"], flags, 0o644),
            os.open(req["stderr"], flags, 0o644),
        )
        for target, fd in enumerate(sources):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = _stream(0, sys.__stdin__, "r")
        sys.stdout = _stream(1, sys.__stdout__, "w")
        sys.stderr = _stream(2, sys.__stderr__, "w")
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = ["facet", *req["argv"]]
        try:
            sys.exit(facet.cli.main())  # what the console script does
        except SystemExit as exc:  # as the interpreter would handle it
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001 - an uncaught error: the interpreter's report
            traceback.print_exc()
            code = 1
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # e.g. a closed pipe: nothing more to say
                stream.flush()
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit code (negative: killed by that signal); None after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.002)


def serve() -> None:
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    protocol = (requests.fileno(), replies.fileno())
    for line in requests:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req, protocol)
        replies.write(json.dumps({"code": _wait(pid, req["timeout"])}) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve()
