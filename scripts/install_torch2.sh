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
# Why 2.12.1: the newest torch whose Python torch.jit (script/trace/save/load/
# freeze) works without warnings printed by default (torch.jit.script raises a
# DeprecationWarning, hidden unless -W is given) and whose headers need only
# C++17 (2.13+ need C++20 and 2.14 warns on torch.jit: shared/docs/libtorch.md).
# From 2.11 on the PyPI wheel is built with CUDA 13.0, which matches the CUDA
# toolkit on this machine (nvcc 13.0); 2.8 to 2.10 use CUDA 12.8. PyPI has no
# CPU-only Linux x86_64 wheel (+cpu builds are only on PyTorch's own index, which
# is not reachable here).
set -euo pipefail
cd "$(dirname "$0")/.."
version=${TORCH2_VERSION:-2.12.1}
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
"$venv/bin/python" -W ignore -c 'import torch.utils; print(torch.utils.cmake_prefix_path)'
