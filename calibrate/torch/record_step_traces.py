"""One training step of the Llama-shaped 1B model (as time_training_steps.py) under torch.profiler (a Kineto trace
with shapes) and, separately, under PyTorch's ExecutionTraceObserver; both gzipped. Usage: python3 record_step_traces.py OUTDIR"""
import gzip, json, os, shutil, sys, traceback
import torch
from torch.nn.attention import SDPBackend
from transformers import LlamaConfig, LlamaForCausalLM

from torch_timing import training_step

out = sys.argv[1]
errors = []
cfg = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
                  num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=4096,
                  tie_word_embeddings=False)
cfg._attn_implementation = "sdpa"
torch.manual_seed(0)
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg)
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
x = torch.randint(0, cfg.vocab_size, (1, 4096), device="cuda")

step = training_step(model, opt, x, SDPBackend.FLASH_ATTENTION)

for _ in range(3):
    step()
torch.cuda.synchronize()

def gz(src, dst):
    with open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(src)
    print(dst, os.path.getsize(dst), flush=True)

try:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        step()
        torch.cuda.synchronize()
    prof.export_chrome_trace("/tmp/kineto.json")
    gz("/tmp/kineto.json", os.path.join(out, "hf-llama-1b-step-kineto.json.gz"))
except Exception as e:
    errors.append("kineto: " + repr(e) + traceback.format_exc()[-400:])
try:
    from torch.profiler import ExecutionTraceObserver
    et = ExecutionTraceObserver()
    et.register_callback("/tmp/et.json")
    et.start()
    step()
    torch.cuda.synchronize()
    et.stop()
    et.unregister_callback()
    gz("/tmp/et.json", os.path.join(out, "hf-llama-1b-step-et.json.gz"))
except Exception as e:
    errors.append("et: " + repr(e) + traceback.format_exc()[-400:])
json.dump({"torch": torch.__version__, "errors": errors}, open(os.path.join(out, "profile-info.json"), "w"), indent=1)
print("errors", errors, flush=True)
