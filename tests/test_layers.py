"""The layers import one way (docs/architecture.md "Layers"):

    language, kernels  <-  planner  <-  facet data modules  <-  facet.engine  <-  api / cli

``language/`` (the DC text, its AST and the errors) and ``kernels/`` (numba)
import nothing of facet's; the planner is pure (the language, the kernels'
tuning names, its own modules); the engine executes plans; only the API and
the command line sit on top.  Every import counts, also those inside
functions, and no module may take part in an import cycle.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: source folder -> the package name it ships as (pyproject's package-dir)
FOLDERS = {
    "language": "facet.language",
    "kernels": "facet.kernels",
    "planner": "facet.planner",
    "facet": "facet",
}
#: layer rank per module prefix (the longest matching prefix wins)
LAYERS = {
    "facet.language": 0,
    "facet.kernels": 0,
    "facet.planner": 1,
    "facet.errors": 2,
    "facet.loading": 2,
    "facet.column_types": 2,
    "facet.encoding": 2,
    "facet.numeric_ranks": 2,
    "facet.progress": 2,
    "facet.sinks": 2,
    "facet.result": 2,
    "facet.encoding_append": 2,  # the incremental state over an encoding
    "facet.key_tallies": 2,
    "facet.dominance_index": 2,
    "facet.thread_pools": 2,  # warm-up of the process-wide pools
    "facet.engine": 3,
    "facet.api": 4,
    "facet.detector": 4,
    "facet.cli": 4,
    "facet.__main__": 4,
    "facet.integrations": 4,  # bridges to other tools, built on the API
    "facet": 4,  # the package itself: lazy re-exports of the API
}


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def _layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _imports(module: str, path: Path) -> set[str]:
    """facet modules imported anywhere in ``path`` (relative imports resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                base = ".".join(up[: len(up) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            # the longest known module the name refers to
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name.startswith("facet"):
                found.add(name)
    found.discard(module)
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def test_the_layers_are_where_the_code_is():
    assert {"facet.planner.plan", "facet.kernels.count", "facet.language.parser"} <= set(MODULES)
    assert "facet.engine.local" in MODULES and "facet.api" in MODULES


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    """No module imports a higher layer (the planner imports nothing of facet/)."""
    mine = _layer(module)
    up = sorted(m for m in GRAPH[module] if _layer(m) > mine)
    assert not up, f"{module} (layer {mine}) imports {up}"


def test_kernels_and_language_import_nothing_above_them():
    for module, deps in GRAPH.items():
        if module.startswith(("facet.kernels", "facet.language")):
            prefix = ".".join(module.split(".")[:2])
            bad = {d for d in deps if not d.startswith(prefix)}
            assert not bad, f"{module} imports {sorted(bad)}"


def test_planner_is_pure():
    """The planner reads no data: it imports the language, the kernels' tuning
    names and itself -- never the engine, encoding or loading."""
    for module, deps in GRAPH.items():
        if module.startswith("facet.planner"):
            bad = {
                d
                for d in deps
                if not d.startswith(("facet.planner", "facet.language"))
                and d != "facet.kernels.tuning"
            }
            assert not bad, f"{module} imports {sorted(bad)}"


def test_no_import_cycles():
    """The module import graph is acyclic (lazy imports inside functions included)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(GRAPH.get(m, ())):
            if state.get(d) == 1:
                cycle = stack[stack.index(d) :] + [d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_every_package_ships() -> None:
    """A non-editable install gets exactly the packages pyproject lists: every
    folder with an ``__init__.py`` must be named there (facet.engine.spark once
    was not, so ``pip install .`` had no Spark engine)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = {m for m, path in MODULES.items() if path.name == "__init__.py"}
    assert found == listed


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def test_architecture_names_every_module() -> None:
    """docs/architecture.md says where each piece lives: every source module is
    named there by its file name (``__init__.py`` aside)."""
    text = ARCHITECTURE.read_text()
    unnamed = sorted(
        str(path.relative_to(ROOT))
        for path in MODULES.values()
        if path.name != "__init__.py" and path.name not in text
    )
    assert not unnamed, f"modules docs/architecture.md does not name: {unnamed}"


def test_cited_architecture_sections_exist() -> None:
    """A docstring citing ``docs/architecture.md "Section"`` names one of its
    headings (by the heading's first words), so the pointer leads somewhere."""
    headings = [
        line.lstrip("#").strip()
        for line in ARCHITECTURE.read_text().splitlines()
        if line.startswith("## ")
    ]
    cite = re.compile(r'architecture\.md\s+"([^"]+)"')
    missing = sorted(
        f"{path.relative_to(ROOT)}: {name!r}"
        for path in MODULES.values()
        for name in cite.findall(path.read_text())
        if not any(h.startswith(name) for h in headings)
    )
    assert not missing, f"cited sections with no such heading: {missing}"
