#!/bin/bash
# GPU smoke test of the prebuilt tsctl in .gpu/ (built by .gpu/assemble.sh
# against PyPI's torch 2.11.0+cu130). Run from the repository root:
#   OUT=/some/dir bash .gpu/run.sh
# Env: OUT (required; gets log.txt, bench_cnn.json, bench_profile.json,
#      validate_cuda.json, validate_cpu.json: 5 files, no subfolders),
#      TORCH_LIB (optional: the folder holding libtorch.so; default: torch's
#      lib/ of the first python that imports torch, else the fixed path below).
#      STEP_TIMEOUT (default 120 s per step), DEADLINE (default 420 s in all;
#      steps that would start past it are skipped, and each step's timeout is
#      cut to what is left).
# Every step runs under `timeout`; a failing step never stops the script.
# Each step ends with a line "=== NAME rc=N" (124 or 137: timed out).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
ROOT=$PWD
G=$ROOT/.gpu
: "${OUT:?set OUT to the output folder}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
STEP_TIMEOUT=${STEP_TIMEOUT:-120}  # seconds per step
DEADLINE=${DEADLINE:-420}          # seconds for the whole script: later steps are skipped

main() {
  echo "=== host"
  uname -a
  head -3 /etc/os-release
  nvidia-smi -L
  echo "nproc: $(nproc)  date: $(date -u +%FT%TZ)  root: $ROOT"

  # LibTorch of the machine's torch (the same 2.11.0 the build used).
  if [ -z "${TORCH_LIB:-}" ]; then
    local py dir
    for py in python3 /opt/torch/.venv/bin/python3; do
      dir=$(timeout 60 "$py" -W ignore -c 'import torch,os;print(os.path.dirname(torch.__file__))' 2>/dev/null | tail -1)
      if [ -n "$dir" ] && [ -e "$dir/lib/libtorch.so" ]; then
        TORCH_LIB=$dir/lib
        echo "torch: $("$py" -W ignore -c 'import torch;print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null) via $(command -v "$py" || echo "$py")"
        break
      fi
    done
    : "${TORCH_LIB:=/opt/torch/.venv/lib/python3.12/site-packages/torch/lib}"
  fi
  echo "TORCH_LIB=$TORCH_LIB"
  ORIG_LD=${LD_LIBRARY_PATH:-}
  echo "original LD_LIBRARY_PATH=$ORIG_LD"
  ldconfig -p | grep -E 'libcuda\.so|libnvidia-ml' | head -4
  ls -l /dev/nvidia* 2>&1 | head -8
  export LD_LIBRARY_PATH=$G/lib:$TORCH_LIB${ORIG_LD:+:$ORIG_LD}
  echo "--- diag: which layer stops CUDA"
  timeout 60 python3 -c 'import torch;print("python cuda", torch.cuda.is_available(), torch.cuda.device_count())' 2>&1 | tail -2
  for v in plain seccomp landlock "seccomp,landlock" nosandbox; do
    case $v in
      plain) out=$(timeout 60 "$G/bin/tsctl" --version 2>&1 | grep -i cuda) ;;
      nosandbox) out=$(timeout 60 "$G/bin/tsctl" --no-sandbox --version 2>&1 | grep -i cuda) ;;
      *) out=$(TSCTL_SANDBOX_WITHOUT=$v timeout 60 "$G/bin/tsctl" --version 2>&1 | grep -i cuda) ;;
    esac
    echo "diag $v: $out"
  done
  # libtsctl finds these next to itself too; named explicitly all the same.
  export TSCTL_TORCH_PLUGIN=$G/lib/libtsctl_torch.so
  export TSCTL_TORCH_SERVER=$G/lib/tsctl-torch-server
  local tsctl=$G/bin/tsctl
  # cuda_test.sh's python3 runs with this LD_LIBRARY_PATH too (.gpu/lib holds Debian 12's libz.so.1).
  echo "python3 under LD_LIBRARY_PATH: $(timeout 60 python3 -c 'import sys, zlib, zipfile, json; print(sys.version.split()[0], "zlib", zlib.ZLIB_RUNTIME_VERSION)' 2>&1 | tail -1)"
  local data=(.gpu/data/*)
  local d
  for d in "${data[@]}"; do [ -e "$d" ] || continue; ls -l "$d"; done

  # tsctl_torch_unit reads testdata from the source folder it was built in
  # (TSCTL_TESTDATA, compiled in): give that path to this checkout if absent.
  local src_dir
  src_dir=$(cat "$G/SOURCE_DIR" 2>/dev/null)
  local linked=""
  if [ -n "$src_dir" ] && [ ! -e "$src_dir/testdata/traced_cnn.pt" ]; then
    if [ ! -e "$src_dir" ] && mkdir -p "$(dirname "$src_dir")" && ln -s "$ROOT" "$src_dir"; then
      linked=$src_dir
      echo "linked $src_dir -> $ROOT (the unit test's compiled-in testdata path)"
    else
      echo "WARNING: $src_dir/testdata is missing and could not be linked: the [cuda] unit cases will fail to read traced_cnn.pt"
    fi
  fi

  step version timeout 120 "$tsctl" --version

  echo "--- ldd (rc = number of 'not found' lines)"
  local missing
  missing=$(timeout 120 ldd "$tsctl" "$G/lib/libtsctl_torch.so" "$G/lib/tsctl-torch-server" "$G/bin/tsctl_torch_unit" 2>&1 | grep 'not found')
  [ -n "$missing" ] && echo "$missing"
  echo "=== ldd rc=$(printf '%s' "$missing" | grep -c 'not found')"
  timeout 120 ldd "$G/lib/libtsctl_torch.so" | grep -E 'tsctl|torch|c10|cud|nvidia|seccomp|pugixml|libz'

  step cuda_test timeout 120 bash tests/cuda/cuda_test.sh "$tsctl" testdata

  step unit_cuda timeout 120 "$G/bin/tsctl_torch_unit" '[cuda]'
  if ! timeout 120 "$G/bin/tsctl_torch_unit" '[cuda]' >/dev/null 2>&1; then
    step unit_cuda_bt timeout 120 cuda-gdb -batch -ex run -ex bt -ex 'info sharedlibrary' --args "$G/bin/tsctl_torch_unit" "validate's model check on CUDA*"
  fi
  step seccomp_probe timeout 120 env PROBE=$G/diag/cuinit_probe bash tests/cuda/seccomp_probe.sh

  if ! "$tsctl" --version 2>/dev/null | grep -q '^cuda usable'; then
    printf '#!/bin/sh\nexec %s --no-sandbox "$@"\n' "$tsctl" >/tmp/tsctl-nosb
    chmod +x /tmp/tsctl-nosb
    step cuda_test_nosandbox timeout 120 bash tests/cuda/cuda_test.sh /tmp/tsctl-nosb testdata
    step bench_cnn_cuda_nosb timeout 120 bash -c '"$1" --no-sandbox bench --device cuda --input 1x3x32x32 --format json testdata/traced_cnn.pt >"$2"' _ "$tsctl" "$OUT/bench_cnn_nosb.json"
    head -c 2500 "$OUT/bench_cnn_nosb.json"; echo
    step bench_profile_nosb timeout 120 "$tsctl" --no-sandbox bench --device cuda --profile --duration 2 .gpu/data/android-demo-app__mobile_model.pt
    step validate_cuda_nosb timeout 120 "$tsctl" --no-sandbox validate --device cuda -j 4 "${data[@]}"
  fi

  step bench_cnn_cuda timeout 120 bash -c '"$1" -v bench --device cuda --input 1x3x32x32 --format json testdata/traced_cnn.pt >"$2"' _ "$tsctl" "$OUT/bench_cnn.json"
  head -c 3000 "$OUT/bench_cnn.json"; echo

  local prof=.gpu/data/android-demo-app__mobile_model.pt
  [ -e "$prof" ] || prof=${data[0]}
  step bench_profile_cuda timeout 120 "$tsctl" bench --device cuda --profile --duration 2 "$prof"
  step bench_profile_cuda_json timeout 120 bash -c '"$1" bench --device cuda --profile --duration 1 --format json "$2" >"$3"' _ "$tsctl" "$prof" "$OUT/bench_profile.json"

  step validate_cuda timeout 120 "$tsctl" -v validate --device cuda -j 4 --format json -o "$OUT/validate_cuda.json" "${data[@]}"
  summary "$OUT/validate_cuda.json"
  step validate_cpu timeout 120 "$tsctl" -v validate -j 4 --format json -o "$OUT/validate_cpu.json" "${data[@]}"
  summary "$OUT/validate_cpu.json"

  # The sandbox as the CLI reports it, in text (one small archive on cuda).
  step validate_cuda_text timeout 120 "$tsctl" -v validate --device cuda testdata/traced_cnn.pt

  [ -n "$linked" ] && rm -f "$linked"
  echo "=== done in $SECONDS s"
}

# step NAME timeout 120 CMD...: runs CMD under timeout (cut to what is left
# of DEADLINE), then prints "=== NAME rc=N (T s)"; 124/137: timed out.
step() {
  local name=$1 t=$SECONDS rc limit
  shift 3
  limit=$((DEADLINE - SECONDS))
  [ "$limit" -gt "$STEP_TIMEOUT" ] && limit=$STEP_TIMEOUT
  if [ "$limit" -lt 5 ]; then
    echo "=== $name rc=skipped (past DEADLINE=${DEADLINE}s)"
    return 0
  fi
  echo "--- $name (timeout ${limit}s): $*"
  timeout -k 10 "$limit" "$@"
  rc=$?
  echo "=== $name rc=$rc ($((SECONDS - t)) s)"
  return 0
}

# The result of each archive in a validate JSON report.
summary() {
  [ -s "$1" ] || { echo "(no report $1)"; return 0; }
  timeout 60 python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("passed:", d.get("passed"), " sandbox:", d.get("sandbox"))
for a in d.get("archives", []):
    bad = [c["id"] + " " + c["status"] + ": " + c["message"][:200] for c in a.get("checks", []) if c["status"] != "PASS"]
    run = [c["id"] + ": " + c["message"][:160] for c in a.get("checks", []) if c["id"] in ("torch.load", "torch.run")]
    print(a.get("path", "?"), "errors=%s warnings=%s" % (a.get("errors"), a.get("warnings")), *run, *bad, sep="\n    ")
' "$1" 2>&1 || echo "(summary failed)"
}

main 2>&1 | tee "$OUT/log.txt"
