#!/usr/bin/env python3
"""The references of scripts/device-check.sh, timed with PyTorch on the GPU: cuBLAS GEMMs (torch.matmul, bf16,
the same shapes the tuner tuned) and device-to-device copies (torch clone of the bytes a row kernel reads and
writes). CUDA events, the median of repetitions with the L2 flushed between them as isatune's timing does (a
fill of a buffer of max(512 MiB, 2 x L2)). Prints one JSON object."""
import argparse
import json
import statistics


def parse(problem):
    return {k: int(v) for k, v in (kv.split("=") for kv in problem.split(","))}


def timed(torch, fn, flush, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush.fill_(i & 0xFF)
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(start, end)]
    return {"median_ms": statistics.median(times), "min_ms": min(times), "reps": reps}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemm", action="append", default=[], help="M=..,N=..,K=..")
    ap.add_argument("--rows", action="append", default=[], help="rows=..,N=..")
    a = ap.parse_args()
    import torch

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0)
    flush = torch.empty(max(512 << 20, 2 * l2), dtype=torch.uint8, device="cuda")
    out = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
           "l2_bytes": l2, "flush_bytes": flush.numel(), "gemm": [], "copy": []}
    # cuBLAS as torch uses it by default (its fastest settings): the bar to beat.
    out["allow_bf16_reduced_precision_reduction"] = torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction
    for p in a.gemm:
        s = parse(p)
        m, n, k = s["M"], s["N"], s["K"]
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        t = timed(torch, lambda: torch.matmul(x, w), flush)
        t.update(problem=p, tflops=2.0 * m * n * k / (t["median_ms"] * 1e-3) / 1e12)
        out["gemm"].append(t)
        del x, w
    for p in a.rows:
        s = parse(p)
        x = torch.randn(s["rows"], s["N"], device="cuda", dtype=torch.bfloat16)
        t = timed(torch, lambda: x.clone(), flush)
        moved = 2 * x.numel() * x.element_size()  # read and written
        t.update(problem=p, dtype="bf16", bytes_moved=moved, gb_per_s=moved / (t["median_ms"] * 1e-3) / 1e9)
        out["copy"].append(t)
        del x
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
