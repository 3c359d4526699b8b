#!/usr/bin/env python3
"""Modelled (the CDNA emulator's timing model, never a measurement) attention forward at B=1, Hq=Hkv=16,
Sq=Sk=4096, D=128, bf16, BSHD, LSE written, non-causal and causal: AITER's fmha_v3_fwd asm kernels (the fixtures
in tests/fixtures/aiter, every rounding variant present) and points of our `attention` generator through the same
path, `isatune model attention` (one CU's workgroups simulated, `--cu-subset 1`, HBM/L2 analytic for the chip).
Prints one markdown table (docs/performance.md "Attention forward against AITER's asm kernel, same model").

  scripts/attention_vs_aiter_model.py [build/tools/isatune] [gfx942[,gfx950]] [--cu-subset N]
"""
import json, subprocess, sys, time

args = [a for a in sys.argv[1:]]
subset = "1"
if "--cu-subset" in args:
    i = args.index("--cu-subset")
    subset = args[i + 1]
    del args[i:i + 2]
isatune = args[0] if args else "build/tools/isatune"
targets = (args[1] if len(args) > 1 else "gfx942").split(",")
PROBLEM = "B=1,Hq=16,Hkv=16,Sq=4096,Sk=4096"
POINTS = {
    "gfx942": ["waves=4,block_n=32,mfma=32x32x8,p_round=rtne",
               "waves=4,block_n=64,mfma=32x32x8,p_round=rtne",
               "waves=4,block_n=64,mfma=32x32x8,p_round=rtz",
               "waves=8,block_n=32,mfma=32x32x8,p_round=rtne",
               "waves=8,block_n=64,mfma=32x32x8,p_round=rtz",
               "waves=8,block_n=64,mfma=32x32x8,p_round=rtz,mfma_prio=1",
               "waves=8,block_n=64,mfma=16x16x16,p_round=rtne",
               "waves=4,block_n=64,mfma=32x32x8,p_round=rtne,lds_dma=kv",
               "waves=8,block_n=32,mfma=32x32x8,p_round=rtz,pingpong=1",
               "waves=8,block_n=32,mfma=32x32x8,p_round=rtz,pingpong=1,mfma_prio=1"],
    "gfx950": ["waves=4,block_n=64,mfma=32x32x16,p_round=rtne",
               "waves=8,block_n=64,mfma=32x32x16,p_round=rtz",
               "waves=8,block_n=64,mfma=16x16x32,p_round=rtne",
               "waves=4,block_n=64,mfma=32x32x16,p_round=rtne,lds_dma=kv",
               "waves=8,block_n=64,mfma=32x32x16,p_round=rtne,pingpong=1"],
}
# AITER's own measurement, op_tests/cpp/mha/README.md (github.com/ROCm/aiter at 0403bcdfd0), nearest row:
# batch 1, q_nheads 32, kv_nheads 8 (GQA, not our 16/16), seqlen 4096, hdim 128: FWD TFLOP/s.
PUBLISHED = {("gfx942", "none"): 527.73, ("gfx942", "causal"): 467.805,
             ("gfx950", "none"): 1177.11, ("gfx950", "causal"): 949.325}
CHIP = {"gfx942": "MI300X", "gfx950": "MI355X"}

print("| target | mask | kernel | modelled ms | modelled TFLOP/s | ours / AITER | workgroups (simulated) | limiter "
      "| host s |")
print("|---|---|---|---|---|---|---|---|---|")
for isa in targets:
    for mask in ("none", "causal"):
        cmd = [isatune, "model", "attention", "--target", isa, "--sig", f"mask={mask}", "--problem", PROBLEM,
               "--cu-subset", subset, "--co-dir", "tests/fixtures/aiter", "--threads", "2", "--json"]
        for p in POINTS[isa]:
            cmd += ["--point", p]
        t0 = time.time()
        j = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        wall = time.time() - t0
        aiter = min(r["modelled_ms"] for r in j["rows"] if r["source"] == "aiter")
        for r in j["rows"]:
            assert r["status"] == "ok", r
            name = r["kernel"] if r["source"] == "aiter" else "ours " + r["params"]
            ratio = "-" if r["source"] == "aiter" else f"{aiter / r['modelled_ms']:.2f}"
            print(f"| {isa} | {mask} | {name} | {r['modelled_ms']:.4f} | {r['modelled_tflops']:.0f} | {ratio} | "
                  f"{r['workgroups']} ({r['simulated_workgroups']}) | {r['limiter']} | {r['host_seconds']:.1f} |")
        print(f"| {isa} | {mask} | AITER published, {CHIP[isa]}, b=1 h=32/8 s=4096 (README) | - | "
              f"{PUBLISHED[(isa, mask)]:g} | - | - | measured | - |")
        print(f"<!-- {isa} {mask}: {wall:.0f} s wall, cu_subset {subset} -->", file=sys.stderr)
