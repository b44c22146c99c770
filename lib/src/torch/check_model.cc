// The LibTorch half of `tsctl validate`, run in a child process.
#include "check_model.h"

#include <torch/csrc/jit/serialization/export.h>
#include <torch/serialize.h>

#include <chrono>
#include <csignal>
#include <thread>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tsctl/escape.h"

#include "tensors.h"
#include "torch_util.h"

namespace tsctl {
namespace {

using nlohmann::json;

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, "cannot read reference file " + path);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// {"inputs": [...], "outputs": value}, or the outputs alone.
void SplitReference(const c10::IValue& ref, std::vector<c10::IValue>& inputs, c10::IValue& outputs) {
  if (ref.isGenericDict()) {
    auto dict = ref.toGenericDict();
    if (dict.contains("outputs")) {
      outputs = dict.at("outputs");
      if (dict.contains("inputs")) {
        c10::IValue in = dict.at("inputs");
        if (in.isList()) for (const auto& v : in.toListRef()) inputs.push_back(v);
        else if (in.isTuple()) for (const auto& v : in.toTupleRef().elements()) inputs.push_back(v);
        else inputs.push_back(in);
      }
      return;
    }
  }
  outputs = ref;
}

double Pick(const std::vector<double>& v, size_t i) { return v.empty() ? 0 : v[std::min(i, v.size() - 1)]; }

}  // namespace

