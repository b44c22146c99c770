// tsctl graph ARCHIVE: TorchScript IR as Python prints it; an ExecuTorch
// program's instruction chains as ExecuTorch prints them.
#include "cli.h"
#include "tsctl/escape.h"
#include "tsctl/format.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {
namespace {

struct GraphFlags {
  GraphOptions options;
  OutputFormat format = OutputFormat::kText;
  std::string output;
  std::vector<std::string> libraries;
};

int RunGraph(GraphFlags& f, const GlobalOptions& global) {
  return Guarded("graph", f.options.path, global, [&]() -> int {
    f.options.load_libraries = OperatorLibraries(f.libraries);
    f.options.format = f.format == OutputFormat::kDot ? GraphOptions::Format::kDot : GraphOptions::Format::kText;
    const OpenedFile file = Open(f.options.path, global.max_input_bytes);
    std::string graph = Need<&Format::graph>(file, "graph")(file, f.options, f.format);
    WriteOutput(f.output, RenderGraph(f.options, graph, f.format));
    return kExitOk;
  });
}

}  // namespace

RunFn BindGraph(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<GraphFlags>();
  sub->add_option("archive", flags->options.path,
                  "TorchScript archive, a .pt2 exported program (printed as Python's print(ep.graph)) or an ExecuTorch "
                  "program (.pte, .bpte: its instruction chains as ExecuTorch's print_program prints them)")
      ->required();
  sub->add_option("-m,--method", flags->options.method, "Method to print (a .pt2: the program models/NAME.json; a .pte: the execution plan; default the first)")->capture_default_str();
  sub->add_flag("--inlined", flags->options.inlined, "Print the inlined graph (Python's m.inlined_graph)");
  sub->add_option("--max-nodes", flags->options.max_nodes,
                  "With --inlined: refuse a graph that inlining would grow past N nodes (default 1000000)")
      ->check(NumberIn(1, 1e15, true, "an integer from 1 to 1000000000000000"));
  sub->add_flag("--frozen", flags->options.frozen, "Print the graph after torch::jit::freeze and optimize_for_inference");
  AddFormatOption(sub, flags->format, {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kDot});
  sub->add_option("-o,--output", flags->output, "Write to FILE instead of stdout ('-': stdout)");
  AddLoadLibraryFlag(sub, flags->libraries);
  AddAllowLoadHooksFlag(sub, flags->options.allow_load_hooks);
  return [flags, &global] { return RunGraph(*flags, global); };
}

}  // namespace tsctl::cli
