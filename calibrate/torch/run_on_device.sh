#!/usr/bin/env bash
# How the 2026-12-04 H200 measurements were taken, in one call on a lent GPU machine that has CUDA 13 and PyTorch but
# not this project's build dependencies: calibrate_cuda built here (cmake --build build --target calibrate_cuda),
# copied with the two shared libraries it needs that the machine lacks (libyaml-cpp, libfmt) into one folder beside
# this script and time_torch_kernels.py. Usage: OUT=DIR calibrate/torch/run_on_device.sh
cd "$(dirname "$0")"
exec > >(tee "$OUT/log.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem,driver_version,memory.total \
  --format=csv
libs=$PWD/lib
for pat in 'libcublas.so.13' 'libcublasLt.so.13' 'libcudart.so.13' 'libnccl.so.2'; do
  f=$(find /usr/local /usr/lib /opt -name "$pat" 2>/dev/null | head -1)
  echo "found $pat: ${f:-none}"
  [ -n "$f" ] && libs="$libs:$(dirname "$f")"
done
# Only calibrate_cuda gets these paths: PyTorch brings its own cuDNN and refuses an older one found first.
LD_LIBRARY_PATH=$libs timeout 300 ./calibrate_cuda --out "$OUT/h200-sxm-calibrate.json"
echo "calibrate_cuda rc=$?"
date -u
PYTHONUNBUFFERED=1 timeout 200 python3 time_torch_kernels.py "$OUT/h200-sxm-torch.json"
echo "torch rc=$?"
date -u
