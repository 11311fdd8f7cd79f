#!/usr/bin/env bash
# One device call: GPU facts, the CUDA microkernels (calibrate_cuda), then the PyTorch kernel timings.
cd "$(dirname "$0")"
exec > >(tee "$OUT/log.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem,driver_version,memory.total --format=csv
libs=$PWD/lib
for pat in 'libcublas.so.13' 'libcublasLt.so.13' 'libcudart.so.13' 'libnccl.so.2'; do
  f=$(find /usr/local /usr/lib /opt -name "$pat" 2>/dev/null | head -1)
  echo "found $pat: ${f:-none}"
  [ -n "$f" ] && libs="$libs:$(dirname "$f")"
done
export LD_LIBRARY_PATH=$libs:${LD_LIBRARY_PATH:-}
if ldd ./calibrate_cuda | grep -q 'libnccl.so.2 => not found'; then
  echo "no NCCL: using the stub (one GPU runs no collectives)"
  gcc -shared -fPIC -o lib/libnccl.so.2 nccl_stub.c
fi
ldd ./calibrate_cuda | grep -E 'not found|cublas|nccl|cudart'
timeout 300 ./calibrate_cuda --out "$OUT/h200-sxm-calibrate.json"; echo "calibrate_cuda rc=$?"
date -u
PYTHONUNBUFFERED=1 timeout 200 env -u LD_LIBRARY_PATH python3 torch_kernels.py "$OUT/h200-sxm-torch.json"; echo "torch rc=$?"
date -u
