"""The JIT from Python (isatune.jit, docs/python.md and docs/jit.md) on the CDNA emulator: per call "exact or JIT".
A GEMM is tuned for one shape with the isatune command; an untuned ragged shape then gets a kernel built from
the nearest tuned configuration that agrees with a NumPy float64 reference on fresh random inputs, a second call
reuses it, threads asking at once build it once, a new process-level Jit reads the build back from the database,
a generator with nothing tuned takes the static model's choice, and the database keeps everything it had."""
import json
import os
import shutil
import sqlite3
import tempfile
import threading
import unittest

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

import isatune

DEVICE = "emu:gfx942"
GEMM_SIG = {"a": "f16", "b": "f16", "cd": "f32", "layout": "NT"}
HAVE_JIT = getattr(isatune, "jit", None) is not None


def gemm_reference(a, b, c, m, n, k, alpha, beta):
    """float64 D = alpha op(A) op(B) + beta C for layout NT, column-major: A is M x K (lda = M), B is stored
    transposed (N x K, ldb = N), C and D M x N (ld = M); the kernel gets alpha and beta as float32."""
    alpha, beta = float(np.float32(alpha)), float(np.float32(beta))
    a64 = a.astype(np.float64).reshape(k, m).T  # column-major M x K
    b64 = b.astype(np.float64).reshape(k, n)    # op(B) = B^T: element (k, j) at j + k N
    c64 = c.astype(np.float64).reshape(n, m).T
    return (alpha * (a64 @ b64) + beta * c64).T.reshape(-1)


