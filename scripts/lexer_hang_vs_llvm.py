#!/usr/bin/env python3
"""Differential check of isatune's guards against LLVM 22's parser hang on an error token at the end of the text.

LLVM 22's AMDGPU parser loops forever skipping a bad statement when an error token of its lexer comes right
before the file's last end of statement (asm/toolchain/src/llvm_lexer_check.cpp says why). isatune refuses such
texts before LLVM parses them (the lexer pre-check, llvm_final_token_check.cpp). This draws random texts from
lines that open and close .amdgpu_metadata blocks, .if, .macro, .rept, .amdhsa_kernel and PAL metadata blocks,
labels, comments, strings that run on, bad statements and bytes LLVM's lexer refuses (sometimes through an
.include), assembles each with `isatune asm` and with `llvm-mc -filetype=obj` (each under a time limit), and
counts:
  agree-ok       both assemble
  agree-refused  llvm-mc hangs, isatune refuses the text
  both-fail      neither hangs, and both fail
  isatune-only   isatune fails where llvm-mc assembles (printed when the lexer guards refused it)
  llvm-only      llvm-mc fails where isatune assembles (not this script's business; counted)
  MISSED         llvm-mc hangs and isatune does not refuse, or isatune itself runs past its limit: a bug
Exit status 1 when anything is MISSED.

  scripts/lexer_hang_vs_llvm.py [--count N] [--seed S] [--isatune build/tools/isatune] [--llvm-mc llvm-mc-22]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

LINES = [
    ".amdgpu_metadata", ".amdgpu_metadata:", ".amdgpu_metadata = 1", ".end_amdgpu_metadata",
    ".if 0", ".IF 0", ".if 1", ".ifdef q", ".else", ".endif", ".ENDIF",
    ".macro m", ".macro .amdgpu_metadata", ".endm", "m",
    ".rept 2", ".endr", ".amdhsa_kernel k", ".end_amdhsa_kernel",
    ".amdgpu_pal_metadata", ".end_amdgpu_pal_metadata",
    "s_nop 0", 'a "" "', 'a "" ""', '""""""', "x:", "1:", "x: .if 0", "; c", "// c", '# 1 "f"',
    "amdhsa.version: [1, 2]", "- 'it''s'", "/* c", "*/", "", "",
]
TAILS = ["\x8b", '"', "'", "`", " ; c", "/*", "*/", "\\", " \x8b\x8b", '""', "0x", ""]
BREAKS = ["\n"] * 8 + ["\r\n", "\r"]


def text(rng, lines):
    out = []
    for _ in range(lines):
        line = rng.choice(LINES)
        if rng.random() < 0.35:
            line += rng.choice(TAILS)
        out.append(line + rng.choice(BREAKS))
    if rng.random() < 0.5:  # end on a bad statement whose last token is an error token: the hang's shape
        out.append(rng.choice(['a "" ""', 'a "" "', '""""', "a", 'a "" "\n;']) + rng.choice(["\x8b", "'", "`", '"']))
    body = "".join(out)
    return body.rstrip("\r\n") if rng.random() < 0.4 else body


def run(cmd, limit):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=limit)
        return p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--isatune", default="build/tools/isatune")
    ap.add_argument("--llvm-mc", default="llvm-mc-22")
    ap.add_argument("--limit", type=float, default=2.0, help="seconds llvm-mc may take before it counts as hung")
    ap.add_argument("--verbose", action="store_true", help="print every isatune-only text too")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    counts = {k: 0 for k in ["agree-ok", "agree-refused", "both-fail", "isatune-only", "llvm-only", "MISSED"]}
    guard_words = ("outside a comment or string", "unterminated", "LLVM's lexer", "bad character constant",
                   "invalid hexadecimal")
    with tempfile.TemporaryDirectory() as tmp:
        src, inc, obj, hsaco = (os.path.join(tmp, n) for n in ("k.s", "inc.s", "k.o", "k.hsaco"))
        for _ in range(args.count):
            body = text(rng, rng.randint(1, 7))
            if rng.random() < 0.2:
                with open(inc, "wb") as f:
                    f.write(text(rng, rng.randint(1, 3)).encode("latin-1"))
                body += '.include "' + inc + '"' + ("" if rng.random() < 0.5 else "\n")
            with open(src, "wb") as f:
                f.write(body.encode("latin-1"))
            theirs, their_err = run([args.llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj",
                                     src, "-o", obj], args.limit)
            mine, my_err = run([args.isatune, "asm", src, "--target", "gfx942", "-o", hsaco], 30)
            if theirs is None:
                kind = "agree-refused" if mine not in (None, 0) else "MISSED"
            elif mine is None:
                kind = "MISSED"
            elif mine == 0 and theirs == 0:
                kind = "agree-ok"
            elif mine != 0 and theirs != 0:
                kind = "both-fail"
            elif mine != 0:
                kind = "isatune-only"
            else:
                kind = "llvm-only"
            counts[kind] += 1
            if kind == "MISSED" or (kind == "isatune-only" and (args.verbose or any(w in my_err for w in guard_words))):
                print(f"{kind}: {body!r}\n  isatune: {my_err.strip()[:300]}\n  llvm-mc: {their_err.strip()[:200]}")
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 1 if counts["MISSED"] else 0


if __name__ == "__main__":
    sys.exit(main())
