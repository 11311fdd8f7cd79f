"""Third H200 session script: the pieces of frontier layers that the simulator prices one by one, each timed alone
and as the whole block, forward and backward:
- an MoE layer's local work on one EP rank (router GEMM and top-k, permute, grouped SwiGLU experts, weighted unpermute,
  DeepSeek-V3's shared expert) in DeepSeek-V3, Qwen3-235B-A22B and Qwen3-30B-A3B shapes at two EP sizes;
- multi-head latent attention (DeepSeek-V3 and DeepSeek-V2-Lite): the down and up projections, their RMSNorms, RoPE,
  cuDNN attention at head sizes 192/128 and the output projection;
- FP8 quantisation passes (amax, scale, cast; the transposed copy; 1x128 and 128x128 block scales).
The expert dispatch itself is communication and is not here (one GPU). Usage: python3 time_frontier_layers.py OUT.json"""
import sys
import traceback

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import save_json, timed

OUT = sys.argv[1]
dev = torch.device("cuda")
bf16 = torch.bfloat16
torch.manual_seed(20261204)
doc = {"schema": "clustersim-frontier-layers/1", "device": "h200-sxm",
       "host": {"source": "calibrate/torch/time_frontier_layers.py on the lent H200; CUDA events, median of 10 after 3",
                "torch": torch.__version__, "cuda": str(torch.version.cuda), "gpu": torch.cuda.get_device_name(0)},
       "moe_layer": [], "mla_block": [], "fp8_quantise": [], "errors": []}


def error(what, e):
    doc["errors"].append({"what": what, "error": (type(e).__name__ + ": " + str(e))[:300]})
    print("error", what, repr(e)[:200], flush=True)
    traceback.print_exc()


def fwd_bwd(fn, inputs):
    """(forward seconds, backward seconds) of fn(*inputs), the backward from a random output gradient."""
    fwd = timed(lambda: fn(*inputs))[0]
    out = fn(*inputs)
    g = torch.randn_like(out)
    params = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    bwd = timed(lambda: torch.autograd.grad(out, params, g, retain_graph=True))[0]
    return fwd, bwd


def leaf(*shape, scale=0.02):
    return (torch.randn(*shape, device=dev, dtype=bf16) * scale).requires_grad_()


def swiglu(h):
    gate, up = h.chunk(2, dim=-1)
    return F.silu(gate) * up


# ---- MoE layer, one EP rank: T tokens routed top-k over E experts; the rank's E/ep experts receive T*k rows. ----
MOE = [("deepseek-v3", 7168, 2048, 256, 8, 1, "sigmoid"), ("qwen3-235b-a22b", 4096, 1536, 128, 8, 0, "softmax"),
       ("qwen3-30b-a3b", 2048, 768, 128, 8, 0, "softmax")]
T = 4096
for name, h, f, E, k, shared, score in MOE:
    for ep in (8, 32):
        local = E // ep
        rows = T * k
        row = {"model": name, "hidden": h, "moe_ffn": f, "experts": E, "top_k": k, "ep": ep, "tokens": T,
               "local_experts": local, "rows": rows, "shared_experts": shared}
        try:
            x = leaf(T, h, scale=1.0)
            wg = leaf(h, E)

            def router(x, wg):
                logits = (x @ wg).float()
                s = torch.sigmoid(logits) if score == "sigmoid" else torch.softmax(logits, dim=-1)
                return torch.topk(s, k, dim=-1).values

            row["router_s"] = fwd_bwd(router, (x, wg))
            # Routes spread evenly over the local experts (what balanced routing leaves each rank after dispatch).
            expert = torch.randperm(rows, device=dev) % local
            order = torch.argsort(expert, stable=True)
            src = order // k
            probs = torch.rand(rows, 1, device=dev, dtype=bf16)
            counts = torch.bincount(expert, minlength=local)
            offs = counts.cumsum(0).to(torch.int32)

            def permute(x):
                return x.index_select(0, src)

            row["permute_s"] = fwd_bwd(permute, (x,))
            y = leaf(rows, h, scale=1.0)

            def unpermute(y):
                return torch.zeros(T, h, device=dev, dtype=bf16).index_add(0, src, y * probs)

            row["unpermute_s"] = fwd_bwd(unpermute, (y,))
            w1 = leaf(local, 2 * f, h).transpose(-2, -1)  # (E, h, 2f), column-major as grouped_mm wants
            w2 = leaf(local, h, f).transpose(-2, -1)  # (E, f, h)

            def experts(y, w1, w2):
                hidden = torch._grouped_mm(y, w1, offs=offs)
                return torch._grouped_mm(swiglu(hidden), w2, offs=offs)

            row["experts_s"] = fwd_bwd(experts, (y, w1, w2))
            row["expert_gemm_flop"] = 2 * 3 * rows * h * f
            if shared:
                s1 = leaf(h, 2 * f * shared)
                s2 = leaf(f * shared, h)
                row["shared_expert_s"] = fwd_bwd(lambda x, s1, s2: swiglu(x @ s1) @ s2, (x, s1, s2))

            def layer(x, wg, w1, w2):
                out = unpermute(experts(permute(x), w1, w2))
                top = router(x, wg)  # the router's output feeds the weights in a real layer; here its work only
                out = out + top.sum() * 0
                return out + swiglu(x @ s1) @ s2 if shared else out

            row["layer_s"] = fwd_bwd(layer, (x, wg, w1, w2))
            print(name, "ep", ep, {key: v for key, v in row.items() if key.endswith("_s")}, flush=True)
            del x, wg, y, w1, w2
        except Exception as e:  # noqa: BLE001
            error(f"moe {name} ep={ep}", e)
        doc["moe_layer"].append(row)
        torch.cuda.empty_cache()
        save_json(doc, OUT)


