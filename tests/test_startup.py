"""Start-up stays light (bench/startup.py measures it; nothing here is timed).

* ``facet --help`` and a DC syntax error import the standard library only: no numba,
  numpy, pyarrow -- each a fresh interpreter, as the command line starts.
* A local detect imports neither pyspark nor datasketch (nor pyroaring unless bitmaps are
  asked for); scipy only where numba's own BLAS probe pulls it in (a dev install has it),
  and it runs with the dev-only packages (pandas, scipy, datasketch) not installed.
* The warm-up loads the kernels a run's plans use, and only those: after it, the run loads
  no other kernel (``warmup_seconds`` holds all its JIT time).
* facet's HyperLogLog++ estimate equals datasketch's ``HyperLogLogPlusPlus.count()``
  (the test twin of the estimator that replaced it), bias tables included.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from facet.engine.warmup import KERNELS, plan_kernels, run_kernels
from facet.language.normalize import normalize
from facet.language.parser import parse_dc
from facet.planner.config import DEFAULT
from facet.planner.plan import make_plan
from facet.planner.statistics import HLL_PRECISIONS, Sides, hll_cardinality

ROOT = Path(__file__).resolve().parent.parent
#: what a run of the command line must not import before it needs to
ENGINE_MODULES = ("numba", "llvmlite", "numpy", "pyarrow", "pandas", "scipy", "datasketch",
                  "pyspark", "pyroaring")  # fmt: skip
#: what the dev extra brings and facet's runtime must do without
DEV_ONLY = ("pandas", "scipy", "datasketch")

EMP = """name,dept,zip,city,state,salary,rate
ann,a,01907,lynn,ma,100,1.5
bob,a,01907,lynn,ma,200,1.0
cid,b,01907,salem,ma,150,2.0
dan,b,02110,boston,ma,150,
eve,a,02110,boston,ny,300,0.5
fay,b,02110,boston,ma,250,0.7
gus,a,01907,lynn,ma,120,1.1
"""
DCS = [
    "not(t.zip = t'.zip and t.city != t'.city)",
    "not(t.zip = t'.zip and t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
    "not(t.dept = t'.dept and t.salary < t'.salary and t.rate > t'.rate and t.zip != t'.zip)",
    "not(t.salary > t'.salary and t.rate < t'.rate and t.zip <= t'.zip)",
    "not(t.salary > 250)",
]


def run_python(code: str, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line, returned parsed."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture
def emp(tmp_path: Path) -> Path:
    p = tmp_path / "emp.csv"
    p.write_text(EMP)
    return p


# ---------------------------------------------------------------------- imports


def test_help_imports_the_standard_library_only():
    """``import facet, facet.cli`` and ``--help`` (of the CLI and its commands) load none
    of the engine's dependencies: the help comes in a few hundredths of a second."""
    out = run_python(f"""
        import contextlib, io, json, sys
        import facet, facet.cli
        for argv in (["--help"], ["detect", "--help"], ["explain", "--help"], ["--version"]):
            with contextlib.redirect_stdout(io.StringIO()):
                assert facet.cli.main(argv) == 0, argv
        print(json.dumps([m for m in {ENGINE_MODULES!r} if m in sys.modules]))
    """)
    assert out == []


def test_dc_syntax_error_before_the_engine_imports(emp):
    """A DC that does not parse (``--dc``, or a rules file) is reported, exit 2, before
    numba and pyarrow are imported."""
    rules = emp.parent / "bad_rules.txt"
    rules.write_text("not(t.zip = t'.zip and t.city != )\n")
    out = run_python(f"""
        import contextlib, io, json, sys
        import facet.cli
        codes = []
        for extra in (["--dc", "not(t.a = )"], ["--rules", {str(rules)!r}]):
            for cmd in ("detect", "explain"):
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    codes.append(facet.cli.main([cmd, {str(emp)!r}, *extra]))
                assert "error" in err.getvalue(), err.getvalue()
        print(json.dumps([codes, [m for m in {ENGINE_MODULES!r} if m in sys.modules]]))
    """)
    assert out == [[2, 2, 2, 2], []]


