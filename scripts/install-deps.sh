#!/usr/bin/env bash
# Installs the Debian packages clustersim builds with (DESIGN.md §8); does nothing when all are present.
set -euo pipefail
required=(cmake g++ make pkg-config ninja-build ccache libsimgrid-dev libboost-graph-dev libeigen3-dev
          libyaml-cpp-dev zlib1g-dev nlohmann-json3-dev libgtest-dev libcli11-dev libfmt-dev gnuplot-nox python3
          openmpi-bin clang libclang-rt-14-dev libprotobuf-dev protobuf-compiler libzstd-dev libtomlplusplus-dev)
missing=()
for p in "${required[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
