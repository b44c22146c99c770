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
# Why executorch 1.5.1: the newest on PyPI (Sept 2026), so it knows the newest
# layouts; its deserializer reads a .pte with the Python FlatBuffers classes
# it ships (executorch/exir/_serialize/generated; 1.0 to 1.3 ran flatc and
# parsed JSON), while .ptd and .bpte still go through the flatc in its wheel
# (executorch/data/bin/flatc); and its wheel carries the runtime
# (executorch.runtime: portable and optimized kernels, XNNPACK) for running a
# .bpte's test cases. The full dependency set is installed (pandas,
# coremltools, scikit-learn, hydra-core ... come with it); a smaller set with
# --no-deps was not tried: executorch.exir, which the deserializer's module
# imports, imports torch and much of executorch.
# Why torch is named here: executorch 0.x pinned torch==X exactly (0.6.0:
# torch==2.7.0), 1.0.1 a range (>=2.9.0,<2.10.0), 1.2 to 1.4 a lower bound
# (1.4.1: torch>=2.13.0a0), and 1.5.1 declares none ("does not bundle
# PyTorch, install a compatible torch separately"), yet `import
# executorch.exir` imports torch and the runtime's pybindings link
# libtorch.so, libc10.so and libtorch_python.so. 2.14.1 is the torch release
# of 1.5's cycle, above 1.4's bound; with it the deserializer and the
# runtime both work (scripts/pte_bundled_run.py).
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
    tail -n 5 "$log" | sed 's/^/  pip: /' >&2
    rm -f "$log"
    fail "pip install executorch==$et_version torch==$torch_version failed (pip's last lines above)"
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