def test_local_detect_imports(emp):
    """A local detect (counts, pairs and blocks, statistics and HyperLogLog included)
    imports neither pyspark nor datasketch nor pyroaring; scipy, where installed, only
    through numba's BLAS probe (``numba/np/linalg.py``), never through facet."""
    out = run_python(f"""
        import importlib.abc, json, sys, traceback

        importers = {{}}

        class Spy(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name in ("scipy", "datasketch") and name not in importers:
                    frames = [f.filename for f in traceback.extract_stack()
                              if not f.filename.startswith("<") and "importlib" not in f.filename
                              and f.filename != __file__]
                    importers[name] = frames[-1] if frames else "?"
                return None

        __file__ = "<spy>"
        sys.meta_path.insert(0, Spy())
        import facet
        for output in ("count", "pairs", "blocks"):
            facet.detect({str(emp)!r}, dcs={DCS!r}, output=output)
        mods = [m for m in ("pyspark", "datasketch", "pyroaring", "scipy") if m in sys.modules]
        print(json.dumps([mods, importers]))
    """)
    mods, importers = out
    assert "pyspark" not in mods and "datasketch" not in mods and "pyroaring" not in mods
    assert "datasketch" not in importers
    if "scipy" in importers:
        assert "numba" in Path(importers["scipy"]).parts, importers["scipy"]


def test_runs_without_the_dev_only_packages(emp):
    """With pandas, scipy and datasketch not importable (an install of the runtime
    dependencies alone), detect gives the same answers."""
    code = f"""
        import importlib.abc, json, sys
        HIDE = {DEV_ONLY!r} if sys.argv[-1] == "hide" else ()

        class Hide(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in HIDE:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, Hide())
        import facet
        res = [facet.detect({str(emp)!r}, dcs={DCS!r}, output=o) for o in ("count", "pairs")]
        counts = [[d.violations, d.rows_involved] for d in res[0].dcs]
        pairs = sorted(tuple(r.values()) for r in res[1].pairs().to_pylist())
        print(json.dumps([counts, pairs, [m for m in HIDE if m in sys.modules]]))
    """

    def run(mode: str) -> list:
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), mode],
                           capture_output=True, text=True, cwd=ROOT, timeout=600)  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1])

    hidden, full = run("hide"), run("keep")
    assert hidden[2] == []
    assert hidden[:2] == full[:2]
    assert sum(c[0] for c in full[0]) > 0  # the table has violations to agree on


# ---------------------------------------------------------------------- warm-up


def test_warmup_loads_what_the_plans_use_and_only_that(emp):
    """After ``warmup(run_kernels(...))`` a detect loads no further kernel (its own
    ``warmup_seconds`` is then 0: JIT time stays out of the DCs' seconds), and kernels no
    plan of the run uses stay unloaded."""
    out = run_python(f"""
        import json
        import facet
        from facet.engine.warmup import loaded, run_kernels, warmup
        from facet.planner.config import DEFAULT

        def overloads():
            import importlib
            out = {{}}
            for name in ("bhsm", "composite", "count", "decompose", "dictionary", "expand",
                         "hashing", "iejoin", "refine", "components", "suspects"):
                mod = importlib.import_module("facet.kernels." + name)
                for attr, fn in vars(mod).items():
                    if hasattr(fn, "overloads") and hasattr(fn, "py_func"):
                        out[name + "." + attr] = len(fn.overloads)
            return out

        report = []
        runs = [([{DCS[0]!r}], "count"), ({DCS!r}, "count"), ({DCS!r}, "pairs"),
                ({DCS!r}, "blocks"), ({DCS!r}, "tuples"), ({DCS!r}, "components"),
                ({DCS!r}, "suspects")]
        for dcs, output in runs:
            warmup(run_kernels(facet.load_dcs(dcs=dcs), DEFAULT, ("count", output)))
            before = overloads()
            res = facet.detect({str(emp)!r}, dcs=dcs, output=output)
            after = overloads()
            report.append([output, sorted(loaded()), res.warmup_seconds,
                           {{k: [before[k], v] for k, v in after.items() if v != before[k]}},
                           [k for k, v in after.items() if v]])
        print(json.dumps(report))
    """)
    fd, *rest = out
    assert [r[0] for r in rest[-3:]] == ["tuples", "components", "suspects"]
    assert "components" in rest[-2][1] and "suspects" in rest[-1][1]
    for output, _, warm, grew, _ in out:
        assert grew == {}, (output, grew)
        assert warm == 0.0, output
    # the FD alone: dictionary codes, its direct count (tests/test_direct_keys.py), and
    # the plan's one equality refinement and keyed count for when that hands it back
    assert fd[1] == ["count-keyed", "dictionary", "key-candidates", "refine"]
    assert not any(k.startswith(("iejoin.", "bhsm.", "decompose.", "hashing.")) for k in fd[4])
    assert "expand" not in rest[0][1]  # counts expand no pairs


