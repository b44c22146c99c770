#!/usr/bin/env bash
# Builds tsctl against LibTorch 2.x from PyPI (scripts/install_torch2.sh) into
# ./build-torch2, for CI and for checking the 1.13/2.x portability. Then:
#   cd build-torch2 && ctest --output-on-failure -j2
# BUILD_DIR and extra CMake arguments can be given: scripts/build_torch2.sh -DFOO=1
#
# The wheel is a CUDA build: find_package(Torch) then needs the CUDA toolkit (nvcc,
# found through PATH or /usr/local/cuda, or give -DCUDAToolkit_ROOT=... and
# -DCMAKE_CUDA_COMPILER=...); without it the configure step fails with "Your
# installed Caffe2 version uses CUDA but I cannot find the CUDA libraries".
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-torch2}

start=$SECONDS
cmake_prefix=$(scripts/install_torch2.sh)   # .../site-packages/torch/share/cmake
torch_root=$(cd "$cmake_prefix/../.." && pwd) # .../site-packages/torch
venv_python=$(cd "$torch_root/../../../.." && pwd)/bin/python
venv_site=$(cd "$torch_root/.." && pwd)
echo "build_torch2: install step $((SECONDS - start)) s; torch at $torch_root" >&2

# The torch package directory comes first in CMAKE_PREFIX_PATH, not only
# cmake_prefix_path: TorchConfig.cmake looks for libc10/libtorch with find_library,
# which otherwise prefers Debian's /usr/lib/x86_64-linux-gnu/libc10.so (1.13) and
# links both c10s into tsctl_torch.
# TORCH_CUDA_ARCH_LIST only matters for nvcc-compiled code (tsctl has none); it
# skips the GPU autodetection, which fails on a machine without a GPU.
# Python3_EXECUTABLE / TSCTL_PYTHON_SITE: trace/script --python embed the
# venv's interpreter and import the wheel's torch, which uses the same LibTorch.
# -rpath-link: executables that link LibTorch (tsctl_torch_unit) must resolve
# libtorch_cuda.so's own dependencies (libnccl.so.2, ...) from the wheel's nvidia/*
# folders. Without it ld takes /usr/local/cuda/lib/libnccl.so.2 (the toolkit's
# older NCCL; that folder is on the link rpath because TORCH_LIBRARIES names the
# toolkit's libcudart/libnvrtc) and fails: undefined reference to `ncclCommResume'.
rpath_link=$torch_root/lib
for d in "$torch_root"/../nvidia/*/lib; do
  [ -d "$d" ] && rpath_link+=":$(cd "$d" && pwd)"
done

start=$SECONDS
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$rpath_link" \
  "-DCMAKE_PREFIX_PATH=$torch_root;$cmake_prefix" \
  "-DPython_EXECUTABLE=$venv_python" \
  "-DPython3_EXECUTABLE=$venv_python" "-DTSCTL_PYTHON_SITE=$venv_site" \
  "-DTORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-8.0}" \
  "$@"
echo "build_torch2: configure step $((SECONDS - start)) s" >&2

start=$SECONDS
nice -n 10 cmake --build "$build_dir" -j"$(nproc)"
echo "build_torch2: build step $((SECONDS - start)) s" >&2
