"""Second H200 session script: grouped expert GEMMs of published MoE shapes (bf16 bmm, torch._grouped_mm, FP8
row-wise torch._scaled_grouped_mm), skewed token counts per expert, GQA attention, and a sustained bf16 GEMM loop
for clocks and power.

Usage (on a machine with a GPU and PyTorch >= 2.10, nvidia-smi sampling beside it): python3 time_torch_moe_kernels.py
OUT.json. Written for an H200: the device name is fixed below."""
import json, os, sys, time
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import save_json, timed

OUT = sys.argv[1]
dev = torch.device("cuda")
torch.manual_seed(4321)
doc = {"schema": "clustersim-measurements/1", "device": "h200-sxm",
       "host": {"source": "PyTorch on the lent H200, CUDA events, median of 10 after 3 warm-up",
                "torch": torch.__version__, "cuda": str(torch.version.cuda), "gpu": torch.cuda.get_device_name(0)},
       "measurements": [], "grouped_gemm": [], "skewed_grouped_gemm": [], "gqa_attention": [], "errors": []}

def save():
    save_json(doc, OUT)

def err(what, e):
    doc["errors"].append({"what": what, "error": (type(e).__name__ + ": " + str(e))[:300]})

models = [("deepseek-v3", 7168, 2048, 8), ("qwen3-235b-a22b", 4096, 1536, 8), ("qwen3-30b-a3b", 2048, 768, 16),
          ("mixtral-8x7b", 4096, 14336, 2)]
for name, h, f, E in models:
    for op, (k, n) in (("fc1", (h, 2 * f)), ("fc2", (f, h))):
        for m in (32, 64, 128, 256, 512, 1024, 2048, 4096):
            row = {"model": name, "op": op, "experts": E, "m_per_expert": m, "k": k, "n": n}
            try:
                a = torch.randn(E, m, k, device=dev, dtype=torch.bfloat16)
                b = torch.randn(E, k, n, device=dev, dtype=torch.bfloat16)
                t = timed(lambda: torch.bmm(a, b))
                row["bmm_s"] = t[0]
                doc["measurements"].append({"kernel": "gemm", "args": {"m": str(m), "n": str(n), "k": str(k),
                                            "batch": str(E), "dtype": "bf16"}, "seconds": t[0], "repeats": t[2],
                                            "spread": t[1]})
                a2 = a.reshape(E * m, k)
                bt = b.transpose(-2, -1).contiguous().transpose(-2, -1)
                offs = torch.arange(m, E * m + 1, m, device=dev, dtype=torch.int32)
                row["grouped_mm_s"] = timed(lambda: torch._grouped_mm(a2, bt, offs=offs))[0]
                try:
                    a8 = a2.to(torch.float8_e4m3fn)
                    b8 = bt.to(torch.float8_e4m3fn)
                    sa = torch.ones(E * m, device=dev)
                    sb = torch.ones(E, n, device=dev)
                    row["fp8_rowwise_grouped_s"] = timed(lambda: torch._scaled_grouped_mm(
                        a8, b8, sa, sb, offs=offs, out_dtype=torch.bfloat16))[0]
                except Exception as e:
                    err(f"fp8 grouped {name} {op} m={m}", e)
                del a, b, a2, bt
            except Exception as e:
                err(f"grouped {name} {op} m={m}", e)
            doc["grouped_gemm"].append(row)
    save()
print("grouped done", flush=True)

# Skew: the same total tokens over E experts, uniform against a Zipf-like split (what routing imbalance does to one
# grouped GEMM: the busiest expert's tiles form the tail).
for name, h, f, E in models[:2]:
    total = 1024 * E
    for skew in (0.0, 0.5, 1.0, 1.5):
        w = torch.tensor([1.0 / (i + 1) ** skew for i in range(E)])
        counts = (w / w.sum() * total).round().int()
        counts[0] += total - int(counts.sum())
        counts = [max(16, (int(c) // 16) * 16) for c in counts]
        tot = sum(counts)
        try:
            a = torch.randn(tot, h, device=dev, dtype=torch.bfloat16)
            b = torch.randn(E, h, 2 * f, device=dev, dtype=torch.bfloat16).transpose(-2, -1).contiguous().transpose(-2, -1)
            offs = torch.tensor(counts, device=dev, dtype=torch.int32).cumsum(0).int()
            t = timed(lambda: torch._grouped_mm(a, b, offs=offs))
            doc["skewed_grouped_gemm"].append({"model": name, "experts": E, "k": h, "n": 2 * f, "skew": skew,
                                               "counts": counts, "grouped_mm_s": t[0]})
            del a, b
        except Exception as e:
            err(f"skew {name} {skew}", e)
save()
print("skew done", flush=True)

for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
    for seq in (4096, 8192):
        for kvh in (64, 8):
            batch = 16384 // seq
            try:
                q = torch.randn(batch, 64, seq, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn(batch, kvh, seq, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
                v = torch.randn(batch, kvh, seq, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
                with sdpa_kernel(backend):
                    fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                    g = torch.randn_like(out)
                    bwd = timed(lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True))
                doc["gqa_attention"].append({"backend": name, "batch": batch, "heads": 64, "kv_heads": kvh, "seq": seq,
                                             "head_dim": 128, "causal": True, "forward_s": fwd[0], "backward_s": bwd[0]})
                del q, k, v, out, g
            except Exception as e:
                err(f"gqa {name} seq={seq} kv={kvh}", e)
save()
print("gqa done", flush=True)

# Sustained bf16 GEMM for 8 s (nvidia-smi samples clocks and power meanwhile).
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
rates = []
t_end = time.time() + 8
while time.time() < t_end:
    t = timed(lambda: a @ b, warmup=1, repeats=20)
    rates.append(2 * 8192 ** 3 / t[0] / 1e12)
doc["sustained_bf16_8192_tflops"] = rates
z = torch.zeros(8192, 8192, device=dev, dtype=torch.bfloat16)
doc["bf16_8192_zeros_tflops"] = 2 * 8192 ** 3 / timed(lambda: z @ z)[0] / 1e12
save()
print("sustained", [round(r) for r in rates], "zeros", round(doc["bf16_8192_zeros_tflops"]), flush=True)
print("errors", json.dumps(doc["errors"])[:2000])
