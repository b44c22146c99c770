// tsctl compat: will an archive load on a given runtime? Answered without
// loading it: what the archive needs (its format's versions, the operators
// and custom classes it calls, the backends it delegates to, the devices
// its tensors sit on), read by its format's row (tsctl/format.h), against
// what the runtime registers (lib/data/compat/, gathered from the real
// releases by scripts/gen_compat_data.py) or what this machine has.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tsctl/output.h"

namespace tsctl {

// What loading an archive needs, read without loading it.
struct CompatNeeds {
  std::string format;   // "TorchScript", ".pt2 exported program", "AOTInductor package", "ExecuTorch program"
  std::string runtime;  // the runtime kind that loads it: "torch" or "executorch"; "" for none (a .ptd)
  std::optional<uint64_t> file_format;  // TorchScript: the `version` record
  std::optional<uint64_t> bytecode;     // a mobile archive's bytecode.pkl version
  bool legacy = false;                  // the model.json layout (PyTorch 1.0-1.2)
  std::optional<std::pair<int64_t, int64_t>> pt2_schema;  // .pt2: the program's schema (major, minor)
  std::string torch_version;  // .pt2 / AOTInductor: the torch that wrote it, "" if unsaid
  std::optional<std::string> pt2_early_version;  // the early layout's `version` record ("2", "5.1")
  bool pte_constant_buffer = false;  // a program whose constants are in the inline constant_buffer
  // Operators: "aten::add.Tensor", or "aten::add" where the overload is
  // not recorded (TorchScript code: the loader picks it by types).
  std::vector<std::string> operators;
  bool overloads_known = false;       // `operators` name their overloads (bytecode, .pt2, .pte)
  std::vector<std::string> classes;   // TorchScript custom classes: "xnnpack.LinearOpContext"
  std::vector<std::string> backends;  // ExecuTorch delegates: "XnnpackBackend"
  std::vector<std::string> devices;   // where tensors were stored ("cuda:0"), CPU left out
  // AOTInductor: what the package's native code needs of the host.
  bool aoti = false;
  std::string aoti_device;                     // "cpu", "cuda", ... from its metadata
  std::vector<std::string> cuda_archs;         // "sm_90" of its kernels
  std::vector<std::string> symbol_versions;    // "GLIBC_2.34", "GLIBCXX_3.4.30" its .so files need
  std::vector<std::string> cpu_features;       // instruction sets its code was built for ("avx512f")
  std::vector<std::string> notes;              // what could not be read, said in `unknown` reasons
  // Damage every runtime's reader refuses (validate's zip.crc, zip.sizes,
  // ts.records), one line each: incompatible on every runtime target.
  std::vector<std::string> damage;
};

// What a runtime registers: a release's data file, a serving binary's list
// of operators, or what this tsctl's own runtime registers (--dump-runtime).
struct CompatRuntime {
  std::string kind;     // "torch", "executorch", or "" for a bare list of operators
  std::string version;  // "2.15.0"
  std::string date;     // when the data was gathered
  std::string source;   // how
  std::optional<std::pair<uint64_t, uint64_t>> file_format, bytecode;  // supported ranges
  std::optional<std::pair<int64_t, int64_t>> pt2_schema;               // (major, minor) it writes and reads
  std::optional<bool> legacy_import;
  std::optional<bool> constant_buffer;  // ExecuTorch reads the inline constant_buffer (ET_ENABLE_DEPRECATED_CONSTANT_BUFFER)  // torch.jit.load reads the model.json layout (LEGACY_deserialize compiled in)
  std::set<std::string> operators;  // "aten::add.Tensor"; ExecuTorch: its kernels' names
  std::set<std::string> base_names;  // the operators without overloads
  std::set<std::string> classes;
  std::set<std::string> backends;
  // Operator (with overload) -> (file format version at which its schema
  // changed, upgrader): LibTorch rewrites an older archive's calls at load.
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> upgraders;
};

// Parses a data file (lib/data/compat/'s format, which --dump-runtime
// writes) or a list of operators (`tsctl validate --list-ops`'s, one a
// line, # comments). `name` names it in messages. Throws tsctl::Error
// (kFormat) naming the line that is neither.
CompatRuntime ParseCompatRuntime(const std::string& text, const std::string& name);

// The data files built into tsctl: "torch-1.13.1", ..., "executorch-1.5.1".
std::vector<std::string> CompatDataNames();
// The date of the newest (--version says it).
std::string CompatDataDate();

// This machine, for the `host` target.
struct CompatHost {
  std::string cpu;                       // /proc/cpuinfo's model name
  std::set<std::string> cpu_features;    // its flags
  std::string glibc;                     // "2.36"
  std::set<std::string> symbol_versions;  // GLIBC_*, GLIBCXX_*, CXXABI_* the system's libc and libstdc++ define
  std::string cuda_driver;               // "" when no NVIDIA driver is loaded
  std::vector<std::string> cuda_devices;  // "sm_90" each; empty without a device
  std::string cuda_note;                 // why no device could be asked
};
CompatHost ProbeHost();

enum class CompatVerdict { kCompatible, kIncompatible, kUnknown };
const char* CompatVerdictName(CompatVerdict v);  // "compatible", "incompatible", "unknown"

// One target as the user named it, resolved.
struct CompatTarget {
  std::string spec;    // as given: "torch==2.15", "host", "ops.txt"
  std::string label;   // what reports name it: "torch==2.15.0", "host", "ops.txt"
  bool host = false;
  std::optional<CompatRuntime> runtime;  // absent for host, and where no data matches
  std::string missing;                   // why there is no data ("no data for torch==2.3: ...")
};

// Resolves SPEC: torch==X.Y[.Z], executorch==X.Y.Z, host, or a file of
// operators. Throws tsctl::Error (kUsage) for a malformed spec, naming the
// accepted forms; a well-formed version without data resolves to a target
// whose verdicts are `unknown`, saying which data is missing.
CompatTarget ResolveCompatTarget(const std::string& spec);

struct CompatTargetResult {
  std::string target;
  CompatVerdict verdict = CompatVerdict::kUnknown;
  std::vector<std::string> reasons;  // every reason; for `compatible`, what was checked
};

// Judges `needs` against `target` (host: `host`).
CompatTargetResult JudgeCompat(const CompatNeeds& needs, const CompatTarget& target, const CompatHost& host);

struct CompatArchiveResult {
  std::string path;
  std::string format;  // CompatNeeds::format, "" when unreadable
  std::string error;   // the file could not be read: its one line (no verdicts)
  int error_exit = 0;  // that error's exit code (ExitCodeFor: 3 unreadable, 4 not an archive)
  std::vector<CompatTargetResult> targets;
};

struct CompatReport {
  std::vector<CompatArchiveResult> archives;
  // 0 when every verdict is compatible; else the first unreadable file's
  // exit code (3, 4), else 1.
  int ExitCode() const;
};

// tsctl compat ARCHIVE... [--target SPEC]...: each archive opened as its
// format (tsctl/format.h) and judged against each target. Without targets:
// the runtime this tsctl runs the archive's format on (the LibTorch it was
// built with, or its ExecuTorch runtime) and `host`. Throws tsctl::Error
// (kUsage) for a malformed target; a file that cannot be read is its
// archive's `error`.
struct CompatRequest {
  std::vector<std::string> paths;
  std::vector<std::string> targets;
  uint64_t max_input_bytes = uint64_t{4} << 30;
};
CompatReport Compat(const CompatRequest& request);

// What a runtime this tsctl runs registers, in the data format
// (ParseCompatRuntime reads it back): "executorch" (tsctl-pte-runner's
// kernels and backends). Throws tsctl::Error (kUnavailable) where this build
// lacks that runtime, (kUsage) for another name.
std::string DumpCompatRuntime(const std::string& runtime);

// tsctl compat's outputs: a table (text), {"archives": [...]} (json), JUnit
// (one testcase per archive and target; incompatible fails, unknown is
// skipped, never passed).
std::string RenderCompat(const CompatReport& report, OutputFormat format);

}  // namespace tsctl
