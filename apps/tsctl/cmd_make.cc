// tsctl trace and tsctl script: making archives.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "tsctl/archive.h"
#include "tsctl/find_inputs.h"
#include "tsctl/inspect.h"
#include "tsctl/python_backend.h"
#include "tsctl/torch_backend.h"

namespace tsctl::cli {
namespace {

struct MakeFlags {
  std::string path;     // archive (trace) or .ts source (script)
  std::string python;   // FILE:NAME
  std::vector<std::string> inputs;
  std::vector<std::string> check_inputs;
  std::string load_inputs;  // trace: --load-inputs FILE
  bool no_infer = false;    // trace: --no-infer
  std::string method = "forward";
  std::string class_name = "Net";
  std::string output;
  bool freeze = false;
  double rtol = 1e-5, atol = 1e-6;
  bool json = false;
};

std::vector<InputSpec> Specs(const std::vector<std::string>& texts) {
  std::vector<InputSpec> out;
  for (const auto& t : texts) out.push_back(ParseInputSpec(t));
  return out;
}

// "2x3x8x8,4:int64" -> one input set.
std::vector<InputSpec> SpecSet(const std::string& text) {
  std::vector<InputSpec> out;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, ',')) out.push_back(ParseInputSpec(part));
  if (out.empty()) throw Error(ErrorKind::kUsage, "--check-input needs at least one input spec");
  return out;
}

int Finish(const std::string& command, const std::string& subject, const MakeResult& r, bool json, const GlobalOptions& global) {
  if (json) {
    nlohmann::json j = {{"schema_version", 1}, {"output", r.output}, {"written", !r.diverged}, {"bytes", r.bytes},
                        {"methods", r.methods}, {"inputs", r.inputs}};
    j["checks"] = nlohmann::json::array();
    for (const auto& c : r.checks) {
      j["checks"].push_back({{"inputs", c.inputs}, {"matched", c.matched}, {"max_abs", c.max_abs}, {"error", c.error}});
    }
    j["warnings"] = r.warnings;
    std::cout << j.dump() << '\n';
  } else {
    for (const auto& w : r.warnings) std::cout << "  warning   " << w << '\n';
    for (const auto& c : r.checks) {
      std::cout << (c.matched ? "  match     " : "  DIVERGES  ") << c.inputs;
      if (!c.error.empty()) {
        std::cout << "  (" << c.error << ")";
      } else if (c.max_abs < 0) {
        std::cout << "  (outputs differ in structure, shape or dtype)";
      } else {
        std::cout << "  (max abs difference " << c.max_abs << ")";
      }
      std::cout << '\n';
    }
    if (!r.diverged) {
      std::string methods, inputs;
      for (const auto& m : r.methods) methods += (methods.empty() ? "" : ", ") + m;
      for (const auto& i : r.inputs) inputs += (inputs.empty() ? "" : ", ") + i;
      std::cout << "wrote " << r.output << " (" << HumanBytes(r.bytes) << "): methods " << methods;
      if (!inputs.empty()) std::cout << "; inputs " << inputs << " in extra/tsctl_inputs.json";
      std::cout << '\n';
    }
  }
  std::cout << std::flush;
  if (r.diverged) {
    std::string which;
    for (const auto& c : r.checks) {
      if (!c.matched) which += (which.empty() ? "" : "; ") + c.inputs;
    }
    Report(command, subject,
           Error(ErrorKind::kFormat, "the " + std::string(command == "trace" ? "trace" : "script") +
                                         " diverges from the model on --check-input " + which + ": " + r.output + " not written"),
           global);
    return kExitFindings;
  }
  return kExitOk;
}

std::pair<std::string, std::string> SplitPython(const std::string& spec) {
  size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    throw Error(ErrorKind::kUsage, "--python wants FILE.py:NAME, got '" + spec + "'");
  }
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

int RunTrace(const MakeFlags& f, const GlobalOptions& global) {
  std::string subject = f.python.empty() ? f.path : f.python;
  return Guarded("trace", subject, global, [&]() -> int {
    if (f.python.empty() == f.path.empty()) throw Error(ErrorKind::kUsage, "give an ARCHIVE or --python FILE:FACTORY (one of them)");
    std::vector<std::vector<InputSpec>> checks;
    for (const auto& c : f.check_inputs) checks.push_back(SpecSet(c));
    if (!f.python.empty()) {
      if (f.method != "forward") throw Error(ErrorKind::kUsage, "--method applies to tracing an archive; --python traces forward");
      auto [file, name] = SplitPython(f.python);
      PythonRequest req{file, name, "trace", Specs(f.inputs), checks, f.freeze, f.rtol, f.atol, f.output};
      return Finish("trace", subject, GetPythonBackend().Make(req), f.json, global);
    }
    Archive::Open(OpenFileSource(f.path));
    TraceOptions o{f.path, f.method, Specs(f.inputs), checks, f.freeze, f.rtol, f.atol, f.output};
    o.load_inputs_path = f.load_inputs;
    if (!f.inputs.empty() && !f.load_inputs.empty()) throw Error(ErrorKind::kUsage, "--load-inputs cannot be combined with --input");
    if (o.inputs.empty() && o.load_inputs_path.empty() && !f.no_infer) {
      // Stored or inferred example inputs; the tracer takes tensors only.
      FoundInputs found = FindInputs(f.path, f.method);
      o.inputs = found.inputs;
      for (const ArgSpec& a : found.args) {
        try {
          o.inputs.push_back(ParseInputSpec(a.value));
        } catch (const Error&) {
          throw Error(ErrorKind::kUsage, "inferred inputs are not all tensors (" + DescribeFound(found) +
                                             "): give tensor --input specs or --load-inputs");
        }
      }
      if (!found.found && !found.why.empty()) throw Error(ErrorKind::kUsage, "tracing needs example inputs: " + found.why);
      if (found.found) {
        std::string pin;
        for (const InputSpec& i : o.inputs) pin += " --input " + i.ToString();
        std::cerr << "tsctl: trace: " << f.path << ": inputs from " << found.source
                  << (found.note.empty() ? "" : " (" + found.note + ")") << (pin.empty() ? "" : "; pin them with" + pin) << '\n';
      }
    }
    return Finish("trace", subject, GetTorchBackend().Trace(o), f.json, global);
  });
}

