#!/usr/bin/env python3
"""Differential check of isatune's `.size` and assignment rules against llvm-mc.

LLVM's ELF writer aborts the process on a `.size` it cannot turn into a number, and on an assigned symbol
(`e = ...`) in the symbol table whose value is no relocatable value; isatune refuses both before the object is
written (asm/toolchain/src/llvm_size_check.cpp, llvm_variable_check.cpp). This draws random expressions over
labels of one section, a label of another section, an undefined symbol, `.`, variables, constants and (for
assignments) AMDGPU's max()/or(), writes each as `.size f, EXPR` (--what size) or `e = EXPR` (--what
assignment), assembles the text with `isatune asm` and with `llvm-mc -filetype=obj`, and counts:
  agree-ok       both assemble (for a size: and the symbol's st_size is the same)
  agree-refused  isatune refuses it, llvm-mc aborts on it
  both-fail      both fail for another reason (a parse error, LLVM's own error)
  over-refused   isatune refuses what llvm-mc writes (safe, but a kernel it could have assembled)
  MISSED         isatune accepts what llvm-mc aborts on, or the sizes differ: a bug
Exit status 1 when anything is MISSED.

  scripts/size_check_vs_llvm.py [--what size|assignment] [--count N] [--seed S] [--isatune build/tools/isatune]
                                [--llvm-mc llvm-mc-22]
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

HEAD = """.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.amdhsa_code_object_version 5
.data
.Ld:
  .long 1
.text
.globl f
.p2align 8
.type f,@function
f:
  s_mov_b32 s0, 0
  s_cbranch_scc0 .Lmid
  .p2align 5
.Lmid:
  s_nop 0
  s_endpgm
.Lend:
.set x, .Lend - f
.set y, .Lmid
.set c, 8
"""

LEAVES = ["f", ".Lend", ".Lmid", ".Ld", "u", ".", "x", "y", "c", "0", "1", "4", "7", "3", "16"]
BINARY = ["+", "-", "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", ">", "==", "!=", "&&", "||"]
UNARY = ["-", "~", "!", "+"]
# AMDGPU's target expressions, for assignments (a .size of one is refused the same way).
TARGET_LEAVES = ["max(u, 1)", "max(c, 3)", "or(x, 1)", "max(f, 4)", "max(.Lend - f, 4)", "max(y, c)"]
# What each mode writes, how isatune says it refused it, and how llvm-mc aborts on it.
MODES = {
    "size": (".size f, {}\n", "is not a number LLVM can write", "size expression must be absolute"),
    "assignment": ("e = {}\n", "is not one LLVM can write to the symbol table", "cannot evaluate equated symbol"),
}


def expression(rng, depth, leaves):
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return rng.choice(leaves)
    if roll < 0.4:
        return rng.choice(UNARY) + expression(rng, depth - 1, leaves)
    if roll < 0.5:
        return "(" + expression(rng, depth - 1, leaves) + ")"
    return (expression(rng, depth - 1, leaves) + " " + rng.choice(BINARY) + " " +
            expression(rng, depth - 1, leaves))


def st_size(readelf, path):
    out = subprocess.run([readelf, "-sW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[7] == "f":
            return int(cols[2])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--what", choices=sorted(MODES), default="size")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--isatune", default="build/tools/isatune")
    ap.add_argument("--llvm-mc", default="llvm-mc-22")
    ap.add_argument("--readelf", default="llvm-readelf-22")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    line, refusal, abort = MODES[args.what]
    leaves = LEAVES + (TARGET_LEAVES if args.what == "assignment" else [])
    counts = {k: 0 for k in ["agree-ok", "agree-refused", "both-fail", "over-refused", "MISSED"]}
    with tempfile.TemporaryDirectory() as tmp:
        src, obj, hsaco = (os.path.join(tmp, n) for n in ("k.s", "k.o", "k.hsaco"))
        for i in range(args.count):
            expr = expression(rng, rng.randint(1, 4), leaves)
            with open(src, "w") as f:
                f.write(HEAD + line.format(expr))
            mine = subprocess.run([args.isatune, "asm", src, "-o", hsaco], capture_output=True, text=True)
            theirs = subprocess.run([args.llvm_mc, "-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx942",
                                     "-filetype=obj", src, "-o", obj], capture_output=True, text=True)
            refused = mine.returncode != 0 and refusal in mine.stderr
            aborted = theirs.returncode != 0 and re.search(abort, theirs.stderr, re.I)
            if mine.returncode == 0 and theirs.returncode == 0:
                same = args.what != "size" or st_size(args.readelf, hsaco) == st_size(args.readelf, obj)
                kind = "agree-ok" if same else "MISSED"
            elif refused and aborted:
                kind = "agree-refused"
            elif refused and theirs.returncode == 0:
                kind = "over-refused"
            elif aborted and not refused:
                kind = "MISSED"
            else:
                kind = "both-fail"
            counts[kind] += 1
            if kind in ("MISSED", "over-refused"):
                print(f"{kind}: {line.format(expr).strip()}\n  isatune: {mine.stderr.strip()[:300]}\n"
                      f"  llvm-mc: {theirs.stderr.strip()[:300]}")
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 1 if counts["MISSED"] else 0


if __name__ == "__main__":
    sys.exit(main())
