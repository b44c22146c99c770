// tsctl trace, tsctl script and tsctl export: making archives.
#include <iostream>
#include <sstream>

#include "cli.h"
#include "run_flags.h"
#include "tsctl/escape.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {
namespace {

struct MakeFlags {
  MakeRequest request;
  RunFlags run;
  std::vector<std::string> check_inputs;
  OutputFormat format = OutputFormat::kText;
  MakeFlags() {
    run.given_flags = "--input";
    run.help = {
        {"--input", "Example input SHAPE[:DTYPE[:channels_last]] per argument; recorded in extra/tsctl_inputs.json"},
        {"--method", "Method of the archive to trace"},
        {"--load-inputs", "Example inputs from FILE: torch.save of the argument tuple, or .npy/.npz"},
        {"--no-infer", "Without --input: only stored inputs, do not infer them in a child process"},
    };
  }
};

// "2x3x8x8,4:int64" -> one input set.
std::vector<InputSpec> SpecSet(const std::string& text) {
  std::vector<InputSpec> out;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, ',')) out.push_back(ParseInputSpec(part));
  if (out.empty()) throw Error(ErrorKind::kUsage, "--check-input needs at least one input spec");
  return out;
}

int RunMake(MakeFlags& f, const GlobalOptions& global) {
  MakeRequest& r = f.request;
  const std::string subject = r.python.empty() ? r.path : r.python;
  MakeResult result;
  int status = Guarded(r.mode, subject, global, [&]() -> int {
    ApplyRunFlags(f.run, r);
    for (const auto& c : f.check_inputs) r.check_inputs.push_back(SpecSet(c));
    result = Make(r);
    // A note, not an error: "note:" before the subject, as a compiler's notes.
    if (!result.input_note.empty()) {
      std::cerr << "tsctl: " << r.mode << ": note: " << EscapeText(subject) << ": " << EscapeText(result.input_note) << '\n';
    }
    std::cout << Render(result, f.format);
    std::cout << std::flush;
    return kExitOk;
  });
  if (status != kExitOk || !result.diverged) return status;
  Report(r.mode, subject, Error(ErrorKind::kFormat, DivergenceMessage(result, r.mode)), global);
  return kExitFindings;
}

// --rtol/--atol of --check-input (trace, script --python): non-negative.
void ToleranceFlags(CLI::App* sub, MakeFlags& f) {
  sub->add_option("--rtol", f.request.rtol, "Relative tolerance of --check-input")
      ->check(NumberIn(0, 1e300, false, "a non-negative number"))
      ->capture_default_str();
  sub->add_option("--atol", f.request.atol, "Absolute tolerance of --check-input")
      ->check(NumberIn(0, 1e300, false, "a non-negative number"))
      ->capture_default_str();
}

void CommonFlags(CLI::App* sub, MakeFlags& f) {
  AddRunFlags(sub, f.request, f.run, kInputFlag);
  sub->add_option("-o,--output", f.request.output, "The archive to write (atomically)")->required();
  sub->add_flag("--freeze", f.request.freeze, "torch::jit::freeze the result (parameters become constants)");
  AddFormatOption(sub, f.format, {OutputFormat::kText, OutputFormat::kJson});
  AddRunFlags(sub, f.request, f.run, kLoadLibraryFlag);
}

}  // namespace

RunFn BindTrace(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<MakeFlags>();
  f->request.mode = "trace";
  sub->add_option("archive", f->request.path, "TorchScript archive to trace (or use --python)");
  sub->add_option("--python", f->request.python, "FILE.py:FACTORY: a function or class returning an nn.Module, traced with torch.jit.trace");
  AddRunFlags(sub, f->request, f->run, kMethodFlag);
  sub->add_option("--check-input", f->check_inputs,
                  "Another input set (comma-separated specs) on which the trace must match the model; repeatable")
      ->allow_extra_args(false);
  ToleranceFlags(sub, *f);
  AddRunFlags(sub, f->request, f->run, kLoadInputsFlag | kNoInferFlag);
  sub->add_option("--save-outputs", f->request.save_outputs_path,
                  "Write the trace's outputs on the example inputs to FILE (torch.load reads it; FILE.npy: NumPy's format, one tensor); archives only");
  AddAllowLoadHooksFlag(sub, f->request.allow_load_hooks);
  CommonFlags(sub, *f);
  return [f, &global] { return RunMake(*f, global); };
}

RunFn BindScript(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<MakeFlags>();
  f->request.mode = "script";
  sub->add_option("source", f->request.path, "File of TorchScript methods (def forward(self, x): ...), or use --python");
  sub->add_option("--python", f->request.python, "FILE.py:NAME: an nn.Module class or a factory, compiled with torch.jit.script");
  sub->add_option("--class", f->request.class_name, "Class name for a TorchScript source file (__torch__.NAME)")->capture_default_str();
  sub->add_option("--check-input", f->check_inputs,
                  "--python only: an input set (comma-separated specs) on which the scripted module must match the eager one")
      ->allow_extra_args(false);
  ToleranceFlags(sub, *f);
  CommonFlags(sub, *f);
  return [f, &global] { return RunMake(*f, global); };
}

RunFn BindExport(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<MakeFlags>();
  f->request.mode = "export";
  sub->add_option("--python", f->request.python, "FILE.py:NAME: an nn.Module class or a factory, exported with torch.export.export")
      ->required();
  AddRunFlags(sub, f->request, f->run, kInputFlag);
  sub->add_option("-o,--output", f->request.output, "The .pt2 to write (atomically)")->required();
  sub->add_flag("--aoti", f->request.aoti, "Compile with AOTInductor into a package for the CPU (needs a C++ compiler)");
  sub->add_flag("--dynamic-batch", f->request.dynamic_batch,
                "Dimension 0 of every input is one symbolic size (batch >= 1); example batch 2 or more");
  sub->add_flag("--strict", f->request.strict, "torch.export.export(strict=True): trace with TorchDynamo");
  sub->add_option("--check-input", f->check_inputs,
                  "An input set (comma-separated specs) on which the export must match the eager model; repeatable "
                  "(default: the --input shapes)")
      ->allow_extra_args(false);
  ToleranceFlags(sub, *f);
  AddFormatOption(sub, f->format, {OutputFormat::kText, OutputFormat::kJson});
  AddRunFlags(sub, f->request, f->run, kLoadLibraryFlag);
  return [f, &global] { return RunMake(*f, global); };
}

}  // namespace tsctl::cli