int RunScript(const MakeFlags& f, const GlobalOptions& global) {
  std::string subject = f.python.empty() ? f.path : f.python;
  return Guarded("script", subject, global, [&]() -> int {
    if (f.python.empty() == f.path.empty()) throw Error(ErrorKind::kUsage, "give a TorchScript SOURCE file or --python FILE:NAME (one of them)");
    if (!f.python.empty()) {
      auto [file, name] = SplitPython(f.python);
      std::vector<std::vector<InputSpec>> checks;
      for (const auto& c : f.check_inputs) checks.push_back(SpecSet(c));
      PythonRequest req{file, name, "script", Specs(f.inputs), checks, f.freeze, f.rtol, f.atol, f.output};
      return Finish("script", subject, GetPythonBackend().Make(req), f.json, global);
    }
    if (!f.check_inputs.empty()) throw Error(ErrorKind::kUsage, "--check-input applies to script --python (a .ts source has no eager model to compare with)");
    std::ifstream in(f.path);
    if (!in) throw Error(ErrorKind::kIo, std::string("cannot open: ") + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    ScriptOptions o{text.str(), f.path, f.class_name, Specs(f.inputs), f.freeze, f.output};
    return Finish("script", subject, GetTorchBackend().ScriptSource(o), f.json, global);
  });
}

void CommonFlags(CLI::App* sub, MakeFlags& f) {
  sub->add_option("-i,--input", f.inputs, "Example input SHAPE[:DTYPE[:channels_last]] per argument; recorded in extra/tsctl_inputs.json")
      ->allow_extra_args(false);
  sub->add_option("-o,--output", f.output, "The archive to write (atomically)")->required();
  sub->add_flag("--freeze", f.freeze, "torch::jit::freeze the result (parameters become constants)");
  sub->add_flag("--json", f.json, "A JSON document instead of text");
}

}  // namespace

Command AddTrace(CLI::App& app, const GlobalOptions& global) {
  auto f = std::make_shared<MakeFlags>();
  CLI::App* sub = app.add_subcommand("trace", "Trace an archive's method (C++ tracer) or a Python model (embedded interpreter) into a new archive");
  sub->add_option("archive", f->path, "TorchScript archive to trace (or use --python)");
  sub->add_option("--python", f->python, "FILE.py:FACTORY: a function or class returning an nn.Module, traced with torch.jit.trace");
  sub->add_option("-m,--method", f->method, "Method of the archive to trace")->capture_default_str();
  sub->add_option("--check-input", f->check_inputs,
                  "Another input set (comma-separated specs) on which the trace must match the model; repeatable")
      ->allow_extra_args(false);
  sub->add_option("--rtol", f->rtol, "Relative tolerance of --check-input")->capture_default_str();
  sub->add_option("--atol", f->atol, "Absolute tolerance of --check-input")->capture_default_str();
  sub->add_option("--load-inputs", f->load_inputs, "Example inputs from FILE: torch.save of the argument tuple, or .npy/.npz");
  sub->add_flag("--no-infer", f->no_infer, "Without --input: only stored inputs, do not infer them in a child process");
  CommonFlags(sub, *f);
  return {sub, [f, &global] { return RunTrace(*f, global); }};
}

Command AddScript(CLI::App& app, const GlobalOptions& global) {
  auto f = std::make_shared<MakeFlags>();
  CLI::App* sub = app.add_subcommand("script", "Compile TorchScript source (LibTorch's front end) or a Python model (torch.jit.script) into an archive");
  sub->add_option("source", f->path, "File of TorchScript methods (def forward(self, x): ...), or use --python");
  sub->add_option("--python", f->python, "FILE.py:NAME: an nn.Module class or a factory, compiled with torch.jit.script");
  sub->add_option("--class", f->class_name, "Class name for a TorchScript source file (__torch__.NAME)")->capture_default_str();
  sub->add_option("--check-input", f->check_inputs,
                  "--python only: an input set (comma-separated specs) on which the scripted module must match the eager one")
      ->allow_extra_args(false);
  sub->add_option("--rtol", f->rtol, "Relative tolerance of --check-input")->capture_default_str();
  sub->add_option("--atol", f->atol, "Absolute tolerance of --check-input")->capture_default_str();
  CommonFlags(sub, *f);
  return {sub, [f, &global] { return RunScript(*f, global); }};
}

}  // namespace tsctl::cli