def test_typed_parquet_columns_load_no_kernel_after_the_warmup(tmp_path: Path):
    """Integer columns read from Parquet reach the rank kernels as read-only arrays and
    a whole-table equality takes the parallel counting sort: the warm-up loads those
    signatures too, so a detect loads nothing more (each would be JIT time counted in
    the DCs' seconds)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(3)
    n = 3000
    small = rng.integers(0, 50, n)
    pq.write_table(
        pa.table({
            "k": pa.array(rng.integers(0, 40, n)),
            "small": pa.array(small, mask=small % 7 == 0),
            "wide": pa.array(rng.integers(-(10**15), 10**15, n)),
            "v": pa.array(rng.integers(0, 9, n)),
        }),
        tmp_path / "t.parquet",
    )  # fmt: skip
    dcs = [
        "not(t.k = t'.k and t.wide > t'.wide and t.v < t'.v)",
        "not(t.small < t'.small and t.v > t'.v)",
        "not(t.k = t'.v and t.v = t'.k)",
    ]
    out = run_python(f"""
        import json
        import facet
        from facet.engine.warmup import run_kernels, warmup
        from facet.planner.config import Config
        from numba.core.registry import CPUDispatcher
        import facet.kernels.common, facet.kernels.ranks

        def overloads():
            import sys
            return {{m + "." + k: len(v.signatures) for m, mod in list(sys.modules.items())
                     if m.startswith("facet") for k, v in vars(mod).items()
                     if isinstance(v, CPUDispatcher)}}

        cfg = Config(threads=2, radix_rank_rows=0, parallel_work=0)
        dcs = facet.load_dcs(dcs={dcs!r})
        warmup(run_kernels(dcs, cfg, ("count", "pairs")))
        before = overloads()
        for output in ("count", "pairs"):
            facet.detect({str(tmp_path / "t.parquet")!r}, dcs={dcs!r}, output=output,
                         config=cfg, limit=10)
        after = overloads()
        print(json.dumps({{k: [before.get(k, 0), v] for k, v in after.items()
                          if v != before.get(k, 0)}}))
    """)
    assert out == {}


def test_a_detect_types_no_new_argument_class_after_the_warmup(tmp_path: Path):
    """numba types a call's arguments through a ``functools.singledispatch`` whose
    first value of a class costs ~1 ms (its MRO resolved); a numba module loading
    registers a ``typeof`` and clears that cache.  The warm-up types the engine's
    scalar classes after its kernels load, so a DC's seconds (from the end of the
    encoding warm-up on) type no class anew: dictionary-encoded text (an FD, whose
    fused count takes a ``numpy.bool`` flag), a cross-column key, integers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    n = 3000
    pq.write_table(
        pa.table({
            "zip": pa.array([f"z{i}" for i in rng.integers(0, 40, n)]),
            "city": pa.array([f"c{i}" for i in rng.integers(0, 9, n)]),
            "a": pa.array(rng.integers(0, 50, n)),
            "b": pa.array(rng.integers(0, 50, n)),
        }),
        tmp_path / "t.parquet",
        use_dictionary=["zip", "city"],
    )  # fmt: skip
    dcs = ["not(t.zip = t'.zip and t.city != t'.city)", "not(t.a = t'.b and t.b = t'.a)"]
    out = run_python(f"""
        import json
        import facet
        import facet.api as api
        from numba.core.typing import typeof as T

        cache = next(c.cell_contents for c in T.typeof_impl.dispatch.__closure__
                     if type(c.cell_contents).__name__ == "WeakKeyDictionary")
        seen = set()
        warm = api._warm_encoding

        def warmed(*a, **k):  # the DCs' clock starts after this
            got = warm(*a, **k)
            seen.update(cache.keys())
            return got

        api._warm_encoding = warmed
        new = []
        for dc in {dcs!r}:
            seen.clear()
            facet.detect({str(tmp_path / "t.parquet")!r}, dc)
            new += [k.__name__ for k in cache.keys() if k not in seen]
        print(json.dumps({{"new": new}}))
    """)
    assert out == {"new": []}


