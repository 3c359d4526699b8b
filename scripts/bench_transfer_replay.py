#!/usr/bin/env python3
"""Transfer on the published spaces of shared/datasets: one space recorded on two devices (the convolution on A100
and MI250X). For each seed, `isatune tune --replay TARGET --budget B` cold, seeded with the other device's 5 best
(`--transfer-from OTHER --no-warm-start`), and seeded and warm-started (bayes: `--transfer-from OTHER`); the figure
is the number of evaluations until the best-so-far is within 5% of the space's optimum (runs that never get
there: B + 1).

usage: bench_transfer_replay.py [--isatune build/tools/isatune] [--seeds 12] [--budget 300] [--strategy bayes]
                                TARGET.json.gz OTHER.json.gz
"""
import argparse
import gzip
import json
import statistics
import subprocess
import sys


def optimum(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return min(v["time"] for v in d["cache"].values() if isinstance(v.get("time"), (int, float)) and v["time"] < 1e19)


def run(a, seed, extra):
    cmd = [a.isatune, "tune", "--replay", a.target, "--strategy", a.strategy, "--budget", str(a.budget), "--seed",
           str(seed), "--json", "--history"] + extra
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {out.stderr[-1000:]}")
    return json.loads(out.stdout)["history"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--isatune", default="build/tools/isatune")
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--strategy", default="bayes")
    ap.add_argument("target")
    ap.add_argument("other")
    a = ap.parse_args()
    best = optimum(a.target)
    modes = {"cold": [], "seeded": ["--transfer-from", a.other, "--no-warm-start"],
             "seeded+warm": ["--transfer-from", a.other]}
    res = {m: [] for m in modes}
    for seed in range(1, a.seeds + 1):
        for m, extra in modes.items():
            h = run(a, seed, extra)
            n = next((i + 1 for i, e in enumerate(h) if e["status"] == "ok" and e["time_ms"] <= best * 1.05),
                     a.budget + 1)
            res[m].append(n)
    for m, v in res.items():
        print(f"{m:12} median {statistics.median(v):6.1f} mean {statistics.mean(v):6.1f} never {v.count(a.budget + 1):2d}"
              f" of {len(v)}: {' '.join(map(str, v))}")
    for m in ("seeded", "seeded+warm"):
        print(f"{m} sooner than cold in {sum(x < y for x, y in zip(res[m], res['cold']))} of {a.seeds}, later in "
              f"{sum(x > y for x, y in zip(res[m], res['cold']))}")


if __name__ == "__main__":
    main()
