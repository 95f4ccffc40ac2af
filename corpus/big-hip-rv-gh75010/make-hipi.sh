#!/usr/bin/env bash
# Remakes big_hip_rv_gh75010.hipi (stored as .hipi.gz) from big_hip_rv_gh75010.hip: the host
# side of a HIP compile for riscv64 with rocPRIM, preprocessed by Debian's clang 19.
# Needs: clang-19, librocprim-dev, libamdhip64-dev (Debian 12) and a riscv64 sysroot
# (`scripts/fetch-riscv64-clang` prints one). Debian's HIP headers live in /usr/include, where
# clang does not look for a ROCm install, so a ROCm-shaped folder of links stands in for one.
# Relative paths keep the line markers free of this machine's folders.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sysroot="${1:-$("$here/../../scripts/fetch-riscv64-clang")}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rocm/include" "$work/rocm/lib"
ln -s /usr/include/hip /usr/include/rocprim "$work/rocm/include/"
ln -s /usr/lib/x86_64-linux-gnu/libamdhip64.so "$work/rocm/lib/"
ln -s "$sysroot" "$work/sysroot"
cp "$here/big_hip_rv_gh75010.hip" "$work/"
cd "$work"
/usr/lib/llvm-19/bin/clang++ --target=riscv64-linux-gnu --sysroot=sysroot -x hip \
  --rocm-path=rocm --offload-arch=gfx1030 --offload-host-only -nogpulib \
  -march=rv64gcv -O1 -g -std=c++17 -E big_hip_rv_gh75010.hip -o big_hip_rv_gh75010.hipi
gzip -9 -n -c big_hip_rv_gh75010.hipi >"$here/big_hip_rv_gh75010.hipi.gz"
