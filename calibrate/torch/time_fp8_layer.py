"""Fourth H200 session script: one Llama 3 8B and one Llama 3 70B (TP 8 shard) decoder layer, forward and backward, in
bf16 and with FP8 linear layers under per-tensor current scaling (Megatron-Bridge's FP8-CS recipe: an amax pass and a
cast for each GEMM input and output gradient, E4M3 forward and E5M2 gradients, the weights' FP8 copies in both layouts
made once a step, attention and norms in bf16), so the simulator's FP8 step can be set beside a measured one.
Usage: python3 time_fp8_layer.py OUT.json"""
import sys
import traceback

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import save_json, timed

OUT = sys.argv[1]
dev = torch.device("cuda")
bf16, e4m3, e5m2 = torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2
torch.manual_seed(7)
doc = {"schema": "clustersim-fp8-layer/1", "device": "h200-sxm",
       "host": {"source": "calibrate/torch/time_fp8_layer.py on the lent H200; CUDA events, median of 10 after 3",
                "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)},
       "layers": [], "errors": []}


def eager_quantise(t, dtype):
    """Per-tensor current scaling: (FP8 tensor, its inverse scale as a 0-d fp32 tensor)."""
    amax = t.abs().amax().float().clamp(min=1e-12)
    scale = torch.finfo(dtype).max / amax
    return (t.float() * scale).to(dtype), scale.reciprocal()


# "compiled": the amax and the scaled cast fused by torch.compile (Triton), nearer Transformer Engine's fused casts.
COMPILED = len(sys.argv) > 2 and sys.argv[2] == "compiled"
quantise = torch.compile(eager_quantise, dynamic=True) if COMPILED else eager_quantise
doc["quantiser"] = "torch.compile (Triton)" if COMPILED else "eager"


class Fp8Linear(torch.autograd.Function):
    """y = x W^T with x and the output gradient quantised each call, W's FP8 copies given (made once a step)."""

    @staticmethod
    def forward(ctx, x, w, w8, w8_kn, sw):
        x2 = x.reshape(-1, x.shape[-1])
        x8, sx = quantise(x2, e4m3)
        y = torch._scaled_mm(x8, w8.t(), scale_a=sx, scale_b=sw, out_dtype=bf16)
        ctx.save_for_backward(x8.t().contiguous(), sx, w8_kn, sw)
        ctx.shape = x.shape
        return y.view(*x.shape[:-1], y.shape[-1])

    @staticmethod
    def backward(ctx, gy):
        x8t, sx, w8_kn, sw = ctx.saved_tensors
        g2 = gy.reshape(-1, gy.shape[-1])
        g8, sg = quantise(g2, e5m2)
        dx = torch._scaled_mm(g8, w8_kn.t(), scale_a=sg, scale_b=sw, out_dtype=bf16)
        dw = torch._scaled_mm(g8.t().contiguous(), x8t.t(), scale_a=sg, scale_b=sx, out_dtype=bf16)
        return dx.view(ctx.shape), dw, None, None, None


CACHE = {}


def rms(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


def layer(x, ws, heads, kv, hd, fp8):
    wqkv, wo, w13, w2, n1, n2 = ws
    b, s, h = x.shape
    qkv = lin(rms(x, n1), wqkv, fp8)
    q, k, v = qkv.split([heads * hd, kv * hd, kv * hd], dim=-1)
    q = q.view(b, s, heads, hd).transpose(1, 2)
    k = k.view(b, s, kv, hd).repeat_interleave(heads // kv, dim=2).transpose(1, 2)
    v = v.view(b, s, kv, hd).repeat_interleave(heads // kv, dim=2).transpose(1, 2)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    x = x + lin(o.transpose(1, 2).reshape(b, s, heads * hd), wo, fp8)
    gate, up = lin(rms(x, n2), w13, fp8).chunk(2, dim=-1)
    return x + lin(F.silu(gate) * up, w2, fp8)


def lin(x, w, fp8):
    return Fp8Linear.apply(x, w, *CACHE[id(w)]) if fp8 else x @ w.t()


# (name, hidden, ffn per rank, heads per rank, kv heads per rank, tokens)
SHAPES = [("llama3-8b", 4096, 14336, 32, 8, 8192), ("llama3-70b-tp8", 8192, 28672 // 8, 64 // 8, 1, 8192)]
for name, h, f, heads, kv, tokens in SHAPES:
    hd = 128
    row = {"model": name, "hidden": h, "ffn": f, "heads": heads, "kv_heads": kv, "tokens": tokens}
    try:
        def w(*shape):
            return (torch.randn(*shape, device=dev, dtype=bf16) * 0.02).requires_grad_()

        # For the TP shard the row-parallel GEMMs take heads x 128 (attention out) and ffn (MLP down) inputs.
        ws = (w((heads + 2 * kv) * hd, h), w(h, heads * hd), w(2 * f, h), w(h, f),
              torch.ones(h, device=dev, dtype=bf16, requires_grad=True),
              torch.ones(h, device=dev, dtype=bf16, requires_grad=True))
        for p in ws[:4]:
            w8, sw = eager_quantise(p.detach(), e4m3)
            CACHE[id(p)] = (w8, w8.t().contiguous(), sw)
        x = torch.randn(1, tokens, h, device=dev, dtype=bf16, requires_grad=True)
        for fp8 in (False, True):
            key = "fp8_tensorwise" if fp8 else "bf16"
            fwd = timed(lambda: layer(x, ws, heads, kv, hd, fp8))[0]
            out = layer(x, ws, heads, kv, hd, fp8)
            g = torch.randn_like(out)
            bwd = timed(lambda: torch.autograd.grad(out, (x,) + ws, g, retain_graph=True))[0]
            row[key] = {"forward_s": fwd, "backward_s": bwd}
        row["speedup"] = (row["bf16"]["forward_s"] + row["bf16"]["backward_s"]) / (
            row["fp8_tensorwise"]["forward_s"] + row["fp8_tensorwise"]["backward_s"])
        print(name, row, flush=True)
        del x, ws
        CACHE.clear()
    except Exception as e:  # noqa: BLE001
        doc["errors"].append({"what": name, "error": (type(e).__name__ + ": " + str(e))[:400]})
        traceback.print_exc()
    doc["layers"].append(row)
    torch.cuda.empty_cache()
    save_json(doc, OUT)
print("done; errors:", len(doc["errors"]), flush=True)
