// The flags of a RunSpec (tsctl/run_spec.h), bound once for every command
// that runs a model: validate, bench, trace, script, export. A command names
// the ones it takes and may word a flag's help its own way.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "tsctl/run_spec.h"

namespace tsctl::cli {

enum RunFlag : unsigned {
  kMethodFlag = 1u << 0,           // -m/--method
  kInputFlag = 1u << 1,            // -i/--input
  kArgFlag = 1u << 2,              // -a/--arg
  kLoadInputsFlag = 1u << 3,       // --load-inputs
  kDataLoaderFlag = 1u << 4,       // --data-loader-script
  kNoInferFlag = 1u << 5,          // --no-infer
  kSeedFlag = 1u << 6,             // --seed
  kValRangeFlag = 1u << 7,         // --val-range
  kDeviceFlag = 1u << 8,           // --device
  kQuantizedEngineFlag = 1u << 9,  // --quantized-engine
  kTimeoutFlag = 1u << 10,         // --timeout
  kMemoryLimitFlag = 1u << 11,     // --memory-limit
  kLoadLibraryFlag = 1u << 12,     // --load-library (and TSCTL_LOAD_LIBRARIES)
};
// What validate and bench take (bench: no --method all, see its help).
inline constexpr unsigned kAllRunFlags = (1u << 13) - 1;

// The texts CLI11 fills in; ApplyRunFlags turns them into the spec.
struct RunFlags {
  std::vector<std::string> inputs, args, val_ranges, libraries;
  std::string memory_limit;
  std::string max_output_size;
  bool no_infer = false;
  CLI::Option* method = nullptr;  // set by AddRunFlags when bound
  // How a command words a flag's help, by its long name ("--timeout").
  std::map<std::string, std::string> help;
  double max_timeout_seconds = 1e6;
  std::string given_flags = "--input/--arg";  // named in RequireOneInputSource's message
};

// Adds the flags named by `which` (RunFlag bits) to `sub`, in one order.
void AddRunFlags(CLI::App* sub, RunSpec& spec, RunFlags& flags, unsigned which);

// After parsing: the texts into `spec` (inputs, arguments, value ranges,
// memory limit, libraries with TSCTL_LOAD_LIBRARIES's first, --no-infer) and
// the sources checked (given or loaded, not both; a data loader alone).
// Throws tsctl::Error (kUsage) naming the flag.
void ApplyRunFlags(const RunFlags& flags, RunSpec& spec);

}  // namespace tsctl::cli
