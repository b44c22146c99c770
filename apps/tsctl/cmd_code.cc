// tsctl code ARCHIVE: the TorchScript source stored in code records.
#include <iostream>

#include "cli.h"
#include "tsctl/escape.h"
#include "tsctl/code.h"
#include "tsctl/format.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {
namespace {

struct CodeFlags {
  std::string path;
  CodeQuery query;
  bool compiled = false;
  bool allow_load_hooks = false;
  std::string method = "forward";
  std::string output;
  OutputFormat format = OutputFormat::kText;
  std::vector<std::string> libraries;
};

int RunCode(const CodeFlags& f, const GlobalOptions& global) {
  return Guarded("code", f.path, global, [&]() -> int {
    std::string code;
    if (f.compiled) {
      code = CompiledCode(f.path, f.method, OperatorLibraries(f.libraries), f.allow_load_hooks);
    } else {
      const OpenedFile file = Open(f.path, global.max_input_bytes);
      code = Need<&Format::stored_code>(file, "code")(file, f.query);
    }
    WriteOutput(f.output, RenderCode(f.path, f.compiled ? f.method : "", code, f.format));
    return kExitOk;
  });
}

}  // namespace

RunFn BindCode(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<CodeFlags>();
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
  AddFormatOption(sub, flags->format, {OutputFormat::kText, OutputFormat::kJson});
  sub->add_option("-o,--output", flags->output, "Write to FILE instead of stdout ('-': stdout)");
  AddLoadLibraryFlag(sub, flags->libraries)->needs(compiled);
  AddAllowLoadHooksFlag(sub, flags->allow_load_hooks)->needs(compiled);
  return [flags, &global] { return RunCode(*flags, global); };
}

}  // namespace tsctl::cli
