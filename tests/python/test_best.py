"""isatune.best() agrees with `isatune db best --json` and with the loader's select on one database: the same
entry per tuned problem (the re-ranking's winner while no later search beat it, else the fastest median) and the
same vendor refusal (an entry slower than the vendor library's recorded time is flagged by both listings and the
loader raises VendorFasterError for it). The database is made by tuning a tiny softmax on the PTX emulator, then
given random medians on random problems, random winners (standing and beaten) and random vendor times with
Python's sqlite3, on the emulated device and on a real one: the fake libcuda of tests/cuda_driver (an H200 that
runs nothing) when ISATUNE_TEST_FAKE_CUDA names it, in a subprocess so that no other test sees that driver."""
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import isatune

SIG = {"dtype": "f32"}
EMU = "emu:sm_80"


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def key_of(row):
    return (row["generator"], canonical(row["signature"]), row["target_id"], row["compute_units"],
            row["device_kind"], canonical(row["problem"]))


def in_fake_cuda(code, *args):
    """Runs code in a Python whose CUDA backend loads the fake libcuda; returns what it prints (JSON)."""
    env = dict(os.environ, ISATUNE_CUDA_LIBRARY=os.environ["ISATUNE_TEST_FAKE_CUDA"])
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError("fake CUDA subprocess failed:\n" + out.stderr)
    return json.loads(out.stdout)


PROPERTIES = "import isatune, json; print(json.dumps(isatune.Device('cuda:0').properties))"
SELECT_ALL = """
import isatune, json, sys
loader = isatune.Loader(sys.argv[1], "cuda:0")
out = []
for problem in json.loads(sys.argv[2]):
    try:
        s = loader.select("softmax", {"dtype": "f32"}, problem).selection
        out.append({"variant_id": s["variant_id"], "measurement_id": s["measurement_id"], "median_ms": s["median_ms"],
                    "rerank_winner": s["rerank_winner"], "vendor_ms": s["vendor_ms"]})
    except isatune.VendorFasterError as e:
        out.append({"vendor_faster": True, "library": e.library, "vendor_ms": e.vendor_ms, "tuned_ms": e.tuned_ms,
                    "not_found": isinstance(e, isatune.NotFoundError)})
print(json.dumps(out))
"""


