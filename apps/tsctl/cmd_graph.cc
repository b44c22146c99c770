// tsctl graph ARCHIVE: TorchScript IR as Python prints it.
#include "cli.h"
#include "tsctl/archive.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {
namespace {

struct GraphFlags {
  GraphOptions options;
  std::string format = "text";
  std::string output;
  std::vector<std::string> libraries;
};

int RunGraph(GraphFlags& f, const GlobalOptions& global) {
  return Guarded("graph", f.options.path, global, [&]() -> int {
    // Diagnose non-archives ourselves: clearer than LibTorch's messages.
    Archive::Open(OpenFileSource(f.options.path));
    f.options.load_libraries = OperatorLibraries(f.libraries);
    f.options.format = f.format == "dot" ? GraphOptions::Format::kDot : GraphOptions::Format::kText;
    WriteOutput(f.output, GetTorchBackend().Graph(f.options));
    return kExitOk;
  });
}

}  // namespace

Command AddGraph(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<GraphFlags>();
  CLI::App* sub = app.add_subcommand("graph", "Print a method's TorchScript IR (loads the archive on the CPU)");
  sub->add_option("archive", flags->options.path, "TorchScript archive")->required();
  sub->add_option("-m,--method", flags->options.method, "Method to print")->capture_default_str();
  sub->add_flag("--inlined", flags->options.inlined, "Print the inlined graph (Python's m.inlined_graph)");
  sub->add_flag("--frozen", flags->options.frozen, "Print the graph after torch::jit::freeze and optimize_for_inference");
  sub->add_option("--format", flags->format, "text (as Python prints it) or dot (Graphviz)")
      ->check(CLI::IsMember({"text", "dot"}))
      ->capture_default_str();
  sub->add_option("-o,--output", flags->output, "Write to FILE instead of stdout");
  AddLoadLibraryFlag(sub, flags->libraries);
  return {sub, [flags, &global] { return RunGraph(*flags, global); }};
}

}  // namespace tsctl::cli
