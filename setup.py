"""Builds the isatune extension (and the isatune command, which isatune.tune() runs) with CMake, so that
`pip install .` works from the repository root. Only Debian's setuptools and wheel are needed: install with
`pip install --no-build-isolation .` where PyPI is unreachable. The CMake build folder is build-python/ (kept
between installs; ISATUNE_PYTHON_BUILD_DIR overrides it); ccache is used as in the main build."""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("ISATUNE_PYTHON_BUILD_DIR", os.path.join(ROOT, "build-python"))
        env = dict(os.environ, CCACHE_BASEDIR=ROOT, CCACHE_NOHASHDIR="1")
        configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                     "-DISATUNE_BUILD_TESTS=OFF", "-DISATUNE_BUILD_BENCH=OFF", f"-DISATUNE_PYTHON={sys.executable}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True, env=env)
        jobs = os.environ.get("ISATUNE_BUILD_JOBS", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", build_dir, "-j", jobs, "-t", "isatune_python", "isatune"], check=True,
                       env=env)
        built = os.path.join(build_dir, "python", "isatune")
        module = [f for f in os.listdir(built) if f.startswith("_isatune") and f.endswith(".so")]
        if not module:
            raise RuntimeError(f"the isatune extension was not built in {built} (is pybind11 installed?)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(built, module[0]), target)
        bin_dir = os.path.join(os.path.dirname(target), "bin")
        os.makedirs(bin_dir, exist_ok=True)
        shutil.copy2(os.path.join(build_dir, "tools", "isatune"), os.path.join(bin_dir, "isatune"))


setup(ext_modules=[Extension("isatune._isatune", sources=[])], cmdclass={"build_ext": CMakeBuild})
