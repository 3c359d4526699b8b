#!/usr/bin/env python3
"""Transfer across problems on the emulator: `isatune tune gemm --problems FILE` over LLM-like GEMM shapes.

Each seed tunes the shapes twice with the same strategy, budget and seed: shared (the default: one by one, nearest
first, each seeded from the nearest tuned shape's 5 best, bayes warm-started from its measurements) and cold
(`--transfer-top 0`: every shape tuned independently). The reference for a shape is the fastest time any run of it
found (over both modes and all seeds); the figure is the number of evaluations until a run's best-so-far is within
5% of that, a run that never gets there counted as budget + 1. The first shape is tuned cold in both modes, so only the
later shapes are compared (bayes weighs candidates by their predicted charged cost, a wall-clock time, so even the
first shape's two runs need not repeat each other exactly). Times are the emulator's instruction-cost
estimates (gfx942), not measurements.

The shapes are those of one decoder layer of Llama-2-7B (hidden 4096, MLP 11008; QKV projection N = 3 x 4096,
output projection, MLP gate/up, MLP down) for a batch of 2048 and of 512 tokens (prefill), every dimension divided by --scale (default 32) so
that a variant emulates in well under a second on a CPU; the ratios of the shapes are kept.

usage: bench_transfer_gemm.py [--isatune build/tools/isatune] [--seeds 3] [--budget 40] [--scale 32]
                              [--tokens 2048 512] [--strategy bayes] [--json OUT.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

LAYER = [  # (name, N, K) of one Llama-2-7B decoder layer, M = tokens
    ("qkv", 3 * 4096, 4096),
    ("o", 4096, 4096),
    ("gate_up", 11008, 4096),
    ("down", 4096, 11008),
]


def shapes(scale, tokens):
    return [(f"{name}/{t}", max(1, t // scale), max(1, n // scale), max(1, k // scale))
            for t in tokens for name, n, k in LAYER]


def run(isatune, problems_file, strategy, budget, seed, shared):
    cmd = [isatune, "tune", "gemm", "--target", "gfx942", "--device", "emu", "--sig", "a=bf16,b=bf16,cd=f32,layout=NN",
           "--problems", problems_file, "--strategy", strategy, "--budget", str(budget), "--seed", str(seed),
           "--json", "--history", "-j", "2"]
    if not shared:
        cmd += ["--transfer-top", "0"]
    t0 = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    j = json.loads(out.stdout)
    return j, time.time() - t0


def to_within(history, best, budget, fraction=0.05):
    for i, e in enumerate(history):
        if e["status"] == "ok" and e["time_ms"] <= best * (1 + fraction):
            return i + 1
    return budget + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--isatune", default="build/tools/isatune")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--scale", type=int, default=32)
    ap.add_argument("--tokens", type=int, nargs="+", default=[2048, 512])
    ap.add_argument("--strategy", default="bayes")
    ap.add_argument("--json", help="write the per-run figures here")
    a = ap.parse_args()
    sh = shapes(a.scale, a.tokens)
    tmp = tempfile.mkdtemp()
    pf = os.path.join(tmp, "shapes.txt")
    with open(pf, "w") as f:
        for name, m, n, k in sh:
            f.write(f"# {name}\nM={m},N={n},K={k}\n")
    key = lambda p: (p["M"], p["N"], p["K"])  # noqa: E731
    runs = {"shared": [], "cold": []}
    wall = 0.0
    for seed in range(1, a.seeds + 1):
        for mode in ("shared", "cold"):
            j, w = run(a.isatune, pf, a.strategy, a.budget, seed, mode == "shared")
            wall += w
            runs[mode].append(j)
            print(f"seed {seed} {mode}: {w:.0f} s", file=sys.stderr)
    best = {}
    for mode in runs:
        for j in runs[mode]:
            for r in j["runs"]:
                for e in r["history"]:
                    if e["status"] == "ok":
                        k = key(r["problems"][0])
                        best[k] = min(best.get(k, float("inf")), e["time_ms"])
    first = None
    table = []
    for name, m, n, k in sh:
        row = {"shape": name, "M": m, "N": n, "K": k, "best_ms": best.get((m, n, k))}
        for mode in runs:
            per = []
            for j in runs[mode]:
                r = next(r for r in j["runs"] if key(r["problems"][0]) == (m, n, k))
                if r["order"] == 1:
                    first = name
                per.append(to_within(r["history"], row["best_ms"], a.budget))
                if mode == "shared" and "transfer" in r:
                    row["seeded_from"] = r["transfer"]["from_problem"]
            row[mode] = per
        table.append(row)
    later = [r for r in table if r["shape"] != first]
    summary = {
        "shared_mean": statistics.mean(x for r in later for x in r["shared"]),
        "cold_mean": statistics.mean(x for r in later for x in r["cold"]),
        "shared_median": statistics.median(x for r in later for x in r["shared"]),
        "cold_median": statistics.median(x for r in later for x in r["cold"]),
        "sooner": sum(s < c for r in later for s, c in zip(r["shared"], r["cold"])),
        "later": sum(s > c for r in later for s, c in zip(r["shared"], r["cold"])),
        "pairs": sum(len(r["shared"]) for r in later),
        "wall_s": wall,
    }
    print(f"{'shape':12} {'M,N,K':>14} {'best ms (emulated)':>19}  shared (seeded+warm)  cold")
    for r in table:
        print(f"{r['shape']:12} {r['M']:>4},{r['N']:>4},{r['K']:>4} {r['best_ms']:>19.5g}  "
              f"{' '.join(map(str, r['shared'])):>20}  {' '.join(map(str, r['cold']))}"
              + ("  (first: cold in both)" if r["shape"] == first else ""))
    print(f"later shapes: mean {summary['shared_mean']:.1f} vs {summary['cold_mean']:.1f} evaluations to within 5% "
          f"(median {summary['shared_median']} vs {summary['cold_median']}); shared sooner in {summary['sooner']}, "
          f"later in {summary['later']} of {summary['pairs']}; wall {wall:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "shapes": table, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
