"""isatune for Python: load tuned kernels from a tuning database and launch them with NumPy arrays or PyTorch
tensors; tune a generator and list the best variants (docs/python.md).

    import numpy as np, isatune
    loader = isatune.Loader("tuning.db", "emu:gfx942")
    k = loader.select("softmax", {"dtype": "f32"}, {"rows": 5, "N": 100})
    x = np.random.rand(5, 100).astype(np.float32); y = np.empty_like(x)
    k.launch(x, y, 5, 100, 100, 100, grid=5)   # arguments in the kernel's order: k.info["args"]

    jit = isatune.jit.Jit("tuning.db", "emu:gfx942")   # per call: exact only, or exact else built here
    k = jit.select("softmax", {"dtype": "f32"}, {"rows": 7, "N": 99}, mode="exact_or_jit")
    k.launch(x7, y7)                            # the generator's buffers in order: k.buffers; scalars by name
"""
from ._isatune import (  # noqa: F401  (the extension: the loader, the emulator, the database)
    Device,
    Error,
    InputError,
    Kernel,
    Loader,
    NotFoundError,
    UnavailableError,
    VendorFasterError,
    best,
    devices,
    schema_version,
)
from ._tune import cli_path, tune  # noqa: F401

try:  # the JIT (isatune.jit.Jit), when the extension was built with isatune_jit
    from ._isatune import jit  # noqa: F401
except ImportError:  # pragma: no cover
    jit = None

__all__ = ["Device", "Error", "InputError", "Kernel", "Loader", "NotFoundError", "UnavailableError",
           "VendorFasterError", "best", "devices", "schema_version", "tune", "cli_path", "jit"]
