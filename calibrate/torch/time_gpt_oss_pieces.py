"""Fifth H200 session script: the pieces of a GPT-OSS-120B layer the simulator prices as standard, to find where its
+61% on Megatron-Bridge's row comes from: causal attention with heads of 64 (cuDNN SDPA), 128-token sliding-window
attention (FlexAttention, compiled), the grouped SwiGLU experts at hidden 2,880 (16 experts of 1,024 tokens, one EP-8
rank of top-4 routing), and the QKV and output projections, each forward and backward.
Not yet run: written on 2026-12-04 after the GPT-OSS row missed, when no GPU was lent again; a later session with the
H200 runs it (about a minute) and sets the results beside `clustersim predict` for the same shapes.
Usage: python3 time_gpt_oss_pieces.py OUT.json"""
import sys
import traceback

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_timing import save_json, timed

OUT = sys.argv[1]
dev = torch.device("cuda")
bf16 = torch.bfloat16
doc = {"schema": "clustersim-gpt-oss-pieces/1", "device": "h200-sxm",
       "host": {"source": "calibrate/torch/time_gpt_oss_pieces.py on the lent H200; CUDA events, median of 10 after 3",
                "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}, "pieces": {}, "errors": []}
S, H, HEADS, KV, D, F_EXP, EXPERTS, TOKENS = 4096, 2880, 64, 8, 64, 2880, 16, 1024


def fwd_bwd(name, fn, inputs):
    try:
        f = timed(lambda: fn(*inputs))[0]
        out = fn(*inputs)
        g = torch.randn_like(out)
        params = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
        b = timed(lambda: torch.autograd.grad(out, params, g, retain_graph=True))[0]
        doc["pieces"][name] = {"forward_s": f, "backward_s": b}
        print(name, f, b, flush=True)
    except Exception as e:  # noqa: BLE001
        doc["errors"].append({"what": name, "error": (type(e).__name__ + ": " + str(e))[:400]})
        traceback.print_exc()
    save_json(doc, OUT)


def leaf(*shape, scale=1.0):
    return (torch.randn(*shape, device=dev, dtype=bf16) * scale).requires_grad_()


q, k, v = leaf(1, HEADS, S, D), leaf(1, HEADS, S, D), leaf(1, HEADS, S, D)
for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
    def causal(q, k, v, backend=backend):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    fwd_bwd(f"attention_causal_head64_{name}", causal, (q, k, v))
try:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def window_mask(b, h, qi, ki):
        return (qi >= ki) & (qi - ki < 128)

    mask = create_block_mask(window_mask, None, None, S, S, device="cuda")
    flex = torch.compile(flex_attention)
    fwd_bwd("attention_window128_flex", lambda q, k, v: flex(q, k, v, block_mask=mask), (q, k, v))
    causal_mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, S, S, device="cuda")
    fwd_bwd("attention_causal_flex", lambda q, k, v: flex(q, k, v, block_mask=causal_mask), (q, k, v))
except Exception as e:  # noqa: BLE001
    doc["errors"].append({"what": "flex", "error": (type(e).__name__ + ": " + str(e))[:400]})
    traceback.print_exc()

x = leaf(S, H)
wqkv, wo = leaf((HEADS + 2 * KV) * D, H, scale=0.02), leaf(H, HEADS * D, scale=0.02)
fwd_bwd("qkv_projection", lambda x, w: x @ w.t(), (x, wqkv))
o = leaf(S, HEADS * D)
fwd_bwd("out_projection", lambda o, w: o @ w.t(), (o, wo))

rows = leaf(EXPERTS * TOKENS, H)
w1 = leaf(EXPERTS, 2 * F_EXP, H, scale=0.02).transpose(-2, -1)
w2 = leaf(EXPERTS, H, F_EXP, scale=0.02).transpose(-2, -1)
offs = torch.arange(TOKENS, EXPERTS * TOKENS + 1, TOKENS, device=dev, dtype=torch.int32)


def experts(rows, w1, w2):
    gate, up = torch._grouped_mm(rows, w1, offs=offs).chunk(2, dim=-1)
    return torch._grouped_mm(F.silu(gate) * up, w2, offs=offs)


fwd_bwd("experts_grouped_h2880", experts, (rows, w1, w2))
print("done; errors:", len(doc["errors"]), flush=True)
