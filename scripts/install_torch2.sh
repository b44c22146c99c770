#!/usr/bin/env bash
# Installs a LibTorch 2.x for tsctl's second build: PyPI's torch wheel (the
# default Linux one, built with CUDA; it pulls the nvidia-* runtime wheels, about
# 2.7 GB to download and 4.7 GB installed) into a venv at .venv-torch2.
# Idempotent: does nothing (and needs no network) when the pinned version is there.
# Prints torch.utils.cmake_prefix_path on stdout; everything else goes to stderr.
#
#   TORCH2_VERSION  the torch to pin (default below)
#   TORCH2_VENV     where the venv goes (default .venv-torch2 in the repository)
#   PYTHON          the interpreter that creates the venv (default python3)
#
# Why 2.15.0: the newest torch on PyPI (Oct 2026), and its LibTorch still has
# the C++ loader tsctl needs: torch::jit::load is declared in
# torch/csrc/jit/serialization/import.h and exported by libtorch_cpu.so, and
# Python's torch.jit (script, trace, save, load, freeze) still works, each call
# raising a FutureWarning ("`torch.jit.script` is deprecated. Please switch to
# `torch.compile` or `torch.export`."), which Python shows by default.
# scripts/check_torch_jit.py checks all of this for an installed torch:
#   .venv-torch2/bin/python scripts/check_torch_jit.py
# Its headers need C++20 (tsctl compiles as C++20). The wheel is a CUDA 13.2
# build (torch 2.15.0+cu132; 2.11 to 2.14 used 13.0) and builds with the CUDA
# 13.0 toolkit installed here (nvcc 13.0), since tsctl compiles no CUDA code.
# PyPI has no CPU-only Linux x86_64 wheel (+cpu builds are only on PyTorch's
# own index, which is not reachable here).
#
# torchvision (for the custom-operator tests with d2go's torchvision::nms and
# roi_align): PyPI has no torchvision release for torch 2.15.0; the newest,
# 0.29.2, is built against torch's stable C ABI (its library is
# torchvision/_C_stable.so, and it declares torch>=2.14.0), and it loads
# into 2.15.0 and runs d2go (tests/custom_op/d2go_test.sh passes). 7.5 MB,
# plus numpy and pillow for `import torchvision`.
#   TORCHVISION_VERSION  the torchvision to pin (default below; "none" skips it)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${TORCH2_VERSION:-2.15.0}
tv_version=${TORCHVISION_VERSION:-0.29.2}
venv=${TORCH2_VENV:-$PWD/.venv-torch2}
python=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
  echo "install_torch2: creating venv $venv with $("$python" --version 2>&1)" >&2
  "$python" -m venv "$venv"
fi
have=$("$venv/bin/python" -W ignore -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [ "$have" = "$version" ]; then
  echo "install_torch2: torch $have already installed in $venv" >&2
else
  echo "install_torch2: installing torch==$version into $venv (have: ${have:-none})" >&2
  start=$SECONDS
  "$venv/bin/python" -m pip install --progress-bar off --quiet "torch==$version" >&2
  echo "install_torch2: pip install took $((SECONDS - start)) s" >&2
fi
if [ "$tv_version" != none ]; then
  have_tv=$("$venv/bin/python" -W ignore -c 'import torchvision; print(torchvision.__version__.split("+")[0])' 2>/dev/null || true)
  if [ "$have_tv" = "$tv_version" ]; then
    echo "install_torch2: torchvision $have_tv already installed" >&2
  else
    echo "install_torch2: installing torchvision==$tv_version (have: ${have_tv:-none})" >&2
    "$venv/bin/python" -m pip install --progress-bar off --quiet "torch==$version" "torchvision==$tv_version" >&2
  fi
fi
"$venv/bin/python" -W ignore -c 'import torch.utils; print(torch.utils.cmake_prefix_path)'