def softmax_reference(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def db_state(path):
    """What the tuning must keep: integrity, the measurements, the best rows, and the JIT runs."""
    con = sqlite3.connect(path)
    try:
        return {
            "integrity": con.execute("PRAGMA integrity_check").fetchone()[0],
            "measurements": con.execute("SELECT * FROM measurements ORDER BY id").fetchall(),
            "best": con.execute("SELECT * FROM best ORDER BY 1, 2, 3, 4, 5").fetchall(),
            "jit_runs": con.execute("SELECT json_extract(budget, '$.variant_id'), json_extract(budget, '$.problem'), "
                                    "json_extract(budget, '$.source') FROM runs WHERE strategy = 'jit'").fetchall(),
            "variants": {r[0] for r in con.execute("SELECT id FROM variants")},
        }
    finally:
        con.close()


@unittest.skipIf(np is None, "numpy is not installed (Debian: python3-numpy)")
@unittest.skipUnless(HAVE_JIT, "the package was built without the JIT (isatune_jit not built)")
class JitPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="isatune-python-jit-")
        cls.db = os.path.join(cls.dir, "tuning.db")
        cls.tuned = isatune.tune("gemm", {"M": 64, "N": 64, "K": 32}, DEVICE, signature=GEMM_SIG, db=cls.db,
                                 strategy="random", budget=3, seed=5, isolation=False, jobs=1)
        cls.before = db_state(cls.db)
        cls.jit = isatune.jit.Jit(cls.db, DEVICE)
        cls.rng = np.random.default_rng(20261202)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_gemm(self, kernel, m, n, k):
        """Launches on fresh random inputs and returns (D, the float64 reference)."""
        names = [b["name"] for b in kernel.buffers]
        self.assertEqual(names, ["A", "B", "C", "D", "workspace"])
        sizes = {b["name"]: b["elements"] for b in kernel.buffers}
        self.assertEqual(sizes["A"], m * k)
        a = self.rng.uniform(-1, 1, sizes["A"]).astype(np.float16)
        b = self.rng.uniform(-1, 1, sizes["B"]).astype(np.float16)
        c = self.rng.uniform(-1, 1, sizes["C"]).astype(np.float32)
        d = self.rng.uniform(-1, 1, sizes["D"]).astype(np.float32)  # not zeros: every element must be written
        w = np.zeros(sizes["workspace"], dtype=np.float32)
        alpha, beta = float(self.rng.uniform(0.5, 2)), float(self.rng.uniform(-1, 1))
        kernel.launch(a, b, c, d, w, alpha=alpha, beta=beta)
        return d, gemm_reference(a, b, c, m, n, k, alpha, beta)

    def assert_gemm_correct(self, kernel, m, n, k):
        for _ in range(2):
            d, want = self.run_gemm(kernel, m, n, k)
            np.testing.assert_allclose(d, want, rtol=1e-4, atol=1e-4 * k)

    def test_an_untuned_shape_gets_a_correct_kernel_and_a_second_call_reuses_it(self):
        m, n, k = 77, 45, 40  # ragged and not tuned
        problem = {"M": m, "N": n, "K": k}
        builds = self.jit.stats["builds"]
        kern = self.jit.select("gemm", GEMM_SIG, problem)  # mode="exact_or_jit" by default
        self.assertEqual(kern.source, "nearest")
        self.assertTrue(kern.built)
        info = kern.describe()
        self.assertEqual(info["seed_problem"], {"K": 32, "M": 64, "N": 64})
        self.assertEqual(info["problem"], problem)
        self.assertGreater(info["variant_id"], 0)
        self.assertTrue(info["run_guid"])
        self.assertEqual(self.jit.stats["builds"], builds + 1)
        self.assert_gemm_correct(kern, m, n, k)

        again = self.jit.select("gemm", json.dumps({"layout": "NT"}), problem, mode="exact_or_jit")  # defaults fill
        self.assertEqual(self.jit.stats["builds"], builds + 1)  # reused, not rebuilt
        self.assertEqual(again.code_object, kern.code_object)
        self.assertEqual(again.variant_id, kern.variant_id)
        self.assert_gemm_correct(again, m, n, k)

        with self.assertRaises(isatune.NotFoundError):
            self.jit.select("gemm", GEMM_SIG, problem, mode="exact_only")

        # A new Jit (a later process) reads the recorded build back instead of building
        later = isatune.jit.Jit(isatune.Loader(self.db, DEVICE))
        back = later.select("gemm", GEMM_SIG, problem)
        self.assertTrue(back.from_database)
        self.assertFalse(back.built)
        self.assertEqual(later.stats["builds"], 0)
        self.assertEqual(back.variant_id, kern.variant_id)
        self.assert_gemm_correct(back, m, n, k)

    def test_the_tuned_shape_is_exact(self):
        kern = self.jit.select("gemm", GEMM_SIG, {"M": 64, "N": 64, "K": 32}, mode="exact_only")
        self.assertEqual(kern.source, "exact")
        self.assertFalse(kern.built)
        self.assertEqual(kern.parameters, self.tuned["best"]["params"])
        self.assert_gemm_correct(kern, 64, 64, 32)

    def test_threads_asking_at_once_build_once(self):
        problem = {"M": 100, "N": 36, "K": 72}
        builds = self.jit.stats["builds"]
        start = threading.Barrier(16)
        got, errors = [], []

        def ask():
            try:
                start.wait()
                got.append(self.jit.select("gemm", GEMM_SIG, problem))
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=ask) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(got), 16)
        self.assertEqual(self.jit.stats["builds"], builds + 1)
        self.assertEqual({k.code_object for k in got}, {got[0].code_object})
        self.assert_gemm_correct(got[3], 100, 36, 72)

    def test_nothing_tuned_takes_the_static_model(self):
        rows, n = 7, 333
        kern = self.jit.select("softmax", {"dtype": "f32"}, {"rows": rows, "N": n})
        self.assertEqual(kern.source, "model")
        self.assertEqual([b["name"] for b in kern.buffers], ["x", "y"])
        x = self.rng.uniform(-4, 4, kern.buffers[0]["elements"]).astype(np.float32)
        y = self.rng.uniform(-1, 1, kern.buffers[1]["elements"]).astype(np.float32)
        kern.launch(x, y)
        np.testing.assert_allclose(y.reshape(rows, n), softmax_reference(x.reshape(rows, n)), rtol=2e-5, atol=1e-7)

    def test_bad_input_is_named(self):
        kern = self.jit.select("gemm", GEMM_SIG, {"M": 64, "N": 64, "K": 32})
        with self.assertRaisesRegex(isatune.InputError, "mode must be"):
            self.jit.select("gemm", GEMM_SIG, {"M": 64, "N": 64, "K": 32}, mode="sometimes")
        with self.assertRaisesRegex(isatune.InputError, r"takes 5 buffers \(A, B, C, D, workspace\), got 1"):
            kern.launch(np.zeros(4, np.float16))
        bufs = [np.zeros(b["elements"], np.float16 if b["dtype"] == "f16" else np.float32) for b in kern.buffers]
        with self.assertRaisesRegex(isatune.InputError, "no scalar 'gamma'"):
            kern.launch(*bufs, gamma=1.0)
        wrong = list(bufs)
        wrong[0] = np.zeros(bufs[0].size, np.float32)
        with self.assertRaisesRegex(isatune.InputError, r"buffer 0 \(A\): 4-byte elements for a f16 buffer"):
            kern.launch(*wrong)
        wrong[0] = np.zeros(bufs[0].size - 1, np.float16)
        with self.assertRaisesRegex(isatune.InputError, "elements, the problem needs"):
            kern.launch(*wrong)
        with self.assertRaises(isatune.InputError):
            self.jit.select("no_such_generator", {}, {"M": 1})

    def test_zz_the_database_is_intact(self):
        # (named to run last in this class, as unittest orders tests by name, so it sees the others' builds too)
        self.jit.select("gemm", GEMM_SIG, {"M": 50, "N": 20, "K": 24})  # one build of its own at least
        now = db_state(self.db)
        self.assertEqual(now["integrity"], "ok")
        self.assertEqual(now["measurements"], self.before["measurements"])  # no measurement added or lost
        self.assertEqual(now["best"], self.before["best"])                  # a JIT build never enters best
        self.assertEqual(self.before["jit_runs"], [])
        self.assertGreaterEqual(len(now["jit_runs"]), 1)
        for variant_id, problem, source in now["jit_runs"]:
            self.assertIn(variant_id, now["variants"])
            self.assertIn(source, ("nearest", "model"))
        problems = [json.loads(p) for _, p, _ in now["jit_runs"]]
        self.assertEqual(len(problems), len({json.dumps(p, sort_keys=True) for p in problems}))  # one run a build


if __name__ == "__main__":
    unittest.main()