def test_plan_kernels():
    """Kernels follow the algorithm names of a plan's stages and sink."""

    def plan(text: str, output: str, **config):
        (dc,) = parse_dc(text)
        return make_plan(normalize(dc), Sides(10, 10), None, DEFAULT.but(**config), output)

    fd = "not(t.zip = t'.zip and t.city != t'.city)"
    two = "not(t.zip = t'.zip and t.salary > t'.salary and t.rate < t'.rate)"
    three = "not(t.a < t'.a and t.b < t'.b and t.c < t'.c and t.d != t'.d)"
    assert plan_kernels(plan(fd, "count")) == {"refine", "count-keyed"}
    assert plan_kernels(plan(two, "count")) == {"refine", "count-groups"}
    assert plan_kernels(plan(three, "count")) == {"count-groups", "cdq", "refine"}
    assert plan_kernels(plan(two, "pairs", inequality="iejoin")) == {"refine", "iejoin", "expand"}
    assert plan_kernels(plan(two, "blocks")) == {"refine", "cdq", "expand", "sides-to-lists"}
    for name in ("refine", "iejoin", "count-keyed", "expand"):
        assert name in KERNELS
    # a run: its plans' kernels, text dictionaries, and what statistics may choose
    dcs = [parse_dc(fd)[0], parse_dc(two)[0]]
    assert run_kernels(dcs, DEFAULT, ("count",)) == {
        "dictionary", "refine", "count-keyed", "count-groups", "key-candidates",
    }  # fmt: skip
    # the FD's direct count (tests/test_direct_keys.py) only where it may run
    assert "key-candidates" not in run_kernels(dcs, DEFAULT.but(key_prefilter=False), ("count",))
    assert "key-candidates" not in run_kernels(dcs, DEFAULT, ("pairs",))
    assert {"bhsm", "iejoin", "cdq", "hashing", "expand"} <= run_kernels(dcs, DEFAULT, ("pairs",))
    # plans made, not run (explain): statistics, and pairs counted on the tid sample
    assert run_kernels(dcs, DEFAULT, ("count",), execute=False) == {"dictionary"}
    assert run_kernels(dcs, DEFAULT, ("pairs",), execute=False) == {
        "dictionary", "hashing", "refine", "count-groups",
    }  # fmt: skip


# ---------------------------------------------------------------------- HyperLogLog


@pytest.mark.parametrize("p", list(HLL_PRECISIONS))
def test_hll_estimate_equals_datasketch(p):
    """facet's estimate is datasketch's ``HyperLogLogPlusPlus.count()`` on the same
    registers -- empty, linear counting, bias-corrected and raw ranges alike -- and its
    bias tables are datasketch's, number for number."""
    import datasketch
    from datasketch.hyperloglog_const import _bias, _raw_estimate, _thresholds

    from facet.kernels.hashing import hash_words, hll_registers
    from facet.planner import hll_bias
    from facet.planner.statistics import _bias_table

    raw, bias = _bias_table(p)
    assert np.array_equal(raw, _raw_estimate[p - 4]) and raw.dtype == _raw_estimate[p - 4].dtype
    assert np.array_equal(bias, _bias[p - 4])
    assert hll_bias.THRESHOLDS[p] == _thresholds[p - 4]
    m = 1 << p
    rng = np.random.default_rng(p)
    sizes = sorted({0, 1, 2, *np.geomspace(3, 40 * m, 40).astype(int).tolist()})
    for n in sizes:
        words = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64)
        reg = hll_registers(hash_words(words), p)
        want = float(datasketch.HyperLogLogPlusPlus(p=p, reg=np.asarray(reg, np.int8)).count())
        assert hll_cardinality(reg, p) == want, (p, n)
    with pytest.raises(ValueError):
        hll_cardinality(np.zeros(m, np.int8), p + 1)


def test_text_columns_compared_with_each_other_warm_the_parallel_dictionary():
    """Columns compared with each other encode as one array of all their rows: from
    ``parallel_text_rows`` of them the parallel text dictionary runs, so it is warmed."""
    import pyarrow as pa

    from facet.loading import load

    n = DEFAULT.parallel_text_rows // 2 + 1
    src = load(pa.table({"o": pa.array(["a"] * n), "d": pa.array(["b"] * n)}))
    cross = parse_dc("not(t.o = t'.d and t.d = t'.o)")
    same = parse_dc("not(t.o = t'.o and t.d != t'.d)")
    config = DEFAULT.but(threads=2)
    assert "dictionary-parallel" in run_kernels(cross, config, ("count",), source=src)
    assert "dictionary-parallel" not in run_kernels(same, config, ("count",), source=src)


def test_facet_turns_off_mimallocs_eager_arena_commit_unless_the_user_set_it():
    """``import facet`` sets ``MIMALLOC_ARENA_EAGER_COMMIT=0`` before pyarrow loads
    (its arenas committed up front stalled Arrow's allocations: docs/architecture.md
    ``memory.py``), keeps a value the user set, and the CLI's runs see it."""
    import os

    code = """
        import json, os, sys
        import facet
        print(json.dumps({"value": os.environ.get("MIMALLOC_ARENA_EAGER_COMMIT"),
                          "pyarrow": "pyarrow" in sys.modules}))
    """
    env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_ARENA_EAGER_COMMIT"}
    assert run_python(code, env) == {"value": "0", "pyarrow": False}
    assert run_python(code, {**env, "MIMALLOC_ARENA_EAGER_COMMIT": "1"})["value"] == "1"
