#!/usr/bin/env python3
"""Gathers the steps of scripts/device-check.sh into its one JSON file: every step (ok / failed / skipped, the
reason, seconds), the correctness checks' counts, the tuned winners, and the ratios: GEMM ours/cuBLAS (in
throughput: cuBLAS time / our time, > 1 is faster than cuBLAS) and the row kernels' fraction of copy bandwidth
(copy time / our time for the same bytes read and written). Standard library only."""
import argparse
import datetime
import json


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def parse(problem):
    return {k: int(v) for k, v in (kv.split("=") for kv in problem.split(","))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--device", required=True)
    ap.add_argument("--started", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    steps = []
    for line in open(a.steps, errors="replace"):
        if line.strip():
            try:
                steps.append(json.loads(line))
            except ValueError:
                steps.append({"name": "(unreadable step)", "status": "failed", "reason": line[:300], "seconds": 0})
    outputs = {s["name"]: load_json(s["out"]) if s.get("out") else None for s in steps}

    report = {
        "format": "isatune-device-check/1",
        "mode": a.mode,
        "device_spec": a.device,
        "started_at": datetime.datetime.fromtimestamp(a.started, datetime.timezone.utc).isoformat(),
        "seconds": round(datetime.datetime.now().timestamp() - a.started, 1),
        "goals": {"gemm_4096_ratio": 1.05, "gemm_8192_ratio": 1.00, "rows_fraction_of_copy": 0.92},
    }
    devices = outputs.get("devices") or {}
    report["devices"] = devices.get("devices", [])

    checks = [s for s in steps if s.get("kind") == "check"]
    by = {}
    for s in checks:
        run = outputs.get(s["name"])
        if isinstance(run, dict) and run.get("status") not in (None, "ok"):  # isatune's own words, not JSON lines
            s["reason"] = "%s: %s" % (run["status"], run.get("message", ""))
        key = s["generator"] + "/" + s["target"]
        c = by.setdefault(key, {"ok": 0, "failed": 0, "skipped": 0, "first_failure": None})
        c[s["status"]] += 1
        if s["status"] != "ok" and not c["first_failure"]:
            c["first_failure"] = s["problem"] + " " + s["signature"] + ": " + s["reason"]
        if isinstance(run, dict):
            for k in ("max_rel_error", "tolerance", "status"):
                if k in run:
                    s["result_" + k] = run[k]
    report["correctness"] = by

    bench = outputs.get("bench/torch") or {}
    cublas = {g["problem"]: g for g in bench.get("gemm", [])}
    copies = {c["problem"]: c for c in bench.get("copy", [])}
    report["reference"] = {k: bench.get(k) for k in ("torch", "cuda", "device", "l2_bytes", "flush_bytes")}
    report["gemm"], report["rows"] = [], []
    for s in steps:
        if s.get("kind") != "tune":
            continue
        tune = outputs.get(s["name"]) or {}
        best = tune.get("best") if isinstance(tune, dict) else None
        entry = {"generator": s["generator"], "problem": s["problem"], "signature": s["signature"],
                 "budget": s["budget"], "step": s["status"], "reason": s["reason"]}
        if isinstance(tune, dict):
            entry.update(evaluations=tune.get("evaluations"), by_status=tune.get("by_status"),
                         time_kind=(tune.get("device") or {}).get("kind"))
        if best:
            entry.update(ours_ms=best.get("time_ms"), params=best.get("params"))
        elif s["status"] == "ok":
            entry["reason"] = "no variant ran ok"
        ours = entry.get("ours_ms")
        if s["generator"] == "gemm":
            d = parse(s["problem"])
            flops = 2.0 * d["M"] * d["N"] * d["K"]
            ref = cublas.get(s["problem"])
            if ours:
                entry["ours_tflops"] = flops / (ours * 1e-3) / 1e12
            if ref:
                entry.update(cublas_ms=ref["median_ms"], cublas_tflops=ref["tflops"])
            if ours and ref and entry.get("time_kind") == "real":
                entry["ratio_ours_over_cublas"] = ref["median_ms"] / ours
            else:
                entry["ratio_ours_over_cublas"] = None
            report["gemm"].append(entry)
        else:
            ref = copies.get(s["problem"])
            if ref:
                entry.update(copy_ms=ref["median_ms"], copy_gb_per_s=ref["gb_per_s"])
                if ours:
                    entry["ours_gb_per_s"] = ref["bytes_moved"] / (ours * 1e-3) / 1e9
            if ours and ref and entry.get("time_kind") == "real":
                entry["fraction_of_copy_bandwidth"] = ref["median_ms"] / ours
            else:
                entry["fraction_of_copy_bandwidth"] = None
            report["rows"].append(entry)

    for s in steps:
        path = s.pop("out", None)
        if s["name"].startswith("env/") and path:  # what the machine said about itself
            try:
                s["output"] = open(path, errors="replace").read()[:2000]
            except OSError:
                pass
    report["steps"] = steps
    report["summary"] = {st: sum(1 for s in steps if s["status"] == st) for st in ("ok", "failed", "skipped")}
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print("device-check: steps ok %(ok)d, failed %(failed)d, skipped %(skipped)d" % report["summary"])
    for g in report["gemm"]:
        print("  gemm %s: ours %s ms, cuBLAS %s ms, ratio %s" % (g["problem"], g.get("ours_ms"), g.get("cublas_ms"),
                                                                g.get("ratio_ours_over_cublas")))
    for r in report["rows"]:
        print("  %s %s: ours %s ms, copy %s ms, fraction %s" % (r["generator"], r["problem"], r.get("ours_ms"),
                                                               r.get("copy_ms"), r.get("fraction_of_copy_bandwidth")))


if __name__ == "__main__":
    main()
