// tsctl compat ARCHIVE... [--target SPEC]...: will each archive load on each
// runtime? Answered without loading anything (tsctl/compat.h).
#include <iostream>

#include "cli.h"
#include "tsctl/compat.h"
#include "tsctl/escape.h"

namespace tsctl::cli {
namespace {

struct CompatFlags {
  std::vector<std::string> archives;
  std::vector<std::string> targets;
  std::string dump_runtime;
  bool list_data = false;
  OutputFormat format = OutputFormat::kText;
  std::string output;
};

int RunCompat(CompatFlags& f, const GlobalOptions& global) {
  if (!f.dump_runtime.empty()) {
    return Guarded("compat", "--dump-runtime", global, [&] {
      WriteOutput(f.output, DumpCompatRuntime(f.dump_runtime));
      return kExitOk;
    });
  }
  if (f.list_data) {
    for (const std::string& name : CompatDataNames()) std::cout << name << '\n';
    return kExitOk;
  }
  if (f.archives.empty()) {
    std::cerr << "tsctl: compat: name at least one archive (or --dump-runtime, --list-data)\n";
    return kExitUsage;
  }
  return Guarded("compat", f.archives.size() == 1 ? f.archives[0] : "", global, [&] {
    CompatRequest request{f.archives, f.targets, global.max_input_bytes};
    const CompatReport report = Compat(request);
    for (const CompatArchiveResult& a : report.archives) {
      if (!a.error.empty()) std::cerr << "tsctl: compat: " << EscapeText(a.path) << ": " << EscapeText(a.error) << '\n';
    }
    WriteOutput(f.output, RenderCompat(report, f.format));
    return report.ExitCode();
  });
}

}  // namespace

RunFn BindCompat(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<CompatFlags>();
  sub->add_option("archives", flags->archives,
                  "TorchScript archives, .pt2 files (exported programs, AOTInductor packages) and ExecuTorch programs");
  sub->add_option("-t,--target", flags->targets,
                  "SPEC: torch==X.Y[.Z], executorch==X.Y[.Z], host (this machine), or a file listing a runtime's "
                  "operators (as validate --list-ops or --dump-runtime write); repeatable. Default: the runtime this "
                  "tsctl loads the archive's format with, and host")
      ->allow_extra_args(false);
  sub->add_option("--dump-runtime", flags->dump_runtime,
                  "RUNTIME: print what a runtime this tsctl runs registers, as a --target file (torch: its LibTorch's "
                  "operators, custom classes and versions; executorch: its kernels and backends)");
  sub->add_flag("--list-data", flags->list_data, "List the releases whose data is built in (torch-X.Y.Z, executorch-X.Y.Z)");
  AddFormatOption(sub, flags->format, {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kJUnit});
  sub->add_option("-o,--output", flags->output, "Write to FILE instead of stdout ('-': stdout)");
  OneValuePerFlag(sub);
  return [flags, &global] { return RunCompat(*flags, global); };
}

}  // namespace tsctl::cli