# ---- Multi-head latent attention, one TP rank (heads / tp; the down projections are replicated). ----
def rms(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


def rope(x):
    half = x.shape[-1] // 2
    pos = torch.arange(x.shape[-3], device=dev, dtype=torch.float32)
    freq = pos[:, None] / (10000 ** (torch.arange(half, device=dev) / half))[None, :]
    c, s = freq.cos().to(x.dtype)[:, None, :], freq.sin().to(x.dtype)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * c - b * s, a * s + b * c), dim=-1)


MLA = [("deepseek-v3", 7168, 1536, 512, 128, 128, 64, 128), ("deepseek-v2-lite", 2048, 0, 512, 16, 128, 64, 128)]
for name, h, qr, kvr, heads_all, nope, rp, vd in MLA:
    for tp, seq in ((1, 4096), (8, 4096), (1, 8192)):
        heads = heads_all // tp
        if heads == 0 or (tp > 1 and heads_all < 64):
            continue
        row = {"model": name, "hidden": h, "q_lora_rank": qr, "kv_lora_rank": kvr, "heads": heads, "tp": tp,
               "seq": seq, "qk_head_dim": nope + rp, "v_head_dim": vd}
        try:
            x = leaf(1, seq, h, scale=1.0)
            wq_a = leaf(h, qr) if qr else None
            nq = leaf(qr) if qr else None
            wq_b = leaf(qr if qr else h, heads * (nope + rp))
            wkv_a = leaf(h, kvr + rp)
            nkv = leaf(kvr)
            wkv_b = leaf(kvr, heads * (nope + vd))
            wo = leaf(heads * vd, h)

            def block(x, *ws):
                q_in = rms(x @ wq_a, nq) if qr else x
                q = (q_in @ wq_b).view(1, seq, heads, nope + rp)
                q = torch.cat((q[..., :nope], rope(q[..., nope:])), dim=-1)
                kv_a = x @ wkv_a
                c, kr = kv_a[..., :kvr], kv_a[..., kvr:]
                kv = (rms(c, nkv) @ wkv_b).view(1, seq, heads, nope + vd)
                kr = rope(kr.view(1, seq, 1, rp)).expand(1, seq, heads, rp)
                key = torch.cat((kv[..., :nope], kr), dim=-1)
                v = kv[..., nope:]
                qh, kh, vh = q.transpose(1, 2), key.transpose(1, 2), v.transpose(1, 2)
                if row.get("layout") == "contiguous":
                    qh, kh, vh = qh.contiguous(), kh.contiguous(), vh.contiguous()
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    o = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
                return o.transpose(1, 2).reshape(1, seq, heads * vd) @ wo

            ws = tuple(w for w in (wq_a, nq, wq_b, wkv_a, nkv, wkv_b, wo) if w is not None)
            row["layout"] = "bshd"
            try:
                row["block_s"] = fwd_bwd(block, (x,) + ws)
            except Exception as e:  # noqa: BLE001  cuDNN may refuse strided heads: copy them to bhsd
                error(f"mla {name} tp={tp} seq={seq} bshd", e)
                row["layout"] = "contiguous"
                row["block_s"] = fwd_bwd(block, (x,) + ws)
            q = leaf(1, heads, seq, nope + rp, scale=1.0)
            kk = leaf(1, heads, seq, nope + rp, scale=1.0)
            v = leaf(1, heads, seq, vd, scale=1.0)
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                row["attention_s"] = fwd_bwd(lambda q, kk, v: F.scaled_dot_product_attention(q, kk, v, is_causal=True),
                                             (q, kk, v))
            print(name, "tp", tp, "seq", seq, row["block_s"], row["attention_s"], flush=True)
            del x, q, kk, v
        except Exception as e:  # noqa: BLE001
            error(f"mla {name} tp={tp} seq={seq}", e)
        doc["mla_block"].append(row)
        torch.cuda.empty_cache()
        save_json(doc, OUT)

# ---- FP8 quantisation passes on activation-sized tensors. ----
fp8 = torch.float8_e4m3fn
def tensorwise(a):
    scale = 448.0 / a.abs().amax().float().clamp(min=1e-12)
    return (a.float() * scale).to(fp8)


