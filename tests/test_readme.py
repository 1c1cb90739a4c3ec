"""The README's commands and examples run as written.

* every ``$ facet ...`` command in a code block runs from the repository root with the
  virtual environment's ``bin`` first on ``PATH`` (as after ``source .venv/bin/activate``),
  exits 0 or 1 (never a usage, input or internal error), and prints the output the README
  shows: each shown line appears, in order, with timings masked (a block whose output is
  elided with ``...`` is checked on the lines it does show);
* every ``python`` block runs as a script from the repository root and exits 0;
* ``scripts/demo.sh`` runs (``scripts/test.sh`` and ``scripts/kernel_coverage.sh`` are what CI
  itself runs, so they are not run again from inside the tests).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
#: scripts the README names that CI runs itself
RUN_BY_CI = {"scripts/test.sh", "scripts/kernel_coverage.sh"}


def code_blocks(text: str) -> list[tuple[str, list[str]]]:
    """``(language, lines)`` of every fenced block."""
    out: list[tuple[str, list[str]]] = []
    lang, lines = None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, lines = line[3:].strip(), []
            else:
                out.append((lang, lines))
                lang = None
        elif lang is not None:
            lines.append(line)
    return out


def shell_examples(blocks) -> list[tuple[str, list[str]]]:
    """``(command, shown output lines)`` for every ``$ `` command."""
    out = []
    for lang, lines in blocks:
        if lang:
            continue
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            cmd = lines[i][2:]
            while cmd.endswith("\\"):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            i += 1
            shown = []
            while i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i])
                i += 1
            out.append((cmd, shown))
    return out


def script_commands(blocks) -> list[str]:
    """One-line ``scripts/...`` commands of plain blocks."""
    return [
        lines[0].strip()
        for lang, lines in blocks
        if not lang and len(lines) == 1 and lines[0].startswith("scripts/")
    ]


BLOCKS = code_blocks(README.read_text())
SHELL = shell_examples(BLOCKS)
PYTHON = ["\n".join(lines) for lang, lines in BLOCKS if lang == "python"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    env["COLUMNS"] = "200"
    return env


def _mask(line: str) -> str:
    """Timings vary from run to run: mask decimals with three places, and spacing."""
    line = re.sub(r"\d+\.\d{3}\b", "#", line)
    return " ".join(line.split())


def test_the_readme_has_examples():
    assert len(SHELL) >= 3 and PYTHON and "scripts/demo.sh" in script_commands(BLOCKS)


@pytest.mark.parametrize("cmd, shown", SHELL, ids=[c[:60] for c, _ in SHELL])
def test_shell_example(cmd, shown):
    argv = shlex.split(cmd)
    assert argv[0] == "facet", cmd
    p = subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    got = [_mask(x) for x in p.stdout.splitlines()]
    want = [_mask(x) for x in shown if x.strip() and x.strip() != "..."]
    at = 0
    for line in want:
        while at < len(got) and got[at] != line:
            at += 1
        assert at < len(got), f"README line not in the output (in order): {line!r}\n{p.stdout}"
        at += 1


@pytest.mark.parametrize("code", PYTHON, ids=[f"python-{i}" for i in range(len(PYTHON))])
def test_python_example(code, tmp_path):
    script = tmp_path / "example.py"
    script.write_text(code)
    p = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("cmd", [c for c in script_commands(BLOCKS) if c not in RUN_BY_CI])
def test_script_command(cmd):
    p = subprocess.run(
        shlex.split(cmd), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
