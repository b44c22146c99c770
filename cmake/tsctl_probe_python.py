# Asked of each candidate Python by cmake/TsctlPython.cmake: which LibTorch
# (libc10) its torch package loads, and where a venv's packages are.
import os
import sys
import sysconfig

try:
    import torch  # noqa: F401
except Exception as e:  # any failure means "no usable torch"
    print("ERROR=" + str(e).replace("\n", " ")[:200])
    sys.exit(0)
libs = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split()
        if len(fields) >= 6 and os.path.basename(fields[-1]).startswith("libc10.so"):
            libs.add(os.path.realpath(fields[-1]))
print("C10=" + "|".join(sorted(libs)))
print("SITE=" + (sysconfig.get_paths()["purelib"] if sys.prefix != sys.base_prefix else ""))
print("TORCH=" + torch.__version__)
