#!/usr/bin/env python3
"""Modelled (emulator instruction-cost estimate, not a measurement) attention forward TFLOP/s at B=1, H=16,
S=4096, D=128, non-causal: one workgroup (one query block of one head, all 4096 keys) is emulated and the full
grid extrapolated with the emulator's own kernel formula (emu/src/cost_model.cpp): max(slowest workgroup, sum of
wave clocks / SIMDs), every wave as long as the emulated one (non-causal: all workgroups do the same work), since
emulating the whole grid takes too long on a CPU (docs/performance.md, "Attention").

  scripts/attention_model_bench.py build/tools/isatune
  scripts/attention_model_bench.py build/tools/isatune gfx942:waves=8,block_n=32,pingpong=1   (chosen points)
  scripts/attention_model_bench.py build/tools/isatune gfx942:waves=4,block_n=64,mfma=32x32x8,lds_dma=kv  # these points
"""
import json, math, subprocess, sys

isatune = sys.argv[1] if len(sys.argv) > 1 else "build/tools/isatune"
B, H, S, D = 1, 16, 4096, 128
CUS = {"gfx942": 304, "gfx950": 256}
points = [("gfx942", "waves=4,block_n=32,mfma=32x32x8,p_round=rtne"),
          ("gfx942", "waves=4,block_n=64,mfma=32x32x8,p_round=rtne"),
          ("gfx942", "waves=4,block_n=64,mfma=32x32x8,p_round=rtz"),
          ("gfx942", "waves=8,block_n=64,mfma=32x32x8,p_round=rtz"),
          ("gfx942", "waves=8,block_n=64,mfma=16x16x16,p_round=rtne"),
          ("gfx950", "waves=4,block_n=64,mfma=32x32x16,p_round=rtne"),
          ("gfx950", "waves=8,block_n=64,mfma=32x32x16,p_round=rtne"),
          ("gfx950", "waves=8,block_n=64,mfma=16x16x32,p_round=rtne")]
if len(sys.argv) > 2:  # TARGET:PARAMS ... instead of the list above
    points = [tuple(a.split(":", 1)) for a in sys.argv[2:]]
print("| target | params | one workgroup (emulated ms) | VGPRs | LDS B | waves/SIMD | workgroups | modelled ms "
      "| modelled TFLOP/s |")
print("|---|---|---|---|---|---|---|---|---|")
for isa, params in points:
    waves = int(params.split("waves=")[1].split(",")[0])
    bm = int(params.split("mfma=")[1].split("x")[0]) * waves
    out = subprocess.run([isatune, "run", "attention", "--target", isa, "--sig", f"dtype=bf16,head_dim={D}",
                          "--param", params, "--problem", f"B=1,Hq=1,Sq={bm},Sk={S}", "--json", "--threads", "1"],
                         capture_output=True, text=True, check=True).stdout
    j = json.loads(out)
    assert j["status"] == "ok", j
    t_wg = j["timing"]["median_ms"]
    est = j["estimate"]
    wgs = B * H * math.ceil(S / bm)
    t = max(t_wg, wgs * waves * t_wg / (CUS[isa] * 4))
    flops = 4.0 * B * H * S * S * D
    print(f"| {isa} | {params} | {t_wg:.4f} | {est['vgprs']} | {est['lds_bytes']} | {est['waves_per_simd']} | {wgs} | "
          f"{t:.4f} | {flops / (t * 1e-3) / 1e12:.0f} |")
