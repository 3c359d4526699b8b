"""The tuner's entry point for Python: `tune()` runs `isatune tune ... --json`, the same job as the command line,
so device work runs in the tuner's watched worker process (a hanging or faulting variant cannot take Python down)
and every evaluation is recorded in the database. Errors come back as isatune exceptions with its message."""
import json
import os
import shutil
import subprocess

from ._isatune import Error, InputError, UnavailableError

_EXIT_INPUT, _EXIT_USAGE, _EXIT_UNAVAILABLE = 1, 2, 3


def cli_path():
    """The isatune executable: $ISATUNE_CLI, else one installed with the package (isatune/bin), else PATH."""
    env = os.environ.get("ISATUNE_CLI")
    if env:
        return env
    here = os.path.join(os.path.dirname(__file__), "bin", "isatune")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("isatune")
    if found:
        return found
    raise UnavailableError("the isatune command is not found (set ISATUNE_CLI, or put isatune on PATH)")


def _words(value, what):
    """{"M": 128, "N": 64} or "M=128,N=64" -> "M=128,N=64"."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    raise InputError(f"{what}: expected a dict or a 'k=v,...' string, got {type(value).__name__}")


def tune(generator, problem, device="emu", *, target=None, signature=None, db=None, strategy=None, budget=None,
         seed=None, timeout=None, isolation=True, jobs=None, history=False):
    """Tunes `generator` for `problem` (a dict, a 'k=v,...' string, or a list of them: tuned for their sum) on
    `device` ("emu", "emu:gfx942", "cuda:0", "hip:0") and returns the tuner's JSON summary as a dict: best,
    top, by_status, evaluations, ... With `db` every evaluation is recorded there and a rerun resumes."""
    args = [cli_path(), "tune", generator, "--device", device, "--json"]
    problems = problem if isinstance(problem, (list, tuple)) else [problem]
    for p in problems:
        args += ["--problem", _words(p, "problem")]
    if target:
        args += ["--target", target]
    if signature:
        args += ["--sig", _words(signature, "signature")]
    for flag, value in (("--db", db), ("--strategy", strategy), ("--budget", budget), ("--seed", seed),
                        ("--timeout", timeout), ("-j", jobs)):
        if value is not None:
            args += [flag, str(value)]
    if not isolation:
        args.append("--no-isolation")
    if history:
        args.append("--history")
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    message = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"isatune tune exited with {r.returncode}"
    message = message.removeprefix("isatune: ")
    if r.returncode in (_EXIT_INPUT, _EXIT_USAGE):
        raise InputError(message)
    if r.returncode == _EXIT_UNAVAILABLE:
        raise UnavailableError(message)
    if r.returncode != 0:
        raise Error(message)
    return json.loads(r.stdout)
