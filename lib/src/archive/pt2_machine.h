// Whether this machine can run an AOTInductor package's compiled code, as
// far as tsctl can tell without loading it: the CPU instruction sets inductor
// compiled for (AOTI_CPU_ISA in the package's metadata) against this CPU's.
// Private to lib (validate's ts.device check).
#pragma once

#include <string>
#include <vector>

namespace tsctl {

// The instruction sets named in `aoti_cpu_isa` ("AVX512 AVX512_VNNI AMX_TILE",
// as inductor records them) that `cpu_flags` (the flags line of
// /proc/cpuinfo: "fpu ... avx512f ... amx_tile") lacks. Names tsctl does not
// know (other architectures' VSX, NEON, ...) are never reported.
std::vector<std::string> Pt2MissingCpuFeatures(const std::string& aoti_cpu_isa, const std::string& cpu_flags);

// The flags line of this machine's /proc/cpuinfo, "" where there is none.
std::string CpuFlags();

}  // namespace tsctl
