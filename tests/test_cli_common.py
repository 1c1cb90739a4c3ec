"""Every command takes the options that make sense for all of them, from one shared
parser (facet/cli.py): the table and its DCs, ``--where``, ``--schema``, ``--delimiter``,
``--timeout``, ``-q/--quiet`` and ``--debug``."""

from __future__ import annotations

import json

import pytest

from facet.cli import build_parser, main

COMMANDS = ("detect", "explain", "report")
SHARED = ("--rules", "-r", "--dc", "--where", "--schema", "--delimiter", "--timeout",
          "--quiet", "-q", "--debug")  # fmt: skip


def _options(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {o for a in sub._actions for o in a.option_strings}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_the_shared_options(command):
    assert set(SHARED) <= _options(command)


def test_detect_and_explain_share_their_engine_options():
    assert {"--engine", "--master", "--format"} <= _options("detect") & _options("explain")


def _args(command: str, tmp_path) -> list[str]:
    data = tmp_path / "t.csv"
    data.write_text("zip;city\n1;a\n1;b\n2;c\n")
    extra = ["--out", str(tmp_path / "r.html")] if command == "report" else []
    return [command, str(data), "--dc", "zip -> city", *extra]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flags", [["-q"], ["--quiet"], ["--debug"], ["-q", "--debug"]])
def test_every_command_accepts_quiet_and_debug(command, flags, tmp_path, capsys):
    code = main([*_args(command, tmp_path), *flags])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert err == ""  # a quiet, clean run writes nothing to stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_the_csv_and_run_options(command, tmp_path, capsys):
    args = [*_args(command, tmp_path), "--delimiter", ";", "--schema", "zip:int",
            "--where", "zip >= 1", "--timeout", "60", "-q"]  # fmt: skip
    if command != "report":
        args += ["--format", "json"]
    code = main(args)
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    if command != "report":
        doc = json.loads(out)
        assert doc["rows"] == 3 and doc["where"] == "zip >= 1"