class BestAgreesWithTheCliAndTheLoader(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if "sm_80" not in [d["isa"] for d in isatune.devices()]:
            raise unittest.SkipTest("the PTX emulator is not in this build of the package")
        cls.dir = tempfile.mkdtemp(prefix="isatune-best-")
        cls.db = os.path.join(cls.dir, "tuning.db")
        isatune.tune("softmax", {"rows": 3, "N": 70}, EMU, db=cls.db, strategy="random", budget=6, isolation=False,
                     jobs=1)
        cls.seed = int.from_bytes(os.urandom(4), "little")
        cls.real = None
        if os.environ.get("ISATUNE_TEST_FAKE_CUDA"):
            cls.real = in_fake_cuda(PROPERTIES)
        cls.made = cls.randomise(random.Random(cls.seed))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def randomise(cls, rng):
        """Random problems, medians, winners and vendor times; returns the counts made."""
        made = {"winners": 0, "beaten": 0, "vendor": 0}
        con = sqlite3.connect(cls.db)
        with con:
            variants = [r[0] for r in con.execute(
                "SELECT DISTINCT m.variant_id FROM measurements m WHERE m.status = 'ok' ORDER BY 1")]
            emu_device = con.execute("SELECT device_id FROM measurements WHERE device_kind = 'emulated' LIMIT 1")
            devices = [(emu_device.fetchone()[0], "emulated")]
            if cls.real:
                p = cls.real
                cur = con.execute(
                    "INSERT INTO devices(vendor, target_id, isa, name, compute_units, memory_bytes, driver_version, "
                    "runtime_version, emulated) VALUES('nvidia', ?, ?, ?, ?, ?, ?, 'test', 0)",
                    (p["target_id"], p["isa"], p["name"], p["compute_units"], p["memory_bytes"],
                     p["driver_version"]))
                devices.append((cur.lastrowid, "real"))
            con.execute("INSERT INTO runs(guid, strategy, budget, host, started_at) "
                        "VALUES('py-rerank', 'rerank', '', 'test', '2026-12-02T12:00:00.000Z')")
            problems = sorted({(rng.randint(1, 9), rng.randint(1, 400)) for _ in range(rng.randint(3, 5))})
            stamp = [0]

            def measure(variant, device, kind, problem, ms):
                stamp[0] += 1
                con.execute(
                    "INSERT INTO measurements(variant_id, device_id, problem, status, median_ms, p20_ms, p80_ms, "
                    "min_ms, count, timing_method, device_kind, measured_at) VALUES(?, ?, ?, 'ok', ?, ?, ?, ?, 10, "
                    "?, ?, ?)",
                    (variant, device, problem, ms, ms * 0.9, ms * 1.1, ms * 0.8,
                     "events" if kind == "real" else "emulator-estimate", kind,
                     "2026-12-02T12:00:%02d.%03dZ" % (stamp[0] // 1000, stamp[0] % 1000)))

            def best_of(kind, device, problem):
                return con.execute(
                    "SELECT b.median_ms, b.target_id, b.compute_units FROM best b JOIN devices d ON d.target_id = "
                    "b.target_id AND d.compute_units = b.compute_units WHERE d.id = ? AND b.device_kind = ? AND "
                    "b.problem = ? AND b.generator = 'softmax'", (device, kind, problem)).fetchone()

            for device, kind in devices:
                for i, (rows, n) in enumerate(problems):
                    problem = canonical({"N": n, "rows": rows})
                    for v in variants:
                        measure(v, device, kind, problem, rng.uniform(0.001, 2.0))
                    # A re-ranking winner (a random variant's fastest measurement): on the first two problems always
                    # (the first one standing, the second beaten later), on the others at random.
                    if i < 2 or rng.random() < 0.7:
                        best_ms, target, cus = best_of(kind, device, problem)
                        pick = rng.randrange(len(variants))
                        mid, mms = con.execute(
                            "SELECT id, median_ms FROM measurements WHERE variant_id = ? AND device_id = ? AND "
                            "problem = ? AND status = 'ok' ORDER BY median_ms, id LIMIT 1",
                            (variants[pick], device, problem)).fetchone()
                        r = rng.uniform(0.001, 2.0)
                        con.execute(
                            "INSERT INTO rerank_winners(generator, signature, target_id, compute_units, device_kind, "
                            "problem, measurement_id, variant_id, median_ms, search_best_ms, rerank_median_ms, "
                            "rerank_lo_ms, rerank_hi_ms, candidates, rounds, separated, flip_rate, run_guid, "
                            "decided_at) VALUES('softmax', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                            "'py-rerank', '2026-12-02T12:30:00.000Z')",
                            (canonical(SIG), target, cus, kind, problem, mid, variants[pick], mms, best_ms, r, r * 0.95,
                             r * 1.05, len(variants), rng.randint(4, 30), rng.randint(0, 1), rng.random()))
                        made["winners"] += 1
                        if len(variants) > 1 and i != 0 and (i == 1 or rng.random() < 0.4):  # a later, faster search
                            measure(variants[(pick + 1) % len(variants)], device, kind, problem, best_ms * 0.5)
                            made["beaten"] += 1
                    # A vendor time either side of the entry: faster on the first problem, slower on the second.
                    if kind == "real" and (i < 2 or rng.random() < 0.7):
                        best_ms, target, cus = best_of(kind, device, problem)
                        con.execute(
                            "INSERT INTO vendor_times(generator, signature, target_id, compute_units, problem, "
                            "library, median_ms, count, timing_method, source, measured_at) VALUES('softmax', ?, ?, "
                            "?, ?, 'cublas test', ?, 10, 'events', 'manual', '2026-12-02T13:00:00.000Z')",
                            (canonical(SIG), target, cus, problem,
                             best_ms * ([0.5, 2.0][i] if i < 2 else rng.uniform(0.3, 3.0))))
                        made["vendor"] += 1
        con.close()
        return made

    def msg(self):
        return "seed %d (%s)" % (self.seed, self.made)

    def test_best_equals_db_best_json(self):
        rows = isatune.best(self.db)
        cli = json.loads(subprocess.run([isatune.cli_path(), "db", "best", "--db", self.db, "--json"],
                                        capture_output=True, text=True, check=True).stdout)
        self.assertEqual(len(rows), len(cli), self.msg())
        self.assertGreater(len(rows), 3, self.msg())
        for b, c in zip(rows, cli):
            where = "%s at %s" % (self.msg(), c)
            self.assertEqual(key_of(b), (c["generator"], c["signature"], c["target"], c["CUs"], c["kind"],
                                         c["problem"]), where)
            self.assertEqual(b["variant_id"], c["variant"], where)
            self.assertEqual(b["median_ms"], c["median_ms"], where)
            self.assertEqual(b["chosen_by"], c["chosen_by"], where)
            self.assertEqual(b["rerank"], c.get("rerank"), where)
            self.assertEqual(b["vendor"], c["vendor"], where)
            self.assertEqual(b["vs_vendor"], c["vs_vendor"], where)
            self.assertEqual(b["slower_than_vendor"], c["slower_than_vendor"], where)
        self.assertEqual(sum(b["chosen_by"] == "rerank" for b in rows), self.made["winners"] - self.made["beaten"],
                         self.msg())
        self.assertEqual(isatune.best(self.db, "softmax"), rows)
        self.assertEqual(isatune.best(self.db, "gemm"), [])

    def test_best_is_what_the_loader_selects_on_the_emulator(self):
        loader = isatune.Loader(self.db, EMU)
        emulated = [b for b in isatune.best(self.db) if b["device_kind"] == "emulated"]
        self.assertGreaterEqual(len(emulated), 3, self.msg())
        self.assertTrue(any(b["chosen_by"] == "rerank" for b in emulated), self.msg())
        for b in emulated:
            s = loader.select("softmax", b["signature"], b["problem"]).selection
            where = "%s at %s" % (self.msg(), b["problem"])
            self.assertTrue(s["exact"], where)
            self.assertEqual(s["variant_id"], b["variant_id"], where)
            self.assertEqual(s["measurement_id"], b["measurement_id"], where)
            self.assertEqual(s["median_ms"], b["median_ms"], where)
            self.assertEqual(json.loads(s["parameters"]), b["parameters"], where)
            self.assertEqual(s["rerank_winner"], b["chosen_by"] == "rerank", where)
            self.assertEqual(s["vendor_ms"], 0, where)  # no vendor time on an emulated device
            self.assertFalse(b["slower_than_vendor"], where)

    def test_best_is_what_the_loader_selects_on_a_real_device(self):
        if not self.real:
            self.skipTest("ISATUNE_TEST_FAKE_CUDA (the fake libcuda of tests/cuda_driver) is not set")
        real = [b for b in isatune.best(self.db) if b["device_kind"] == "real"]
        self.assertGreaterEqual(len(real), 3, self.msg())
        self.assertTrue(any(b["slower_than_vendor"] for b in real), self.msg())
        self.assertFalse(all(b["slower_than_vendor"] for b in real), self.msg())
        got = in_fake_cuda(SELECT_ALL, self.db, json.dumps([b["problem"] for b in real]))
        for b, s in zip(real, got):
            where = "%s at %s: %s" % (self.msg(), b["problem"], s)
            if b["slower_than_vendor"]:
                self.assertTrue(s.get("vendor_faster"), where)
                self.assertTrue(s["not_found"], where)
                self.assertEqual(s["library"], b["vendor"]["library"], where)
                self.assertEqual(s["vendor_ms"], b["vendor"]["median_ms"], where)
                self.assertEqual(s["tuned_ms"], b["median_ms"], where)
            else:
                self.assertNotIn("vendor_faster", s, where)
                self.assertEqual(s["variant_id"], b["variant_id"], where)
                self.assertEqual(s["measurement_id"], b["measurement_id"], where)
                self.assertEqual(s["rerank_winner"], b["chosen_by"] == "rerank", where)
                self.assertEqual(s["vendor_ms"], b["vendor"]["median_ms"] if b["vendor"] else 0, where)


if __name__ == "__main__":
    unittest.main()
