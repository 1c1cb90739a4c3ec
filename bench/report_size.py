"""The HTML report of a large table: file size, time to write, and its load in chromium.

    python bench/report_size.py [--rows 1000000] [--rules data/tax/dc_rules_relaxed.txt]

Input: the Tax-like CSV of ``data/taxgen.py`` (``bench/work/``, as ``bench/fast_shapes.py``
makes it). One ``facet report`` process under ``bench/common.py``'s watchdog (wall time,
peak RSS), then the file opened in headless chromium (Selenium) until its script has
rendered the first page. Target (issue 12): under 20 MB at 1M rows, and it opens.

Records append to ``bench/results/report_size.jsonl``; ``bench/results/report_size.md`` is
rewritten from the latest record.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

REPO = common.REPO
RESULTS = REPO / "bench" / "results"
JSONL = RESULTS / "report_size.jsonl"
LIMIT = 20 * 10**6


def browser_load(path: Path) -> float:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    opts = Options()
    opts.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    try:
        start = time.perf_counter()
        d.get(path.as_uri())
        WebDriverWait(d, 300).until(
            lambda x: x.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
        )
        return time.perf_counter() - start
    finally:
        d.quit()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rules", default="data/tax/dc_rules_relaxed.txt")
    ap.add_argument("--timeout", type=float, default=3600)
    args = ap.parse_args(argv)
    work = REPO / "bench" / "work"
    data = common.tax_table(args.rows, 0, 0.001, work, args.timeout)
    out = work / f"report_{args.rows}.html"
    exe = common.facet_exe()
    cmd = [exe, "report", str(data), "--rules", str(REPO / args.rules), "--out", str(out)]
    cmd += ["-q", "--exit-zero"]
    r = common.run_process(cmd, timeout=args.timeout, cwd=REPO)
    rec = {
        "run_id": uuid.uuid4().hex[:12], **common.machine_info(), "command": common.command_line(),
        "rows": args.rows, "rules": args.rules, "status": r.status, "wall_seconds": r.wall_seconds,
        "peak_rss_bytes": r.peak_rss_bytes, "stdout": r.stdout.strip()[-500:],
    }  # fmt: skip
    if r.status == "ok":
        rec["bytes"] = out.stat().st_size
        rec["load_seconds"] = browser_load(out)
    else:
        rec["stderr_tail"] = r.stderr[-2000:]
    common.append_jsonl(JSONL, rec)
    size = rec.get("bytes")
    text = f"""# The HTML report of a {args.rows:,}-row Tax table

Written by `bench/report_size.py`. Command:

    {rec["command"]}

Machine: {rec["cpu_model"]}, nproc {rec["nproc"]}, {rec["mem_total_gib"]} GiB; Python
{rec["python"]}; git {str(rec["git_commit"])[:7]}{" (dirty)" if rec["git_dirty"] else ""};
{rec["date"]}.

`facet report` on `{data.name}` with `{args.rules}`: {r.status};
{rec["stdout"] or "-"}

| file size | under 20 MB | facet report wall | peak RSS | chromium load (first page rendered) |
|---|---|---|---|---|
| {common.fmt_bytes(size)} | {"yes" if size is not None and size < LIMIT else "no"} | {r.wall_seconds:.1f} s | {common.fmt_bytes(r.peak_rss_bytes)} | {common.fmt_seconds(rec.get("load_seconds"))} s |
"""
    (RESULTS / "report_size.md").write_text(text)
    print(text)
    return 0 if size is not None and size < LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
