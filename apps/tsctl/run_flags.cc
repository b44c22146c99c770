// AddRunFlags / ApplyRunFlags: RunSpec's flags, once.
#include "run_flags.h"

#include "tsctl/error.h"

namespace tsctl::cli {
namespace {

const std::map<std::string, std::string>& DefaultHelp() {
  static const std::map<std::string, std::string> help = {
      {"--method", "Method to run"},
      {"--input", "Input SHAPE[:DTYPE[:channels_last]] per argument, e.g. 1x3x224x224:float32"},
      {"--arg",
       "Argument of any type, by position (VALUE) or name (NAME=VALUE), typed by the method's schema: a tensor spec "
       "1x3x8x8:float32[:zeros|ones|randint:LOW:HIGH|fill:V] or nested list, 3, 0.5, true, null, '\"text\"', "
       "'[1, 2]', '{\"a\": 1}'"},
      {"--load-inputs", "Arguments from FILE: torch.save of the argument tuple (as Python writes it), or .npy/.npz for tensors"},
      {"--data-loader-script",
       "FILE.py[:FUNC]: arguments from FUNC (default load_data), a generator or iterable run in the embedded Python (in "
       "a child process); its first item: a tuple of arguments, one tensor, or a dict of arrays by argument name "
       "(Polygraphy's data loader)"},
      {"--no-infer", "Do not infer inputs when none are given or stored"},
      {"--seed", "Seed of the random values of generated inputs (default 0; the pin flags repeat it)"},
      {"--val-range",
       "[NAME:]LOW,HIGH: generated values of argument NAME (or of every argument) in this range: floats uniform, "
       "integers from LOW to HIGH inclusive (repeatable)"},
      {"--device", "cpu, cuda or cuda:N"},
      {"--quantized-engine", "Quantized engine for quantized models: qnnpack, fbgemm, onednn or x86, as this LibTorch has them"},
      {"--timeout", "Seconds LibTorch may take before its child is killed"},
      {"--memory-limit",
       "How far each LibTorch child may grow past what it inherited, e.g. 4G (default: min(8G, half of the available "
       "memory / the archives checked at once)); an allocation beyond it fails, naming the limit"},
      {"--max-output-size",
       "The largest file a LibTorch child may send back (outputs, references, traces), e.g. 1G; a larger one is not "
       "written (default: what its memory cap allows)"},
  };
  return help;
}

std::string Help(const RunFlags& flags, const std::string& name) {
  auto own = flags.help.find(name);
  return own != flags.help.end() ? own->second : DefaultHelp().at(name);
}

}  // namespace

void AddRunFlags(CLI::App* sub, RunSpec& spec, RunFlags& flags, unsigned which) {
  if (which & kMethodFlag) flags.method = sub->add_option("-m,--method", spec.method, Help(flags, "--method"))->capture_default_str();
  if (which & kInputFlag) sub->add_option("-i,--input", flags.inputs, Help(flags, "--input"))->allow_extra_args(false);
  if (which & kArgFlag) sub->add_option("-a,--arg", flags.args, Help(flags, "--arg"))->allow_extra_args(false);
  if (which & kLoadInputsFlag) sub->add_option("--load-inputs", spec.load_inputs_path, Help(flags, "--load-inputs"));
  if (which & kDataLoaderFlag) sub->add_option("--data-loader-script", spec.data_loader, Help(flags, "--data-loader-script"));
  if (which & kNoInferFlag) sub->add_flag("--no-infer", flags.no_infer, Help(flags, "--no-infer"));
  if (which & kSeedFlag) sub->add_option("--seed", spec.seed, Help(flags, "--seed"));
  if (which & kValRangeFlag) sub->add_option("--val-range", flags.val_ranges, Help(flags, "--val-range"));
  if (which & kDeviceFlag) sub->add_option("--device", spec.device, Help(flags, "--device"))->capture_default_str();
  if (which & kQuantizedEngineFlag) sub->add_option("--quantized-engine", spec.quantized_engine, Help(flags, "--quantized-engine"));
  if (which & kTimeoutFlag) {
    const double max = flags.max_timeout_seconds;
    char range[96];
    std::snprintf(range, sizeof range, "a number of seconds from 0.001 to %.0f", max);
    sub->add_option("--timeout", spec.timeout_seconds, Help(flags, "--timeout"))
        ->check(NumberIn(0.001, max, false, range))
        ->capture_default_str();
  }
  if (which & kMemoryLimitFlag) {
    sub->add_option("--memory-limit", flags.memory_limit, Help(flags, "--memory-limit"));
    sub->add_option("--max-output-size", flags.max_output_size, Help(flags, "--max-output-size"));
  }
  if (which & kLoadLibraryFlag) AddLoadLibraryFlag(sub, flags.libraries);
}

void ApplyRunFlags(const RunFlags& flags, RunSpec& spec) {
  for (const std::string& s : flags.inputs) spec.inputs.push_back(ParseInputSpec(s));
  for (const std::string& s : flags.args) spec.args.push_back(ParseArgSpec(s));
  spec.value_ranges = ParseValueRanges(flags.val_ranges);
  spec.infer_inputs = !flags.no_infer;
  if (!flags.memory_limit.empty()) spec.memory_limit_bytes = ParseByteSize(flags.memory_limit, "--memory-limit");
  if (!flags.max_output_size.empty()) spec.max_output_bytes = ParseByteSize(flags.max_output_size, "--max-output-size");
  spec.load_libraries = OperatorLibraries(flags.libraries);
  const bool given = !spec.inputs.empty() || !spec.args.empty();
  RequireOneInputSource(given, spec.load_inputs_path, flags.given_flags);
  if (!spec.data_loader.empty()) RequireOneDataSource(given, spec.load_inputs_path);
}

}  // namespace tsctl::cli
