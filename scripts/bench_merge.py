#!/usr/bin/env python3
"""Merge throughput of `isatune db merge` (docs/performance.md, "Distributed tuning"): writes SHARDS shard
databases of ROWS measurements each (as a tuning task writes them: one run with its shard I/N, 1000 variants
over ROWS/1000 problems, 100 code objects of 4 KiB with their SHA-256), merges them into one file, then merges
them again (idempotent: nothing added), and prints rows per second for both.

Usage: scripts/bench_merge.py build/tools/isatune [SHARDS=64] [ROWS=10000] [DIR]
"""
import hashlib
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time


def make_shard(isatune, path, index, shards, rows):
    subprocess.run([isatune, "db", "migrate", "--db", path], check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("INSERT INTO devices(vendor, target_id, isa, name, compute_units, memory_bytes, driver_version, "
               "runtime_version, emulated) VALUES('amd','gfx942','gfx942','AMD Instinct MI300X',304,1,'bench','',0)")
    db.execute("INSERT INTO generators(name, version_hash) VALUES('gemm','bench')")
    db.execute("INSERT INTO toolchains(assembler, version) VALUES('llvm','19')")
    guid = "%032x" % random.getrandbits(128)
    db.execute("INSERT INTO runs(guid, strategy, budget, host, started_at, ended_at, device_id, shard) "
               "VALUES(?, 'exhaustive', 'all', 'node', 't0', 't1', 1, ?)", (guid, "%d/%d" % (index, shards)))
    shas = []
    for _ in range(100):
        blob = os.urandom(4096)
        sha = hashlib.sha256(blob).hexdigest()
        shas.append(sha)
        db.execute("INSERT INTO code_objects VALUES(?, 'amd', 'gfx942', 'gfx942', 4096, ?, 1, 't0')", (sha, blob))
    variants = 1000
    for v in range(variants):
        params = json.dumps({"shard": index, "tile": v}, sort_keys=True, separators=(",", ":"))
        db.execute("INSERT INTO variants(generator_id, signature, parameters, code_object, kernel, launch) "
                   "VALUES(1, '{}', ?, ?, 'k', '{}')", (params, shas[v % 100]))
    problems = max(1, rows // variants)
    db.executemany(
        "INSERT INTO measurements(variant_id, device_id, problem, status, median_ms, p20_ms, p80_ms, min_ms, count, "
        "timing_method, device_kind, measured_at, run_guid) VALUES(?, 1, ?, 'ok', ?, ?, ?, ?, 10, 'events', 'real', "
        "'t0', ?)",
        [(v + 1, '{"M":%d}' % (64 * (p + 1)), t, t * 0.9, t * 1.1, t * 0.8, guid)
         for p in range(problems) for v in range(variants) for t in [random.uniform(0.01, 5.0)]][:rows])
    db.commit()
    db.close()


def main():
    isatune = sys.argv[1]
    shards = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    work = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix="isatune-bench-merge-")
    files = []
    t = time.time()
    for i in range(shards):
        files.append(os.path.join(work, "shard-%d.sqlite" % i))
        if not os.path.exists(files[-1]):
            make_shard(isatune, files[-1], i, shards, rows)
    print("wrote %d shard files of %d measurements in %.1f s (%s)" % (shards, rows, time.time() - t, work))
    out = os.path.join(work, "merged.sqlite")
    if os.path.exists(out):
        os.remove(out)
    for label in ("merge", "merge again"):
        t = time.time()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([isatune, "db", "merge", out] + files + ["--json"], capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.time() - t
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        j = json.loads(r.stdout)
        # CPU seconds as well as wall: on a shared machine the wall time also holds the wait for a core.
        print("%-12s %8d rows added; wall %6.2f s (%9.0f input rows/s), CPU %6.2f s (%9.0f rows/s); merge alone "
              "%.2f s wall, the rest is db verify; %d files, exit %d" %
              (label, j["measurements_added"], wall, shards * rows / wall, cpu, shards * rows / max(cpu, 1e-9),
               j["wall_s"], len(files), r.returncode))


if __name__ == "__main__":
    main()
