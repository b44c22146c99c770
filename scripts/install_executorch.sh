#!/usr/bin/env bash
# Installs ExecuTorch's Python package into a venv at .venv-executorch, so
# tsctl's C++ reader of .pte/.ptd/.bpte can be checked against ExecuTorch's own
# deserializer and runtime. Nothing in tsctl's build or tests needs it.
# Idempotent: does nothing (and needs no network) when the pinned versions are
# there. Progress goes to stderr; one "install_executorch: error: ..." line and
# exit 1 on failure.
#
#   EXECUTORCH_VERSION  the executorch to pin (default below)
#   ET_TORCH_VERSION    the torch installed beside it (default below)
#   EXECUTORCH_VENV     where the venv goes (default .venv-executorch in the repository)
#   PYTHON              the interpreter that creates the venv (default python3)
#
# Why executorch 1.5.1: the newest on PyPI (Sept 2026); its deserializer reads
# the program with the Python FlatBuffers classes it ships
# (executorch/exir/_serialize/generated), so no flatc runs, and its wheel
# carries the runtime (executorch.runtime, the portable and optimized kernels,
# XNNPACK) for running a .bpte's test cases.
# Why torch is named here: since 1.0 the wheel declares no torch at all ("does
# not bundle PyTorch, install a compatible torch separately"; before 1.0 it
# pinned torch==X exactly), yet `import executorch.exir` imports torch and the
# runtime's pybindings link libtorch.so, libc10.so and libtorch_python.so.
# 2.14.1 is the torch release of 1.5's cycle (1.1 was released against 2.10).
# PyPI's Linux torch wheel is the CUDA build (about 2.7 GB to download, with
# its nvidia-* wheels); PyTorch's CPU-only index is not reachable here.
#
# Used by scripts/pte_compare.py, scripts/bench_pte.py and
# scripts/pte_bundled_run.py (run them with .venv-executorch/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
et_version=${EXECUTORCH_VERSION:-1.5.1}
torch_version=${ET_TORCH_VERSION:-2.14.1}
venv=${EXECUTORCH_VENV:-$PWD/.venv-executorch}
python=${PYTHON:-python3}

fail() { echo "install_executorch: error: $*" >&2; exit 1; }
say() { echo "install_executorch: $*" >&2; }

if [ ! -x "$venv/bin/python" ]; then
  command -v "$python" >/dev/null || fail "no $python to create the venv with (set PYTHON)"
  say "creating venv $venv with $("$python" --version 2>&1)"
  "$python" -m venv "$venv" || fail "$python -m venv $venv failed"
fi

versions() {
  "$venv/bin/python" -W ignore - <<'EOF' 2>/dev/null || true
from importlib.metadata import version
for name in ("executorch", "torch"):
    try:
        print(version(name).split("+")[0], end=" ")
    except Exception:
        print("none", end=" ")
EOF
}
read -r have_et have_torch <<<"$(versions) "
if [ "$have_et" = "$et_version" ] && [ "$have_torch" = "$torch_version" ]; then
  say "executorch $have_et and torch $have_torch already installed in $venv"
else
  say "installing executorch==$et_version torch==$torch_version into $venv (have: executorch ${have_et:-none}, torch ${have_torch:-none})"
  start=$SECONDS
  log=$(mktemp)
  if ! "$venv/bin/python" -m pip install --progress-bar off --quiet \
      "executorch==$et_version" "torch==$torch_version" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    fail "pip install executorch==$et_version torch==$torch_version failed (output above)"
  fi
  rm -f "$log"
  say "pip install took $((SECONDS - start)) s; venv is $(du -sh "$venv" | cut -f1)"
fi

# The checks need the deserializer; the runtime is optional (pte_bundled_run.py).
"$venv/bin/python" -W ignore -c \
  'from executorch.exir._serialize._program import deserialize_pte_binary' 2>/dev/null ||
  fail "executorch's deserializer does not import in $venv"
if "$venv/bin/python" -W ignore -c 'import executorch.runtime' >/dev/null 2>&1; then
  say "executorch.runtime imports"
else
  say "executorch.runtime does not import (the deserializer does): pte_bundled_run.py will not run"
fi
say "ready: $venv/bin/python"
