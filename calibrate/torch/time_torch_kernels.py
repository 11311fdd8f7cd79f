"""Times attention (FlashAttention-2 and cuDNN through PyTorch SDPA), batched and grouped expert GEMMs and FP8
GEMMs with tensor-, row- and block-wise scaling on this GPU; writes clustersim measurements plus extra sections.

Usage (on a machine with a GPU and PyTorch >= 2.10): python3 time_torch_kernels.py OUT.json
The attention and batched-GEMM entries are clustersim measurements (clustersim fit / regress read them); the extra
sections (mla_attention, grouped_gemm, fp8_scaling, errors) are kept for the record. Written for an H200: the device
name is fixed below."""
import json
import os
import sys
import traceback

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import save_json, timed

OUT = sys.argv[1]
dev = torch.device("cuda")
torch.manual_seed(1234)
doc = {
    "schema": "clustersim-measurements/1",
    "device": "h200-sxm",
    "host": {
        "source": "PyTorch on the lent H200 (calibrate/torch/time_torch_kernels.py): CUDA events, median of 10 after 3 warm-up",
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "cudnn": str(torch.backends.cudnn.version()),
        "gpu": torch.cuda.get_device_name(0),
    },
    "measurements": [],
    "errors": [],
}


def save():
    save_json(doc, OUT)


def add(kernel, args, t):
    doc["measurements"].append(
        {"kernel": kernel, "args": {k: str(v) for k, v in args.items()}, "seconds": t[0], "repeats": t[2],
         "spread": t[1]})


def error(what, e):
    doc["errors"].append({"what": what, "error": (type(e).__name__ + ": " + str(e))[:300]})


# Attention: hd 128, 32 heads, 16K tokens per call (batch x seq), bf16, causal and not.
backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
for name, backend in backends:
    for causal in (False, True):
        for seq in (512, 1024, 2048, 4096, 8192, 16384):
            for hd in (64, 128):
                heads = 32 if hd == 128 else 64
                batch = max(1, 16384 // seq)
                try:
                    q, k, v = (torch.randn(batch, heads, seq, hd, device=dev, dtype=torch.bfloat16,
                                           requires_grad=True) for _ in range(3))
                    with sdpa_kernel(backend):
                        fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        g = torch.randn_like(out)
                        bwd = timed(lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True))
                    args = {"batch": batch, "heads": heads, "seq_q": seq, "head_dim": hd, "dtype": "bf16"}
                    if causal:
                        args["causal"] = "true"
                    if name == "cudnn":
                        args["cudnn"] = "true"
                    add("attention", args, fwd)
                    add("attention", dict(args, backward="true"), bwd)
                    del q, k, v, out, g
                except Exception as e:  # noqa: BLE001 - record and go on
                    error(f"attention {name} causal={causal} seq={seq} hd={hd}", e)
save()
print("attention done", len(doc["measurements"]), "errors", len(doc["errors"]), flush=True)

