#!/usr/bin/env python3
"""The device check's attention step (scripts/device-check.sh): the sm_90a flash-attention forward kernel
(isatune gen attention --target sm_90a) run on a GPU through `isatune run` (PTX, TMA tensor maps encoded by the
driver) on random inputs made by PyTorch, compared with torch.nn.functional.scaled_dot_product_attention in
float32 (GQA by repeating K/V heads, causal aligned bottom-right through an explicit mask) and with the float32
log-sum-exp of the scores. Prints one JSON object; exit 1 when an error is beyond the sweep's tolerances (o
within 2e-2 (bf16) / 4e-3 (f16) of the row norm, LSE within 1e-3), 2 when something could not run.

  scripts/device_check_attention.py ISATUNE [--device cuda:0] [--dtype bf16] [--head-dim 128] [--causal]
      [--problem B=2,Hq=8,Hkv=2,Sq=1000,Sk=1100] [--param consumers=2,block_n=128,stages=2,overlap=1,reg_split=24/240]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("isatune")
    ap.add_argument("--device", default="cuda:0", help="isatune's device (emu:sm_90a runs the same path on the CPU)")
    ap.add_argument("--torch-device", default=None, help="where torch makes the inputs and the reference "
                    "(default: the device when it is cuda:N, else cpu)")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--head-dim", type=int, default=128, choices=[64, 128])
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--layout", default="bshd", choices=["bshd", "bhsd"])
    ap.add_argument("--problem", default="B=2,Hq=8,Hkv=2,Sq=1000,Sk=1100")
    ap.add_argument("--param", default="consumers=2,block_n=128,stages=2,overlap=1,reg_split=24/240")
    a = ap.parse_args()
    import torch  # the caller checked that torch and a GPU are present

    prob = {k: int(v) for k, v in (kv.split("=") for kv in a.problem.split(","))}
    params = dict(kv.split("=") for kv in a.param.split(","))
    B, Hq, Hkv, Sq, Sk, D = prob["B"], prob["Hq"], prob.get("Hkv", prob["Hq"]), prob["Sq"], prob.get("Sk", prob["Sq"]), a.head_dim
    consumers, block_n, stages = int(params["consumers"]), int(params["block_n"]), int(params["stages"])
    block_m = 64 * consumers
    tdt = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    sig = f"dtype={a.dtype},head_dim={D},mask={'causal' if a.causal else 'none'},layout={a.layout},lse=yes"
    work = tempfile.mkdtemp(prefix="attn-check.")
    ptx = os.path.join(work, "attn.ptx")
    g = subprocess.run([a.isatune, "gen", "attention", "--target", "sm_90a", "--sig", sig, "--param", a.param, "-o", ptx],
                       capture_output=True, text=True)
    if g.returncode != 0:
        print(json.dumps({"error": "isatune gen failed", "stderr": g.stderr[-2000:]}))
        return 2

    torch.manual_seed(15)
    dev = torch.device(a.torch_device or (a.device if a.device.startswith("cuda") else "cpu"))
    # [B][S][H][D] or [B][H][S][D], tight (the sweeps cover padded rows on the emulator)
    def make(h, s, lo, hi):
        shape = (B, s, h, D) if a.layout == "bshd" else (B, h, s, D)
        return (torch.rand(shape, device=dev) * (hi - lo) + lo).to(tdt)
    q, k, v = make(Hq, Sq, -2, 2), make(Hkv, Sk, -2, 2), make(Hkv, Sk, -1, 1)
    scale = 1.0 / math.sqrt(D)
    files = {}
    for name, t in (("q", q), ("k", k), ("v", v)):
        files[name] = os.path.join(work, name + ".bin")
        t.cpu().contiguous().view(torch.uint8).numpy().tofile(files[name])
    out_o, out_l = os.path.join(work, "o.bin"), os.path.join(work, "lse.bin")

    es = 2
    def strides(h, s):  # elements: batch, seq, head
        return (s * h * D, h * D, D) if a.layout == "bshd" else (h * s * D, D, s * D)
    qs, ks = strides(Hq, Sq), strides(Hkv, Sk)
    group = Hq // Hkv
    magic = ((1 << 31) + group - 1) // group
    u32 = {"sq": Sq, "sk": Sk, "group_magic": magic,
           "q_sb": qs[0] * es, "q_ss": qs[1] * es, "q_sh": qs[2] * es,
           "k_sb": ks[0] * es, "k_ss": ks[1] * es, "k_sh": ks[2] * es,
           "v_sb": ks[0] * es, "v_ss": ks[1] * es, "v_sh": ks[2] * es,
           "o_sb": qs[0] * es, "o_ss": qs[1] * es, "o_sh": qs[2] * es,
           "l_sb": Hq * Sq * 4, "l_sh": Sq * 4,
           "nrec_q": q.numel() * es, "nrec_k": k.numel() * es, "nrec_v": v.numel() * es,
           "nrec_o": q.numel() * es, "nrec_l": B * Hq * Sq * 4}
    def tmap(buf, h, s, st, rows):  # {d, seq, head, batch}, 128B swizzle, rows past the sequence read zero
        return (f"tmap:{buf}:{a.dtype}:{D}x{s}x{h}x{B}:box=64x{rows}x1x1:"
                f"strides={st[1] * es}x{st[2] * es}x{st[0] * es}:swizzle=128B")
    args = [f"tmQ={tmap('q', Hq, Sq, qs, block_m)}", f"tmK={tmap('k', Hkv, Sk, ks, block_n)}",
            f"tmV={tmap('v', Hkv, Sk, ks, block_n)}",
            f"q=buf:u16:{q.numel()}:file={files['q']}", f"k=buf:u16:{k.numel()}:file={files['k']}",
            f"v=buf:u16:{v.numel()}:file={files['v']}", f"o=buf:u16:{q.numel()}:zero:out={out_o}",
            f"lse=buf:f32:{B * Hq * Sq}:zero:out={out_l}"]
    args += [f"{n}=u32:{x}" for n, x in u32.items()]
    args.append(f"scale_log2=f32:{scale * 1.4426950408889634!r}")
    shared = block_m * D * 2 + stages * 2 * block_n * D * 2 + 8 * (1 + 3 * stages) + 1024
    cmd = [a.isatune, "run", ptx, "--device", a.device, "--grid", f"{(Sq + block_m - 1) // block_m},{Hq},{B}",
           "--block", str(128 * (1 + consumers)), "--dynamic-lds", str(shared), "--json"]
    for x in args:
        cmd += ["--arg", x]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(json.dumps({"error": "isatune run failed", "exit": r.returncode, "stderr": r.stderr[-2000:],
                          "stdout": r.stdout[-2000:]}))
        return 2

    import numpy as np
    o = torch.from_numpy(np.fromfile(out_o, dtype=np.uint16).astype(np.int16)).view(tdt).reshape(q.shape).to(dev)
    lse = torch.from_numpy(np.fromfile(out_l, dtype=np.float32)).reshape(B, Hq, Sq).to(dev)
    # the reference: float32 SDPA on [B][H][S][D]
    def bhsd(t):
        return (t.permute(0, 2, 1, 3) if a.layout == "bshd" else t).float()
    qf, kf, vf = bhsd(q), bhsd(k).repeat_interleave(group, dim=1), bhsd(v).repeat_interleave(group, dim=1)
    mask = None
    if a.causal:  # bottom-right: query i sees keys j <= i + Sk - Sq
        i = torch.arange(Sq, device=dev)[:, None]
        j = torch.arange(Sk, device=dev)[None, :]
        mask = j <= i + (Sk - Sq)
    scores = (qf @ kf.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    ref_lse = torch.logsumexp(scores, dim=-1)
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is not None:
        reference = "torch.nn.functional.scaled_dot_product_attention (float32)"
        ref = sdpa(qf, kf, vf, attn_mask=mask, scale=scale)
    else:  # torch < 2.0 (the CPU test machine): the same in plain operations
        reference = "softmax(q k^T * scale) v in torch float32 (this torch has no scaled_dot_product_attention)"
        ref = torch.softmax(scores, dim=-1) @ vf
    got = bhsd(o)
    row_norm = ref.abs().amax(dim=-1, keepdim=True).clamp_min(1e-30)
    o_err = ((got - ref).abs() / row_norm).max().item()
    lse_err = (lse - ref_lse).abs().max().item()
    tol = 2e-2 if a.dtype == "bf16" else 4e-3
    ok = o_err <= tol and lse_err <= 1e-3
    try:
        run_json = json.loads(r.stdout)
    except ValueError:
        run_json = None
    print(json.dumps({"signature": sig, "params": a.param, "problem": a.problem, "o_error_row_norm": o_err,
                      "o_tolerance": tol, "lse_error": lse_err, "lse_tolerance": 1e-3, "ok": ok,
                      "reference": reference,
                      "torch": torch.__version__, "torch_device": str(dev),
                      "gpu": torch.cuda.get_device_name(dev) if dev.type == "cuda" else None,
                      "isatune_run": run_json}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
