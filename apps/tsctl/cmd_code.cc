// tsctl code ARCHIVE: the TorchScript source stored in code records.
#include <iostream>

#include "cli.h"
#include "tsctl/archive.h"
#include "tsctl/code.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {
namespace {

struct CodeFlags {
  std::string path;
  CodeQuery query;
  bool compiled = false;
  std::string method = "forward";
  std::string output;
  std::vector<std::string> libraries;
};

int RunCode(const CodeFlags& f, const GlobalOptions& global) {
  return Guarded("code", f.path, global, [&]() -> int {
    Archive archive = Archive::Open(OpenFileSource(f.path));
    if (f.compiled) {
      const TorchBackend& backend = GetTorchBackend();
      LoadOperatorLibraries(OperatorLibraries(f.libraries));
      WriteOutput(f.output, backend.CompiledCode(f.path, f.method));
    } else {
      WriteOutput(f.output, StoredCode(archive, f.query));
    }
    return kExitOk;
  });
}

}  // namespace

Command AddCode(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<CodeFlags>();
  CLI::App* sub = app.add_subcommand("code", "Print the TorchScript source stored in an archive");
  sub->add_option("archive", flags->path, "TorchScript archive")->required();
  auto* mod = sub->add_option("--module", flags->query.module,
                              "Only the code record of this module, e.g. __torch__.torch.nn.modules.linear");
  sub->add_option("--class", flags->query.class_name,
                  "Only this class, by qualified or plain name, e.g. __torch__.Net or Net")
      ->excludes(mod);
  auto* compiled = sub->add_flag("--compiled", flags->compiled,
                                 "Load with LibTorch and print what Python's m.code gives for --method");
  sub->add_option("-m,--method", flags->method, "With --compiled: the method to print")
      ->capture_default_str()
      ->needs(compiled);
  sub->add_option("-o,--output", flags->output, "Write to FILE instead of stdout");
  AddLoadLibraryFlag(sub, flags->libraries)->needs(compiled);
  return {sub, [flags, &global] { return RunCode(*flags, global); }};
}

}  // namespace tsctl::cli