# MLA-shaped attention (DeepSeek-V3: 128 heads, q/k head dim 192 = 128 nope + 64 rope, v head dim 128).
doc["mla_attention"] = []
for name, backend in backends + [("efficient", SDPBackend.EFFICIENT_ATTENTION)]:
    for seq in (2048, 4096):
        batch = 16384 // seq
        try:
            q = torch.randn(batch, 128, seq, 192, device=dev, dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn(batch, 128, seq, 192, device=dev, dtype=torch.bfloat16, requires_grad=True)
            v = torch.randn(batch, 128, seq, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
            with sdpa_kernel(backend):
                fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                g = torch.randn_like(out)
                bwd = timed(lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True))
            doc["mla_attention"].append({"backend": name, "batch": batch, "heads": 128, "seq": seq, "qk_head_dim": 192,
                                         "v_head_dim": 128, "causal": True, "forward_s": fwd[0],
                                         "backward_s": bwd[0]})
            del q, k, v, out, g
        except Exception as e:  # noqa: BLE001
            error(f"mla {name} seq={seq}", e)
save()
print("mla done", flush=True)

# Batched expert GEMMs (torch.bmm, E experts of M tokens each) and torch._grouped_mm on the same shapes.
doc["grouped_gemm"] = []
experts = 8
for (kdim, ndim) in ((7168, 4096), (2048, 7168), (4096, 2816)):
    for m in (64, 128, 256, 512, 1024, 2048, 4096):
        try:
            a = torch.randn(experts, m, kdim, device=dev, dtype=torch.bfloat16)
            b = torch.randn(experts, kdim, ndim, device=dev, dtype=torch.bfloat16)
            t = timed(lambda: torch.bmm(a, b))
            add("gemm", {"m": m, "n": ndim, "k": kdim, "batch": experts, "dtype": "bf16"}, t)
            row = {"experts": experts, "m_per_expert": m, "k": kdim, "n": ndim, "bmm_s": t[0]}
            if hasattr(torch, "_grouped_mm"):
                try:
                    a2 = a.reshape(experts * m, kdim)
                    bt = b.transpose(-2, -1).contiguous().transpose(-2, -1)  # column-major per expert
                    offs = torch.arange(m, experts * m + 1, m, device=dev, dtype=torch.int32)
                    row["grouped_mm_s"] = timed(lambda: torch._grouped_mm(a2, bt, offs=offs))[0]
                except Exception as e:  # noqa: BLE001
                    error(f"grouped_mm m={m} k={kdim} n={ndim}", e)
            doc["grouped_gemm"].append(row)
            del a, b
        except Exception as e:  # noqa: BLE001
            error(f"bmm m={m} k={kdim} n={ndim}", e)
save()
print("grouped done", flush=True)

# FP8 GEMMs: bf16 reference, tensor-wise, row-wise and block-wise (1x128 activations, 128x128 weights) scaling.
doc["fp8_scaling"] = []
fp8 = torch.float8_e4m3fn
for (m, n, k) in ((8192, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336), (8192, 8192, 8192),
                  (8192, 28672, 8192), (8192, 8192, 28672), (16384, 7168, 7168), (4096, 2048, 7168)):
    row = {"m": m, "n": n, "k": k}
    try:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        row["bf16_s"] = timed(lambda: a @ w.t())[0]
        add("gemm", {"m": m, "n": n, "k": k, "dtype": "bf16", "trans_b": "true"}, timed(lambda: a @ w.t()))
        a8, w8 = a.to(fp8), w.to(fp8)
        one = torch.tensor(1.0, device=dev)
        row["tensorwise_s"] = timed(lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one,
                                                             out_dtype=torch.bfloat16))[0]
        try:
            sa = torch.ones(m, 1, device=dev)
            sb = torch.ones(1, n, device=dev)
            row["rowwise_s"] = timed(lambda: torch._scaled_mm(a8, w8.t(), scale_a=sa, scale_b=sb,
                                                              out_dtype=torch.bfloat16))[0]
        except Exception as e:  # noqa: BLE001
            error(f"rowwise {m}x{n}x{k}", e)
        try:
            from torch.nn.functional import ScalingType, SwizzleType, scaled_mm  # torch >= 2.10
            sa = torch.ones(k // 128, m, device=dev).t()  # 1x128 blocks, outer-dim-major
            sb = torch.ones(n // 128, k // 128, device=dev).t()  # 128x128 blocks
            row["blockwise_s"] = timed(lambda: scaled_mm(a8, w8.t(), sa, ScalingType.BlockWise1x128, sb,
                                                         ScalingType.BlockWise128x128,
                                                         swizzle_a=SwizzleType.NO_SWIZZLE,
                                                         swizzle_b=SwizzleType.NO_SWIZZLE,
                                                         output_dtype=torch.bfloat16))[0]
        except Exception as e:  # noqa: BLE001
            error(f"blockwise scaled_mm {m}x{n}x{k}", e)
            try:
                sa = torch.ones(k // 128, m, device=dev).t()
                sb = torch.ones(n // 128, k // 128, device=dev).t()
                row["blockwise_s"] = timed(lambda: torch._scaled_mm(a8, w8.t(), scale_a=sa, scale_b=sb,
                                                                    out_dtype=torch.bfloat16))[0]
            except Exception as e2:  # noqa: BLE001
                error(f"blockwise _scaled_mm {m}x{n}x{k}", e2)
        del a, w, a8, w8
    except Exception as e:  # noqa: BLE001
        error(f"fp8 {m}x{n}x{k}", e)
        traceback.print_exc()
    doc["fp8_scaling"].append(row)
    save()
print("fp8 done; errors:", json.dumps(doc["errors"], indent=1)[:3000], flush=True)
