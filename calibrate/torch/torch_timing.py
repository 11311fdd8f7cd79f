"""What the GPU timing scripts here share: CUDA-event timing (median of repeats after warm-up), an atomic JSON save,
and one training step of a causal LM under bf16 autocast with a chosen SDPA backend."""
import json
import os

import torch
from torch.nn.attention import sdpa_kernel


def timed(fn, warmup=3, repeats=10):
    """(median seconds, (max - min) / median, repeats) of fn() timed by CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    median = times[len(times) // 2]
    return median, (times[-1] - times[0]) / median, repeats


def save_json(doc, path):
    """Writes doc to path through a temporary file, so a killed run leaves the last whole file."""
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)


def training_step(model, opt, tokens, backend, forward=None):
    """A function running one step: forward and backward under `backend` (kept through backward, where
    recomputation re-runs attention), then the optimizer."""
    forward = forward or model

    def step():
        with sdpa_kernel(backend):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = forward(input_ids=tokens, labels=tokens).loss
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step
