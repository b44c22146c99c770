// validate of an ExecuTorch program against expected outputs: pte.reference.
// --reference FILE.npz (or .npy): the file's arrays; --reference-model B: B
// run on the inputs the program ran on (saved as .npz), B another .pte (on
// ExecuTorch's runtime, --load-inputs) or a TorchScript archive (in a
// LibTorch child, its --load-inputs), its outputs saved as .npz. Each output
// is compared with the expected array of the same place: the same dtype and
// shape, the values within --rtol/--atol (relative to the expected one), as
// diff compares tensors (CompareElements).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../archive/numpy_file.h"
#include "../text/units.h"
#include "bench_pte.h"
#include "check_before_load.h"
#include "pte_child.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "tsctl/atomic_file.h"
#include "tsctl/diff.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/source.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

using nlohmann::json;
using Arrays = NumpyArrays;

std::string ArrayType(const NpyArray& a) { return std::string(a.dtype->name) + ShapeText(a.shape); }

// The arrays of a file tsctl wrote (`bytes`, in NumPy's format).
Arrays ArraysOf(const std::string& bytes, const std::string& suffix) {
  TempFile tmp(suffix);
  WriteFileAtomically(tmp.path, bytes);
  return ReadNumpyFile(tmp.path);
}

// B (another .pte) on the inputs in `inputs` (.npz): its outputs, or why none.
std::string RunPteModel(const std::string& b, const std::string& inputs, const ValidateOptions& options, Arrays& outputs) {
  PteRunRequest request = PteRunWithin(b, options);
  if (std::string data = PteDataBeside(b); !data.empty()) request.data.push_back(data);
  request.load_inputs = inputs;
  request.save_outputs = "npz";
  PteRunOutcome outcome = RunPteChild(request);
  if (outcome.result.empty()) return "the ExecuTorch runtime " + (outcome.stopped.empty() ? outcome.died : outcome.stopped);
  const json r = json::parse(outcome.result, nullptr, false);
  if (r.is_object() && r.contains("program_error")) return "ExecuTorch could not load it: " + r["program_error"].get<std::string>();
  for (const json& m : r.value("methods", json::array())) {
    for (const char* key : {"load_error", "input_error", "run_error"}) {
      if (m.contains(key)) return m.value("name", "?") + ": " + m[key].get<std::string>();
    }
  }
  if (outcome.saved_outputs.empty()) return r.value("save_error", std::string("it did not run"));
  outputs = ArraysOf(outcome.saved_outputs, ".npz");
  return "";
}

// B (a TorchScript archive) on the inputs in `inputs`, in a LibTorch child
// after the static checks every archive gets before LibTorch loads it.
std::string RunTorchModel(const std::string& b, const std::string& inputs, const ValidateOptions& options, Arrays& outputs) {
  const Archive archive = Archive::Open(OpenFileSource(b));
  if (std::optional<LoadRefusal> refused = CheckBeforeLoad(archive, b, options.allow_load_hooks)) return refused->message;
  ModelCheckOptions m = ModelCheckBase(archive, b, options);
  m.method = "forward";
  m.inputs.clear();
  m.args.clear();
  m.load_inputs_path = inputs;
  m.reference_path.clear();
  m.check_determinism = false;
  m.calls = 0;
  TempFile saved(".npz");
  m.save_outputs_path = saved.path;
  ChildOutcome child = RunTorchChild(CheckRequest{.options = m}, LimitsOf(options));
  const std::string doing = Doing(child.progress, m.method);
  if (child.Died()) return child.Failure(doing);
  const ModelCheckResult r = std::move(child).Take<ModelCheckResult>(doing);
  if (!r.loaded) return "LibTorch cannot load it: " + r.load_error;
  if (!r.ran) return r.run_error.empty() ? "not run: " + r.run_skipped : r.run_error;
  if (!r.outputs_saved) return "its outputs are not tensors and numbers NumPy holds";
  outputs = ReadNumpyFile(saved.path);
  return "";
}

double Tolerance(const std::vector<double>& list, size_t i, double fallback) {
  return list.empty() ? fallback : list[std::min(i, list.size() - 1)];
}

CheckResult CompareOutputs(const Arrays& got, const Arrays& want, const std::string& label, const ValidateOptions& options) {
  CheckResult c{check::kPteReference, CheckStatus::kFail, ""};
  c.model_ran = true;
  if (got.size() != want.size()) {
    c.message = "the method returned " + std::to_string(got.size()) + " outputs, " + label + " has " + std::to_string(want.size());
    return c;
  }
  std::vector<std::string> differ;
  double largest = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const NpyArray& a = want[i].second.first;
    const NpyArray& b = got[i].second.first;
    const std::string at = "output " + std::to_string(i) + ": ";
    if (a.dtype != b.dtype || a.shape != b.shape) {
      differ.push_back(at + ArrayType(b) + ", expected " + ArrayType(a));
      continue;
    }
    const double rtol = Tolerance(options.rtol, i, 1e-5), atol = Tolerance(options.atol, i, 1e-8);
    ValueStats s;
    CompareElements(a.dtype->name, want[i].second.second.data() + a.data, got[i].second.second.data() + b.data,
                    a.dtype->size ? a.bytes / a.dtype->size : 0, rtol, atol, s);
    largest = std::max(largest, s.max_abs);
    if (s.differing) {
      differ.push_back(at + std::to_string(s.differing) + " of " + std::to_string(s.numel) + " elements differ beyond rtol " +
                       ThreeDigits(rtol) + ", atol " + ThreeDigits(atol) + " (max abs error " + ThreeDigits(s.max_abs) +
                       (s.nan_mismatch ? "; NaN on one side" : "") + ")");
    }
  }
  if (!differ.empty()) {
    c.message = "outputs against " + label + ": " + JoinAll(differ, "; ");
    return c;
  }
  c.status = CheckStatus::kPass;
  c.message = std::to_string(got.size()) + (got.size() == 1 ? " output matches " : " outputs match ") + label +
              " (max abs error " + ThreeDigits(largest) + ")";
  return c;
}

}  // namespace

void CheckPteReference(const ValidateOptions& options, const PteRunOutcome& outcome, std::vector<CheckResult>& out) {
  const bool file = !options.reference_path.empty();
  const std::string& b = file ? options.reference_path : options.reference_model_path;
  const std::string label = (file ? "" : "reference model ") + EscapeText(b);
  auto fail = [&](const std::string& why) { out.push_back({check::kPteReference, CheckStatus::kFail, label + ": " + why}); };
  if (outcome.saved_outputs.empty()) return fail("nothing to compare: the program's outputs were not kept");
  try {
    const Arrays got = ArraysOf(outcome.saved_outputs, ".npz");
    Arrays want;
    if (file) {
      want = ReadNumpyFile(b);
    } else {
      TempFile inputs(".npz");
      WriteFileAtomically(inputs.path, outcome.saved_inputs);
      const std::string why = PteIdentifier(b) == "ET" ? RunPteModel(b, inputs.path, options, want)
                                                       : RunTorchModel(b, inputs.path, options, want);
      if (!why.empty()) return fail(why);
    }
    out.push_back(CompareOutputs(got, want, label, options));
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    fail(e.what());
  }
}

}  // namespace tsctl
