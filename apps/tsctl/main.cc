// tsctl: a command-line toolkit for TorchScript archives.
#include <iostream>

#include "cli.h"
#include "tsctl/python_backend.h"
#include "tsctl/torch_backend.h"

namespace {

void PrintVersion() {
  std::cout << "tsctl " << TSCTL_VERSION << '\n';
  try {
    tsctl::BuildInfo info = tsctl::GetTorchBackend().Info();
    std::cout << "libtorch " << info.libtorch_version << " ("
              << (info.cuda_compiled ? "CUDA " + info.cuda_runtime + " build" : std::string("CPU-only build"))
              << ", compiled as " << info.cxx_standard << ")" << (info.library_path.empty() ? "" : " from " + info.library_path)
              << '\n';
    if (info.cuda_available) {
      std::cout << "cuda usable: " << info.cuda_devices << " device(s)\n";
    } else {
      std::cout << "cuda not usable: " << (info.cuda_compiled ? "no CUDA device is visible" : "this LibTorch was built without CUDA") << '\n';
    }
  } catch (const tsctl::Error& e) {
    std::cout << "libtorch unavailable: " << e.what() << '\n';
  }
  std::cout << "python " << (tsctl::PythonBackendBuilt() ? "embedding built in (trace/script --python)" : "not built in (no Python development files at build time)") << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tsctl: inspect, check, stamp and benchmark TorchScript archives", "tsctl"};
  app.require_subcommand(0, 1);
  app.fallthrough();
  tsctl::cli::GlobalOptions global;
  bool version = false;
  app.add_flag("--version", version, "Print tsctl's version, its LibTorch and whether CUDA is usable");
  app.add_flag("-v,--verbose", global.verbose, "Show LibTorch's full messages after an error line");
  app.footer("Exit codes: 0 ok, 1 findings, 2 usage, 3 I/O error, 4 not a TorchScript archive or corrupt,\n"
             "5 LibTorch error, 6 unavailable in this build. See tsctl(1).");

  std::vector<tsctl::cli::Command> commands = {
      tsctl::cli::AddInspect(app, global),
      tsctl::cli::AddGraph(app, global),
      tsctl::cli::AddCode(app, global),
      tsctl::cli::AddDiff(app, global),
      tsctl::cli::AddStamp(app, global),
      tsctl::cli::AddValidate(app, global),
      tsctl::cli::AddBench(app, global),
      tsctl::cli::AddTrace(app, global),
      tsctl::cli::AddScript(app, global),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "tsctl: " << e.what() << " (see tsctl --help)\n";
    return tsctl::kExitUsage;
  }
  if (version) {
    PrintVersion();
    return tsctl::kExitOk;
  }
  for (const auto& c : commands) {
    if (c.sub->parsed()) return c.run();
  }
  std::cerr << app.help();
  return tsctl::kExitUsage;
}
