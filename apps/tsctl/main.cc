// tsctl: a command-line toolkit for TorchScript archives. main() holds the
// table of commands; each command's flags live in its cmd_*.cc binder and its
// work in one libtsctl entry point.
#include <cstdlib>
#include <iostream>

#include "cli.h"
#include "tsctl/compat.h"
#include "tsctl/escape.h"
#include "tsctl/pte.h"
#include "tsctl/torch_backend.h"

namespace {

using namespace tsctl::cli;

// The command table: name, one-line help, what the command needs, binder.
const Tool kTools[] = {
    {"inspect", "Show everything inside archives without loading them into LibTorch", kNeedsArchive, BindInspect},
    {"graph", "Print a method's TorchScript IR (loads the archive on the CPU) or an ExecuTorch program's instructions", kNeedsArchive | kNeedsLibTorch, BindGraph},
    {"code", "Print the TorchScript source stored in an archive (--compiled: as LibTorch compiles it)",
     kNeedsArchive | kNeedsLibTorchForCompiled, BindCode},
    {"diff", "Show what changed between two archives (exit 0 same, 1 different), without LibTorch",
     kNeedsArchive, BindDiff},
    {"report", "Write one self-contained offline HTML page about an archive (.pt, .pt2, .pte) or the diff of two",
     kNeedsArchive | kNeedsLibTorchForGraph, BindReport},
    {"stamp", "Add, replace or remove extra/ records (producer metadata) in existing archives", kNeedsArchive, BindStamp},
    {"validate", "Check archives for CI: ZIP integrity, structure, loading, running, outputs, operators, metadata",
     kNeedsArchive | kNeedsLibTorch, BindValidate},
    {"bench", "Measure latency, throughput and warm-up; profile operators; sweep execution settings",
     kNeedsArchive | kNeedsLibTorch, BindBench},
    {"trace", "Trace an archive's method (C++ tracer) or a Python model (embedded interpreter) into a new archive",
     kNeedsLibTorch | kNeedsPython, BindTrace},
    {"script", "Compile TorchScript source (LibTorch's front end) or a Python model (torch.jit.script) into an archive",
     kNeedsLibTorch | kNeedsPython, BindScript},
    {"export", "Export a Python model with torch.export into a .pt2 (--aoti: an AOTInductor package), checked against it",
     kNeedsLibTorch | kNeedsPythonAlways, BindExport},
    {"compat", "Will an archive load on a runtime (torch==X.Y, executorch==X.Y.Z, this host)? Answered without loading it",
     kNeedsArchive | kNeedsLibTorchForDump, BindCompat},
    {"migrate", "Convert TorchScript archives to .pt2 with torch's converter, verified against them before anything is written",
     kNeedsArchive | kNeedsLibTorch | kNeedsPythonConverter, BindMigrate},
};

std::string NeedsText(unsigned needs) {
  std::string text;
  if (needs & kNeedsLibTorch) text += "LibTorch";
  if (needs & kNeedsLibTorchForCompiled) text += "LibTorch for --compiled";
  if (needs & kNeedsLibTorchForGraph) text += "LibTorch for a TorchScript graph";
  if (needs & kNeedsLibTorchForDump) text += "LibTorch for --dump-runtime torch";
  if (needs & kNeedsPython) text += std::string(text.empty() ? "" : ", ") + "Python for --python";
  if (needs & kNeedsPythonAlways) text += std::string(text.empty() ? "" : ", ") + "Python with torch.export";
  if (needs & kNeedsPythonConverter) text += std::string(text.empty() ? "" : ", ") + "Python with torch 2.4+'s TorchScript converter";
  return text.empty() ? "no LibTorch" : text;
}

void PrintVersion() {
  std::cout << "tsctl " << TSCTL_VERSION << '\n';
  try {
    tsctl::BuildInfo info = tsctl::GetBuildInfo();
    std::cout << "libtorch " << info.libtorch_version << " ("
              << (!info.cuda_compiled           ? std::string("CPU-only build")
                  : info.cuda_runtime.empty() ? std::string("CUDA build")
                                              : "CUDA " + info.cuda_runtime + " build")
              << ", compiled as " << info.cxx_standard << ")" << (info.library_path.empty() ? "" : " from " + tsctl::EscapeText(info.library_path))
              << '\n';
    if (info.cuda_available) {
      std::cout << "cuda usable: " << info.cuda_devices << " device(s)\n";
    } else {
      std::cout << "cuda not usable: "
                << (!info.cuda_compiled        ? std::string("this LibTorch was built without CUDA")
                    : info.cuda_note.empty() ? std::string("no CUDA device is visible")
                                             : tsctl::EscapeText(info.cuda_note))
                << '\n';
    }
  } catch (const tsctl::Error& e) {
    std::cout << "libtorch unavailable: " << tsctl::EscapeText(e.what()) << '\n';
  }
  std::cout << "sandbox " << tsctl::SandboxDescription() << '\n';
  const std::string pte = tsctl::PteRuntimeVersion();
  std::cout << "executorch " << (pte.empty() ? "runtime not built in: validate reads .pte programs without running them "
                                               "(scripts/install_executorch_sdk.sh, then build again)"
                                             : "runtime " + pte + " (validate runs .pte programs)")
            << '\n';
  std::string releases;
  for (const std::string& n : tsctl::CompatDataNames()) releases += (releases.empty() ? "" : ", ") + n;
  std::cout << "compat data " << tsctl::CompatDataDate() << " (" << releases << ")\n";
  std::cout << "python " << (tsctl::PythonSupportBuilt() ? "embedding built in (trace/script --python, export)" : "not built in (no Python development files at build time)") << '\n';
}

// The first argument that is not an option names the command: an unknown one
// gets ninja's "did you mean" instead of CLI11's "arguments were not expected".
int CheckCommandName(int argc, char** argv) {
  std::vector<std::string> names;
  for (const Tool& t : kTools) names.push_back(t.name);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max-input-size") {  // the one global option with a value
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    for (const auto& n : names) {
      if (arg == n) return tsctl::kExitOk;
    }
    std::string close = ClosestName(arg, names);
    std::cerr << "tsctl: unknown command '" << tsctl::EscapeText(arg) << "'"
              << (close.empty() ? "" : "; did you mean '" + close + "'?") << " (see tsctl --help)\n";
    return tsctl::kExitUsage;
  }
  return tsctl::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tsctl: inspect, graph, code, diff, report, stamp, validate, bench, trace, script, export, compat and migrate TorchScript archives and .pt2 files", "tsctl"};
  app.require_subcommand(0, 1);
  app.fallthrough();
  GlobalOptions global;
  bool version = false;
  app.add_flag("--version", version, "Print tsctl's version, its LibTorch and whether CUDA is usable");
  app.add_flag("-v,--verbose", global.verbose, "Show LibTorch's full messages after an error line, its warnings, what its children wrote (escaped, 64 KiB each), and the sandbox's layers");
  bool no_sandbox = false;
  app.add_flag("--no-sandbox", no_sandbox,
               "Run LibTorch children without the sandbox (seccomp, Landlock, limits): for trusted archives only");
  app.add_option("--max-input-size", global.max_input_bytes,
                 "SIZE: the most read from a stream (-, a pipe, a device) or as a whole input file (default 4GiB)")
      ->transform(CLI::AsSizeValue(false));
  std::string needs = "Commands need:";
  for (const Tool& t : kTools) needs += std::string("\n  ") + t.name + std::string(10 - std::string(t.name).size(), ' ') + NeedsText(t.needs);
  app.footer(needs +
             "\n\nExit codes: 0 ok, 1 findings, 2 usage, 3 I/O error, 4 not a TorchScript archive or corrupt,\n"
             "5 LibTorch error, 6 unavailable in this build. See tsctl(1).");

