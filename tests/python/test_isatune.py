"""The Python package on the CDNA emulator: select and launch with NumPy arrays and PyTorch CPU tensors against a
float64 reference, error mapping, the tuner's entry points, and no leaks over 10,000 launches. A tuning database
is made first by tuning a tiny softmax with the isatune command (ISATUNE_CLI)."""
import ctypes
import gc
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
import unittest

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

import isatune

DEVICE = "emu:gfx942"
SIG = {"dtype": "f32"}


def softmax_reference(x):
    """float64 row softmax."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def native_memory_in_use():
    """(what, bytes) of native memory the process holds. Under AddressSanitizer resident memory grows by itself
    (freed blocks wait in its quarantine, 256 MiB by default), so there it is the heap in use as the sanitizer
    counts it; otherwise resident memory."""
    try:
        in_use = ctypes.CDLL(None).__sanitizer_get_current_allocated_bytes
    except AttributeError:
        return "resident memory", rss_bytes()
    in_use.restype = ctypes.c_size_t
    return "the heap in use (AddressSanitizer's count)", in_use()


@unittest.skipIf(np is None, "numpy is not installed (Debian: python3-numpy)")
class IsatunePackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="isatune-python-")
        cls.db = os.path.join(cls.dir, "tuning.db")
        cls.tuned = isatune.tune("softmax", {"rows": 5, "N": 100}, DEVICE, db=cls.db, strategy="random", budget=12,
                                 isolation=False, jobs=1)
        cls.loader = isatune.Loader(cls.db, DEVICE)
        cls.rng = np.random.default_rng(20261202)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def softmax_args(self, kernel, x, y, rows, n):
        """The kernel's explicit arguments by name, in its order."""
        values = {"x": x, "y": y, "rows": rows, "n": n, "ldx": n, "ldy": n}
        names = [a["name"].lower() for a in kernel.info["args"]]
        self.assertEqual(sorted(names), sorted(values), kernel.info["args"])
        return [values[name] for name in names]

    def grid(self, kernel, rows):
        per = json.loads(kernel.selection["parameters"])["rows_per_wg"]
        return (rows + per - 1) // per

    def test_select_and_launch_numpy_on_a_problem_not_tuned(self):
        rows, n = 7, 93  # ragged, and not the tuned problem: the nearest tuned one is selected
        k = self.loader.select("softmax", SIG, {"rows": rows, "N": n})
        self.assertFalse(k.selection["exact"])
        self.assertEqual(json.loads(k.selection["tuned_problem"]), {"N": 100, "rows": 5})
        self.assertEqual(k.selection["device_kind"], "emulated")
        x = self.rng.uniform(-4, 4, (rows, n)).astype(np.float32)
        x_before = x.copy()
        y = self.rng.uniform(-1, 1, (rows, n)).astype(np.float32)
        k.launch(*self.softmax_args(k, x, y, rows, n), grid=self.grid(k, rows))
        np.testing.assert_allclose(y, softmax_reference(x), rtol=2e-5, atol=1e-7)
        np.testing.assert_array_equal(x, x_before)  # the input is read-only: not written back, not changed

    def test_best_lists_what_the_tuner_found(self):
        rows = isatune.best(self.db, "softmax")
        self.assertEqual(len(rows), 1)
        b = rows[0]
        self.assertEqual(b["problem"], {"N": 100, "rows": 5})
        self.assertEqual(b["device_kind"], "emulated")
        self.assertEqual(b["parameters"], self.tuned["best"]["params"])
        self.assertAlmostEqual(b["median_ms"], self.tuned["best"]["time_ms"], places=12)
        self.assertEqual(isatune.best(self.db, "gemm"), [])

    @unittest.skipIf(torch is None, "torch is not installed (Debian: python3-torch)")
    def test_launch_with_torch_cpu_tensors_in_place(self):
        rows, n = 5, 100
        k = self.loader.select("softmax", SIG, {"rows": rows, "N": n})
        self.assertTrue(k.selection["exact"])
        gen = torch.Generator().manual_seed(7)
        x = (torch.rand((rows, n), generator=gen, dtype=torch.float32) - 0.5) * 6
        y = torch.full((rows, n), 3.0, dtype=torch.float32)
        k.launch(*self.softmax_args(k, x, y, rows, n), grid=self.grid(k, rows))
        np.testing.assert_allclose(y.numpy(), softmax_reference(x.numpy()), rtol=2e-5, atol=1e-7)
        # A non-contiguous tensor is refused, not silently copied.
        with self.assertRaisesRegex(isatune.InputError, "contiguous"):
            k.launch(*self.softmax_args(k, x.t(), y, rows, n), grid=self.grid(k, rows))

    def test_errors_are_python_exceptions_with_the_loaders_messages(self):
        self.assertTrue(issubclass(isatune.NotFoundError, isatune.InputError))
        self.assertTrue(issubclass(isatune.NotFoundError, LookupError))
        self.assertTrue(issubclass(isatune.InputError, ValueError))
        self.assertTrue(issubclass(isatune.InputError, isatune.Error))
        self.assertTrue(issubclass(isatune.Error, RuntimeError))
        with self.assertRaises(isatune.NotFoundError) as e:
            self.loader.select("rmsnorm", SIG, {"rows": 5, "N": 100})
        self.assertIn("rmsnorm", str(e.exception))
        with self.assertRaises(isatune.InputError) as e:
            isatune.Loader(os.path.join(self.dir, "absent.db"), DEVICE)
        self.assertIn("absent.db", str(e.exception))
        with self.assertRaises(isatune.InputError) as e:
            isatune.Loader(self.db, "nosuchbackend:0")
        self.assertIn("nosuchbackend", str(e.exception))
        k = self.loader.select("softmax", SIG, {"rows": 5, "N": 100})
        with self.assertRaisesRegex(isatune.InputError, r"takes 6 arguments .*got 2"):
            k.launch(1, 2, grid=1)
        x = np.zeros((5, 100), np.float32)

        class CudaArray:  # what a CUDA tensor or CuPy array offers
            __cuda_array_interface__ = {"data": (0x7F0000000000, False), "shape": (500,), "typestr": "<f4",
                                        "strides": None, "version": 3}

        args = self.softmax_args(k, x, x.copy(), 5, 100)
        args[0] = CudaArray()
        with self.assertRaisesRegex(isatune.InputError, "not this device's"):
            k.launch(*args, grid=5)
        args = self.softmax_args(k, x, x.copy(), 5, 100)
        args[-1] = "100"
        with self.assertRaisesRegex(isatune.InputError, "by-value argument"):
            k.launch(*args, grid=5)
        args = self.softmax_args(k, x, x.copy(), 5, 100)
        args[-1] = 1 << 40
        with self.assertRaisesRegex(isatune.InputError, "does not fit"):
            k.launch(*args, grid=5)
        with self.assertRaisesRegex(isatune.InputError, "grid"):
            k.launch(*self.softmax_args(k, x, x.copy(), 5, 100))
        with self.assertRaises(isatune.InputError) as e:
            isatune.tune("nosuchgenerator", {"N": 1}, DEVICE, isolation=False)
        self.assertIn("unknown generator", str(e.exception))

    def test_ptx_emulator_numpy_and_nvidia_names(self):
        if "sm_80" not in [d["isa"] for d in isatune.devices()]:
            self.skipTest("the PTX emulator is not in this build of the package")
        db = os.path.join(self.dir, "ptx.db")
        isatune.tune("softmax", {"rows": 3, "N": 70}, "emu:sm_80", db=db, strategy="random", budget=6,
                     isolation=False, jobs=1)
        loader = isatune.Loader(db, "emu:sm_80")
        rows, n = 5, 61
        k = loader.select("softmax", SIG, {"rows": rows, "N": n})
        info = k.info
        self.assertIn("registers", info)
        self.assertIn("shared_bytes", info)
        self.assertNotIn("vgprs", info)
        self.assertNotIn("lds_bytes", info)
        x = self.rng.uniform(-3, 3, (rows, n)).astype(np.float32)
        y = self.rng.uniform(-1, 1, (rows, n)).astype(np.float32)
        values = {"x": x, "y": y, "rows": rows, "N": n, "ld": n, "ldy": n}
        args = [values[a["name"]] for a in info["args"]]
        per = json.loads(k.selection["parameters"])["rows_per_cta"]
        # The recorded launch template holds the block only: a staged variant's dynamic shared memory (rows per
        # CTA x its row) is not in it, so give a bound that covers any variant of this small problem.
        k.launch(*args, grid=(rows + per - 1) // per, shared_bytes=32768)
        np.testing.assert_allclose(y, softmax_reference(x), rtol=2e-5, atol=1e-7)

    def test_devices_and_properties(self):
        names = [d["isa"] for d in isatune.devices() if d["backend"] == "emu"]
        self.assertIn("gfx942", names)
        props = isatune.Device(DEVICE).properties
        self.assertTrue(props["emulated"])
        self.assertEqual(self.loader.device["kind"], "emulated")

    def test_no_leaks_over_10000_launches(self):
        rows, n = 1, 512  # 4 KiB of device buffers a launch: a leak of them would be 40 MiB
        k = self.loader.select("softmax", SIG, {"rows": rows, "N": n})
        x = self.rng.uniform(-2, 2, (rows, n)).astype(np.float32)
        y = np.empty_like(x)
        args = self.softmax_args(k, x, y, rows, n)
        grid = self.grid(k, rows)
        arrays = [x, y]  # small ints are shared by the interpreter: their counts move with anything
        refs = [sys.getrefcount(a) for a in arrays]
        for _ in range(200):  # warm-up: caches, allocator pools
            k.launch(*args, grid=grid)
        gc.collect()
        _, mem0 = native_memory_in_use()
        tracemalloc.start()
        snap0 = tracemalloc.take_snapshot()
        for _ in range(10000):
            k.launch(*args, grid=grid)
        gc.collect()
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
        tracemalloc.stop()
        what, mem1 = native_memory_in_use()
        growth = mem1 - mem0
        self.assertEqual([sys.getrefcount(a) for a in arrays], refs)
        self.assertLess(grown, 64 * 1024, "Python objects kept by launches")
        self.assertLess(growth, 8 * 1024 * 1024, "%s grew by %d bytes" % (what, growth))
        np.testing.assert_allclose(y, softmax_reference(x), rtol=2e-5, atol=1e-7)


if __name__ == "__main__":
    unittest.main()