def block_1x128(a):
    b = a.view(a.shape[0], a.shape[1] // 128, 128).float()
    s = 448.0 / b.abs().amax(-1, keepdim=True).clamp(min=1e-12)
    return (b * s).to(fp8), s


def block_128x128(a):
    b = a.view(a.shape[0] // 128, 128, a.shape[1] // 128, 128).float()
    s = 448.0 / b.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-12)
    return (b * s).to(fp8), s


# Compiled once with dynamic shapes (Triton kernels stand in for Transformer Engine's fused quantisers).
QUANTISERS = {"tensorwise_cast": tensorwise, "tensorwise_cast_transpose": lambda a: tensorwise(a).t().contiguous(),
              "blockwise_1x128": block_1x128, "blockwise_128x128": block_128x128}
QUANTISERS = {name: torch.compile(fn, dynamic=True) for name, fn in QUANTISERS.items()}
for (m, n) in ((8192, 4096), (16384, 7168), (8192, 28672)):
    row = {"rows": m, "cols": n, "bytes_bf16": 2 * m * n}
    try:
        a = torch.randn(m, n, device=dev, dtype=bf16)
        row["amax_eager_s"] = timed(lambda: a.abs().amax())[0]
        row["tensorwise_cast_eager_s"] = timed(lambda: tensorwise(a))[0]
        for qname, fn in QUANTISERS.items():
            try:
                row[qname + "_compiled_s"] = timed(lambda: fn(a))[0]
            except Exception as e:  # noqa: BLE001
                error(f"quantise {qname} {m}x{n}", e)
        row["copy_s"] = timed(lambda: a.clone())[0]
        print("fp8 quantise", m, n, row, flush=True)
        del a
    except Exception as e:  # noqa: BLE001
        error(f"quantise {m}x{n}", e)
    doc["fp8_quantise"].append(row)
    save_json(doc, OUT)

# ---- Llama 3 8B decoder layers as torchtitan writes them (eager RMSNorm, complex RoPE, SDPA FlashAttention-2,
# SwiGLU; bf16 weights as FSDP2's mixed precision computes), and the 128,256-entry output layer with cross-entropy:
# the compute of one torchtitan step without its communication. ----
doc["llama_layers"] = []


def rope_complex(x, freqs):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs).flatten(-2).type_as(x)


def llama_layer(x, wqkv, wo, w13, w2, n1, n2, freqs, heads, kv_heads, hd):
    b, s, h = x.shape
    y = rms(x, n1)
    qkv = y @ wqkv
    q, k, v = qkv.split([heads * hd, kv_heads * hd, kv_heads * hd], dim=-1)
    q = rope_complex(q.view(b, s, heads, hd), freqs)
    k = rope_complex(k.view(b, s, kv_heads, hd), freqs)
    v = v.view(b, s, kv_heads, hd)
    k = k.repeat_interleave(heads // kv_heads, dim=2)
    v = v.repeat_interleave(heads // kv_heads, dim=2)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    x = x + o.transpose(1, 2).reshape(b, s, heads * hd) @ wo
    return x + swiglu(rms(x, n2) @ w13) @ w2


for batch, seq, layers in ((2, 8192, 4), (1, 8192, 4), (1, 4096, 4)):
    h, f, heads, kvh, hd, vocab = 4096, 14336, 32, 8, 128, 128256
    row = {"model": "llama3-8b", "batch": batch, "seq": seq, "layers": layers}
    try:
        freqs = torch.polar(torch.ones(seq, hd // 2, device=dev),
                            torch.arange(seq, device=dev)[:, None].float() /
                            (500000.0 ** (torch.arange(0, hd, 2, device=dev).float() / hd))[None, :])[None, :, None, :]
        ws = [(leaf(h, (heads + 2 * kvh) * hd), leaf(heads * hd, h), leaf(h, 2 * f), leaf(f, h), leaf(h), leaf(h))
              for _ in range(layers)]
        x = leaf(batch, seq, h, scale=1.0)

        def stack(x, *flat):
            for i in range(layers):
                x = llama_layer(x, *flat[6 * i:6 * i + 6], freqs, heads, kvh, hd)
            return x

        flat = tuple(t for group in ws for t in group)
        row["layers_s"] = fwd_bwd(stack, (x,) + flat)
        wout = leaf(h, vocab)
        nf = leaf(h)
        labels = torch.randint(0, vocab, (batch * seq,), device=dev)

        def head(x, nf, wout):
            logits = (rms(x, nf) @ wout).float()
            return F.cross_entropy(logits.view(-1, vocab), labels)

        fwd = timed(lambda: head(x, nf, wout))[0]
        loss = head(x, nf, wout)
        bwd = timed(lambda: torch.autograd.grad(loss, (x, nf, wout), retain_graph=True))[0]
        row["head_s"] = (fwd, bwd)
        row["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        print("llama3-8b", batch, seq, row, flush=True)
        del ws, x, flat, wout, loss
    except Exception as e:  # noqa: BLE001
        error(f"llama3-8b layers batch={batch} seq={seq}", e)
    doc["llama_layers"].append(row)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    save_json(doc, OUT)
print("done; errors:", len(doc["errors"]), flush=True)