  std::vector<std::pair<CLI::App*, RunFn>> commands;
  for (const Tool& t : kTools) {
    CLI::App* sub = app.add_subcommand(t.name, t.help);
    commands.emplace_back(sub, t.bind(sub, global));
    OneValuePerFlag(sub);
  }
  if (int status = CheckCommandName(argc, argv); status != tsctl::kExitOk) return status;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // Name the subcommand whose flags were wrong: "tsctl: bench: --iters: ...".
    std::string command;
    for (const CLI::App* sub : app.get_subcommands()) command = sub->get_name();
    std::cerr << "tsctl: " << (command.empty() ? "" : command + ": ") << tsctl::EscapeText(e.what()) << " (see tsctl "
              << (command.empty() ? "" : command + " ") << "--help)\n";
    return tsctl::kExitUsage;
  }
  // LibTorch's own warnings are shown only with -v (the plugin reads this).
  if (global.verbose) ::setenv("TSCTL_VERBOSE", "1", 1);
  if (no_sandbox) tsctl::SetSandbox(false);
  if (version) {
    PrintVersion();
    return tsctl::kExitOk;
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    const auto& [sub, run] = commands[i];
    if (!sub->parsed()) continue;
    // The table decides what is loaded: a command that needs no LibTorch
    // never loads the plugin (an attempt is an internal error, not a silent
    // second of start-up).
    if (!(kTools[i].needs & (kNeedsLibTorch | kNeedsLibTorchForCompiled | kNeedsLibTorchForGraph | kNeedsLibTorchForDump))) {
      tsctl::ForbidLibTorch(kTools[i].name);
    } else if (global.verbose) {
      // Once, which layers confine the children (a kernel may lack one).
      std::cerr << "tsctl: " << kTools[i].name << ": LibTorch children run with the sandbox "
                << tsctl::SandboxDescription() << '\n';
    }
    return run();
  }
  std::cerr << app.help();
  return tsctl::kExitUsage;
}
