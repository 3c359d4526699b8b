#!/usr/bin/python3
"""Where our bf16 GEMMs stand against AMD's (issue 14 item 5): for the shapes of AITER tuned-GEMM rows, tune our
`gemm` generator on the CDNA emulator (a small budget) and print the model's predicted time of the best variant
against the times AMD measured for AITER's asm kernels and for hipBLASLt at the same shapes.

Ours is a MODEL PREDICTION (the emulator's timing model, docs/emulator.md "Timing model"), not a measurement; the
AITER and hipBLASLt times are AMD's measurements from the CSVs (MI355X, gfx950, 256 CUs).

Inputs:
  --asm-csv   rows with libtype asm, e.g. tests/fixtures/aiter/bf16_tuned_gemm_gfx950_asm.csv (from
              aiter/configs/bf16_tuned_gemm.csv at e4048607a5, columns gfx,cu_num,M,N,K,...,libtype,...,us)
  --hipblaslt-csv rows with libtype hipblaslt, e.g. aiter/configs/tuned_gemm.csv at f29d14bcaa (2025-08-27, the
              last commit whose tuned CSVs still had hipBLASLt rows; columns M,N,K,...,cu_num,libtype,solidx,
              soltimes,kernelName; cu_num 256 = gfx950). At AITER's HEAD no tuned CSV keeps a hipblaslt row.
Example:
  git --git-dir=/work/.mirror/ROCm+aiter/repo show f29d14bcaa:aiter/configs/tuned_gemm.csv > /tmp/tuned_gemm.csv
  scripts/aiter_gemm_compare.py --asm-csv tests/fixtures/aiter/bf16_tuned_gemm_gfx950_asm.csv \\
      --hipblaslt-csv /tmp/tuned_gemm.csv --max-gflop 0.6 --budget 8
"""
import argparse
import csv
import json
import subprocess
import sys
import time


def rows_of(path, libtype):
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("libtype") != libtype:
                continue
            gfx = r.get("gfx") or ("gfx950" if r.get("cu_num") == "256" else "gfx942" if r.get("cu_num") == "304" else "")
            us = float(r["us"] if "us" in r else r["soltimes"])
            out = "bf16" if "bfloat16" in r["outdtype"] else "f32" if "float32" in r["outdtype"] else None
            yield {"gfx": gfx, "M": int(r["M"]), "N": int(r["N"]), "K": int(r["K"]), "cd": out, "us": us,
                   "kernel": r.get("kernelName", ""), "libtype": libtype}


def tune(isatune, gfx, m, n, k, cd, budget, jobs, timeout):
    cmd = [isatune, "tune", "gemm", "--target", gfx, "--sig", f"a=bf16,b=bf16,cd={cd},layout=TN",
           "--problem", f"M={m},N={n},K={k}", "--device", f"emu:{gfx}", "--budget", str(budget), "--seed", "1",
           "-j", str(jobs), "--timeout", str(timeout), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    j = json.loads(p.stdout)
    if not j.get("best"):
        raise RuntimeError(f"{' '.join(cmd)}: no variant passed ({j.get('by_status')})")
    b = j["best"]
    return b["time_ms"] * 1e3, b["params"], j["evaluations"]


def short_error(e):
    if "no variant passed" in e:
        st = json.loads(e[e.index("({") + 1:e.rindex("})") + 1].replace("'", '"'))
        return "no variant passed: " + ", ".join(f"{v} {k}" for k, v in st.items() if v)
    return e[:60]


def print_table(results):
    print("| M | N | K | out | ours, predicted (us) | our variant | AITER asm, measured (us) | hipBLASLt, measured (us) "
          "| ours / measured |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        p = r.get("params", {})
        var = ",".join(f"{k}={v}" for k, v in p.items() if k in ("tile_m", "tile_n", "depth", "split_k", "mfma")) if p else short_error(r.get("error", ""))
        asm = f"{r['us']:.2f} ({r['kernel'].replace('_ZN5aiter', '').rstrip('E').lstrip('0123456789')})" \
            if r["libtype"] == "asm" else "-"
        hip = f"{r['us']:.2f}" if r["libtype"] == "hipblaslt" else "-"
        ours = f"{r['ours_us']:.2f}" if "ours_us" in r else "failed"
        ratio = f"{r['ours_us'] / r['us']:.2f}" if "ours_us" in r else "-"
        print(f"| {r['M']} | {r['N']} | {r['K']} | {r['cd']} | {ours} | {var} | {asm} | {hip} | {ratio} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--isatune", default="build/tools/isatune")
    ap.add_argument("--asm-csv")
    ap.add_argument("--hipblaslt-csv")
    ap.add_argument("--gfx", default="gfx950")
    ap.add_argument("--max-gflop", type=float, default=0.6, help="rows with more work are left out (CPU time)")
    ap.add_argument("--max-rows", type=int, default=0, help="per CSV, 0: all that fit")
    ap.add_argument("--budget", type=int, default=8, help="tuner evaluations per shape")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=10, help="tuner's per-candidate timeout, seconds")
    ap.add_argument("--shapes", help="only these M,N,K triples, e.g. 64x256x5120,128x100x5120")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--from-json", help="print the table of an earlier --json run instead of tuning")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            print_table(json.load(f)["rows"])
        return

    todo = []
    for path, lib in ((a.asm_csv, "asm"), (a.hipblaslt_csv, "hipblaslt")):
        if not path:
            continue
        picked = 0
        for r in rows_of(path, lib):
            gflop = 2.0 * r["M"] * r["N"] * r["K"] / 1e9
            if r["gfx"] != a.gfx or r["cd"] is None or gflop > a.max_gflop:
                continue
            if a.shapes and f"{r['M']}x{r['N']}x{r['K']}" not in a.shapes.split(","):
                continue
            if a.max_rows and picked >= a.max_rows:
                break
            picked += 1
            todo.append(r)
    results = []
    start = time.time()
    for r in todo:
        t0 = time.time()
        try:
            ours, params, evals = tune(a.isatune, r["gfx"], r["M"], r["N"], r["K"], r["cd"], a.budget, a.j, a.timeout)
            r.update(ours_us=ours, params=params, evaluations=evals)
        except RuntimeError as e:
            r.update(error=str(e))
        r["cpu_s"] = time.time() - t0
        results.append(r)
        print(f"  {r['libtype']} M={r['M']} N={r['N']} K={r['K']}: {r.get('ours_us', float('nan')):.2f} us "
              f"predicted ({r['cpu_s']:.0f} s)", file=sys.stderr)
    if a.json:
        print(json.dumps({"note": "ours: the emulator's timing model (prediction, not a measurement); asm_us / "
                          "hipblaslt_us: AMD's measurements (AITER CSVs)", "rows": results,
                          "wall_s": time.time() - start}, indent=2))
        return
    print_table(results)
    print(f"\n{len(results)} shapes, {time.time() - start:.0f} s wall", file=sys.stderr)


if __name__ == "__main__":
    main()
