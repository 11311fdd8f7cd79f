"""Whole training steps of Llama-shaped models on one GPU (PyTorch eager, HF transformers' Llama, fp32 master weights
with bf16 autocast, SDPA attention forced to FlashAttention-2, fused AdamW): step time and peak memory, to set the
simulator's single-GPU step beside a measurement.
Usage: python3 time_training_steps.py OUT.json [recompute|cudnn|compile]"""
import json, os, sys, time, traceback
import torch
from torch.nn.attention import SDPBackend

from torch_timing import training_step

OUT = sys.argv[1]
doc = {"host": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}, "runs": [], "errors": []}
try:
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM
    doc["host"]["transformers"] = transformers.__version__
except Exception as e:
    doc["errors"].append({"what": "import transformers", "error": repr(e)[:300]})
    json.dump(doc, open(OUT, "w"), indent=1)
    sys.exit(0)

def save():
    with open(OUT + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(OUT + ".tmp", OUT)

shapes = {
    "llama-1b": dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
                     num_attention_heads=16, num_key_value_heads=16),
    "llama3.2-3b": dict(vocab_size=128256, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                        num_attention_heads=24, num_key_value_heads=8),
}
MODE = sys.argv[2] if len(sys.argv) > 2 else ""
COMPILE = MODE == "compile"
CUDNN = MODE == "cudnn"
RUNS = {
    "recompute": [("llama-1b", 4096, 4, True), ("llama-1b", 4096, 8, True), ("llama3.2-3b", 4096, 4, True)],
    "compile": [("llama-1b", 4096, 1, False), ("llama-1b", 4096, 4, False), ("llama3.2-3b", 4096, 1, False)],
    "": [("llama-1b", 4096, 1, False), ("llama-1b", 4096, 2, False), ("llama-1b", 4096, 4, False),
         ("llama-1b", 4096, 4, True), ("llama-1b", 2048, 8, False), ("llama3.2-3b", 4096, 1, False),
         ("llama3.2-3b", 4096, 2, False), ("llama3.2-3b", 4096, 4, True)],
}
RUNS["cudnn"] = RUNS["compile"]
runs = RUNS[MODE]
torch.manual_seed(0)
for name, seq, micro, ckpt in runs:
    row = {"model": name, "seq": seq, "micro_batch": micro, "full_recompute": ckpt, "compiled": COMPILE,
           "attention_backend": "cudnn or efficient" if COMPILE else "cudnn" if CUDNN else "flash"}
    model = opt = fwd = None
    try:
        cfg = LlamaConfig(max_position_embeddings=seq, tie_word_embeddings=False, **shapes[name])
        cfg._attn_implementation = "sdpa"
        with torch.device("cuda"):
            model = LlamaForCausalLM(cfg)
        row["parameters"] = sum(p.numel() for p in model.parameters())
        if ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
        fwd = torch.compile(model) if COMPILE else model
        # Compiled, HF passes an explicit causal mask, which FA2 cannot take: SDPA chooses among the others.
        backend = ([SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION] if COMPILE else
                   SDPBackend.CUDNN_ATTENTION if CUDNN else SDPBackend.FLASH_ATTENTION)
        x = torch.randint(0, cfg.vocab_size, (micro, seq), device="cuda")

        step = training_step(model, opt, x, backend, fwd)

        for _ in range(3):
            step()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(8):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); step(); e.record(); e.synchronize()
            times.append(s.elapsed_time(e) / 1e3)
        times.sort()
        row["step_s"] = times[len(times) // 2]
        row["step_min_s"], row["step_max_s"] = times[0], times[-1]
        row["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        row["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
        row["tokens_per_s"] = micro * seq / row["step_s"]
        print(name, seq, micro, ckpt, "%.1f ms" % (row["step_s"] * 1e3), "%.1f GiB" % (row["peak_allocated_bytes"] / 2**30),
              "%.0f tok/s" % row["tokens_per_s"], flush=True)
    except Exception as e:
        doc["errors"].append({"what": f"{name} seq={seq} micro={micro} ckpt={ckpt}",
                              "error": (repr(e) + " " + traceback.format_exc()[-600:])[:900]})
        print("error", name, repr(e)[:200], flush=True)
    doc["runs"].append(row)
    model = opt = fwd = None
    if COMPILE:
        torch._dynamo.reset()
    torch.cuda.empty_cache()
    save()
print("errors", json.dumps(doc["errors"])[:1500])