std::string CheckModel(const ModelCheckOptions& o) {
  // Test hook: TSCTL_FAULT_CHECK_MODEL=crash|hang makes this child crash or
  // hang, so tests can check that validate reports it instead of dying.
  if (const char* fault = std::getenv("TSCTL_FAULT_CHECK_MODEL")) {
    if (std::string(fault) == "crash") std::raise(SIGSEGV);
    if (std::string(fault) == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
  }
  LoadOperatorLibraries(o.load_libraries);
  json r;
  r["load"] = {{"ok", false}};
  r["run"] = {{"ran", false}};
  r["reference"] = {{"compared", false}};
  r["recorded"] = false;
  torch::jit::Module module;
  torch::jit::ExtraFilesMap extra;
  if (o.reference_from_archive) extra["tsctl_reference.pt"] = "";
  auto t0 = std::chrono::steady_clock::now();
  try {
    module = torch::jit::load(o.path, torch::Device(torch::kCPU), extra);
  } catch (const std::exception& e) {
    r["load"]["error"] = FromLoadFailure(e, o.path).what();
    return DumpJson(r);
  }
  module.eval();
  r["load"] = {{"ok", true}, {"ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()}};
  json methods = json::array();
  for (const auto& m : module.get_methods()) methods.push_back(m.name());
  r["methods"] = methods;
  try {
    r["ops"] = torch::jit::export_opnames(module);
  } catch (const std::exception& e) {
    r["ops"] = json::array();
    r["ops_error"] = FromTorch(e).what();
  }
  auto method = module.find_method(o.method);
  r["method_found"] = method.has_value();
  if (!method) return DumpJson(r);
  std::ostringstream schema;
  schema << method->function().getSchema();
  r["schema"] = schema.str();

  // Inputs: given, else from the reference.
  std::vector<c10::IValue> inputs;
  c10::IValue expected;
  bool have_reference = false;
  try {
    if (!o.reference_path.empty()) {
      SplitReference(torch::pickle_load(ReadBytes(o.reference_path)), inputs, expected);
      r["reference"]["source"] = o.reference_path;
      have_reference = true;
    } else if (o.reference_from_archive && !extra["tsctl_reference.pt"].empty()) {
      const std::string& bytes = extra["tsctl_reference.pt"];
      SplitReference(torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())), inputs, expected);
      r["reference"]["source"] = "extra/tsctl_reference.pt";
      have_reference = true;
    }
  } catch (const std::exception& e) {
    r["reference"]["error"] = std::string("cannot read the reference: ") + FromTorch(e).what() +
                              " (write it with torch.save({'inputs': (x,), 'outputs': y}, f): tuples, not lists)";
    return DumpJson(r);
  }
  std::string input_source = have_reference && !inputs.empty() ? r["reference"]["source"].get<std::string>() : "inputs";
  if (!o.inputs.empty()) {
    inputs.clear();
    at::Generator gen = at::detail::createCPUGenerator(0);
    for (const InputSpec& spec : o.inputs) inputs.emplace_back(MakeInput(spec, gen));
    input_source = "inputs";
  }
  if (!o.run) {
    r["run"]["skipped"] = "not run (--no-run)";
    return DumpJson(r);
  }
  if (inputs.empty() && method->function().getSchema().arguments().size() > 1) {
    r["run"]["skipped"] = "no inputs known: pass --input SHAPE:DTYPE for each argument of " + o.method +
                          " (e.g. --input 1x3x224x224:float32)";
    return DumpJson(r);
  }
  r["run"]["input_source"] = input_source;
  c10::IValue out1, out2;
  try {
    c10::InferenceMode guard;
    out1 = (*method)(inputs);
    if (o.check_determinism) out2 = (*method)(inputs);
  } catch (const std::exception& e) {
    r["run"]["error"] = std::string("running ") + o.method + " failed: " + FromTorch(e).what();
    return DumpJson(r);
  }
  r["run"]["ran"] = true;
  auto flat = FlattenTensors(out1);
  json outs = json::array();
  for (const auto& [name, t] : flat) {
    int64_t nonfinite = 0;
    if (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type())) {
      nonfinite = t.numel() - at::isfinite(t).sum().item<int64_t>();
    }
    outs.push_back({{"name", name}, {"desc", Describe(t)}, {"nonfinite", nonfinite}});
  }
  if (flat.empty()) {
    std::ostringstream v;
    v << out1.tagKind();
    outs.push_back({{"name", "output"}, {"desc", v.str() + " (no tensors)"}, {"nonfinite", 0}});
  }
  r["run"]["outputs"] = outs;
  if (o.check_determinism) {
    auto flat2 = FlattenTensors(out2);
    bool same = flat2.size() == flat.size();
    double max_diff = 0;
    for (size_t i = 0; same && i < flat.size(); ++i) {
      const at::Tensor &a = flat[i].second, &b = flat2[i].second;
      if (!a.sizes().equals(b.sizes()) || a.scalar_type() != b.scalar_type()) { same = false; break; }
      if (!at::equal(a, b)) {
        same = false;
        if (at::isFloatingType(a.scalar_type())) max_diff = std::max(max_diff, (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>());
      }
    }
    r["run"]["deterministic"] = same;
    r["run"]["max_run_diff"] = max_diff;
  }
  if (have_reference) {
    auto want = FlattenTensors(expected);
    if (want.size() != flat.size()) {
      r["reference"]["error"] = "the reference has " + std::to_string(want.size()) + " output tensors, the run " + std::to_string(flat.size());
      return DumpJson(r);
    }
    json cmp = json::array();
    for (size_t i = 0; i < flat.size(); ++i) {
      const at::Tensor& got = flat[i].second;
      const at::Tensor& ref = want[i].second;
      double rtol = Pick(o.rtol, i), atol = Pick(o.atol, i);
      json c = {{"name", flat[i].first}, {"rtol", rtol}, {"atol", atol}};
      if (!got.sizes().equals(ref.sizes())) {
        c["pass"] = false;
        c["error"] = "shape " + Describe(got) + " vs reference " + Describe(ref);
      } else {
        at::Tensor g = got.to(at::kDouble), w = ref.to(at::kDouble);
        at::Tensor diff = (g - w).abs();
        at::Tensor rel = diff / w.abs().clamp_min(1e-12);
        c["max_abs"] = diff.numel() ? diff.max().item<double>() : 0.0;
        c["mean_abs"] = diff.numel() ? diff.mean().item<double>() : 0.0;
        c["max_rel"] = rel.numel() ? rel.max().item<double>() : 0.0;
        c["mean_rel"] = rel.numel() ? rel.mean().item<double>() : 0.0;
        c["pass"] = (diff <= atol + rtol * w.abs()).all().item<bool>();
        // Polygraphy's "minimum required tolerance": the smallest atol (at
        // this rtol) and rtol (at this atol) that would pass.
        if (diff.numel()) {
          c["min_atol"] = std::max(0.0, (diff - rtol * w.abs()).max().item<double>());
          c["min_rtol"] = std::max(0.0, ((diff - atol) / w.abs().clamp_min(1e-12)).max().item<double>());
        }
      }
      cmp.push_back(c);
    }
    r["reference"]["compared"] = true;
    r["reference"]["outputs"] = cmp;
  }
  if (!o.record_reference_path.empty()) {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    c10::impl::GenericList in_list(c10::AnyType::get());
    for (const auto& v : inputs) in_list.push_back(v);
    dict.insert("inputs", in_list);
    dict.insert("outputs", out1);
    std::vector<char> bytes = torch::pickle_save(dict);
    std::ofstream f(o.record_reference_path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    r["recorded"] = static_cast<bool>(f);
  }
  return DumpJson(r);
}

}  // namespace tsctl
