// tsctl trace (LibTorch's C++ tracer over an archive's method) and tsctl
// script (TorchScript source compiled by LibTorch's front end).
#include "make_archive.h"

#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/script.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "compare_values.h"
#include "operator_libraries.h"
#include "py_values.h"
#include "tensors.h"
#include "torch_util.h"
#include "sandbox.h"
#include "tsctl/atomic_file.h"
#include "op_diagnosis.h"
#include "tsctl/operators.h"

namespace tsctl {
namespace {

using torch::jit::BuiltinModule;
using torch::jit::GraphFunction;
using torch::jit::SourceRange;
using torch::jit::SugaredValue;

// `ops.NS.NAME(...)`: an operator of any namespace (custom ones too), as the
// archive loader resolves the code it reads.
struct OpsValue : SugaredValue {
  std::string kind() const override { return "ops"; }
  std::shared_ptr<SugaredValue> attr(const SourceRange&, GraphFunction&, const std::string& field) override {
    return std::make_shared<BuiltinModule>(field);
  }
};

// `torch.NAME(...)` is ATen's NAME, `torch.ops.NS.NAME(...)` as `ops.NS.NAME`.
struct TorchValue : BuiltinModule {
  TorchValue() : BuiltinModule("aten") {}
  std::shared_ptr<SugaredValue> attr(const SourceRange& loc, GraphFunction& m, const std::string& field) override {
    if (field == "ops") return std::make_shared<OpsValue>();
    return BuiltinModule::attr(loc, m, field);
  }
};

// LibTorch's native resolver (only `torch.`) plus custom operators.
struct SourceResolver : torch::jit::NativeResolver {
  std::shared_ptr<SugaredValue> resolveValue(const std::string& name, GraphFunction& m, const SourceRange& loc) override {
    if (name == "ops") return std::make_shared<OpsValue>();
    if (name == "torch") return std::make_shared<TorchValue>();
    return NativeResolver::resolveValue(name, m, loc);
  }
};

std::string JoinSpecs(const std::vector<InputSpec>& specs) {
  std::string s;
  for (const auto& i : specs) s += (s.empty() ? "" : ", ") + i.ToString();
  return s;
}

std::vector<c10::IValue> MakeInputs(const std::vector<InputSpec>& specs, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<c10::IValue> out;
  for (const auto& s : specs) out.emplace_back(MakeInput(s, gen));
  return out;
}

// Largest absolute difference between two outputs; -1 if their structure,
// shapes or dtypes differ.
double MaxDifference(const c10::IValue& a, const c10::IValue& b) {
  auto fa = FlattenTensors(a), fb = FlattenTensors(b);
  if (fa.size() != fb.size()) return -1;
  double worst = 0;
  for (size_t i = 0; i < fa.size(); ++i) {
    const at::Tensor &x = fa[i].second, &y = fb[i].second;
    if (!x.sizes().equals(y.sizes()) || x.scalar_type() != y.scalar_type()) return -1;
    if (x.numel() == 0) continue;
    worst = std::max(worst, (x.to(at::kDouble) - y.to(at::kDouble)).abs().max().item<double>());
  }
  return worst;
}

bool Close(const c10::IValue& a, const c10::IValue& b, double rtol, double atol) {
  auto fa = FlattenTensors(a), fb = FlattenTensors(b);
  if (fa.size() != fb.size()) return false;
  for (size_t i = 0; i < fa.size(); ++i) {
    const at::Tensor &x = fa[i].second, &y = fb[i].second;
    if (!x.sizes().equals(y.sizes()) || x.scalar_type() != y.scalar_type()) return false;
    if (!at::allclose(x.to(at::kDouble), y.to(at::kDouble), rtol, atol, /*equal_nan=*/true)) return false;
  }
  return true;
}

// Saves with extra/tsctl_inputs.json (the producer record comes from the
// export hook) and writes the bytes atomically.
uint64_t SaveAtomically(torch::jit::Module& m, const std::string& method, const std::vector<InputSpec>& inputs,
                        const std::string& output) {
  torch::jit::ExtraFilesMap extra;
  if (!inputs.empty()) {
    nlohmann::json spec;
    for (const auto& i : inputs) spec[method].push_back(i.ToString());
    extra[kInputsRecord] = spec.dump() + "\n";
  }
  std::ostringstream bytes;
  m.save(bytes, extra);
  std::string data = bytes.str();
  WriteChildFile(output, data);
  return data.size();
}

// The traced module before its method: the original's attributes
// (parameters, buffers, submodules) under a fresh type whose only method
// will be the trace.
torch::jit::Module EmptyCopy(const torch::jit::Module& original) {
  std::string type_name = original.type()->name() ? original.type()->name()->name() : std::string("Module");
  torch::jit::Module traced(c10::QualifiedName("__torch__", "Traced" + type_name));
  for (const auto& slot : original.named_attributes(/*recurse=*/false)) {
    const auto& v = slot.value;
    bool is_param = original.type()->hasAttribute(slot.name) &&
                    original.type()->is_parameter(original.type()->getAttributeSlot(slot.name));
    bool is_buffer = original.type()->hasAttribute(slot.name) &&
                     original.type()->is_buffer(original.type()->getAttributeSlot(slot.name));
    if (v.isModule()) {
      traced.register_module(slot.name, v.toModule());
    } else if (v.isTensor() && is_param) {
      traced.register_parameter(slot.name, v.toTensor(), v.toTensor().requires_grad());
    } else if (v.isTensor() && is_buffer) {
      traced.register_buffer(slot.name, v.toTensor());
    } else if (slot.name != "training") {
      traced.register_attribute(slot.name, original.type()->getAttribute(slot.name), v);
    }
  }
  return traced;
}

// --check-input: each set run through the original and the trace, a
// divergence (or an error) marking the result diverged.
void CheckTrace(const TraceOptions& o, torch::jit::Method& method, torch::jit::Method& traced_method, MakeResult& result) {
  uint64_t seed = 1;
  for (const auto& set : o.check_inputs) {
    CheckReport c;
    c.inputs = JoinSpecs(set);
    try {
      std::vector<c10::IValue> in = MakeInputs(set, seed++);
      c10::IValue want = method(in);
      c10::IValue got = traced_method(in);
      c.max_abs = MaxDifference(want, got);
      c.matched = c.max_abs >= 0 && Close(want, got, o.rtol, o.atol);
    } catch (const std::exception& e) {
      c.error = FromTorch(e).what();
    }
    result.diverged |= !c.matched;
    result.checks.push_back(c);
  }
}

}  // namespace

MakeResult TraceArchive(const TraceOptions& o) {
  if (o.inputs.empty() && o.load_inputs_path.empty()) {
    throw Error(ErrorKind::kUsage, "tracing needs example inputs: --input SHAPE[:DTYPE] per argument, or --load-inputs FILE");
  }
  std::vector<c10::IValue> loaded;
  if (!o.load_inputs_path.empty()) {
    // --load-inputs, or the archive's recorded reference (ResolveInputs's kRecorded).
    c10::IValue value = LoadValueFile(o.load_inputs_path);
    loaded = ArgumentList(IsReferenceRecord(value) ? value.toGenericDict().at("inputs") : value);
  }
  LoadOperatorLibraries(o.load_libraries);
  torch::jit::Module original = LoadModule(o.load_path.empty() ? o.path : o.load_path);
  original.eval();
  torch::jit::Method method = FindMethod(original, o.method);
  MakeResult result;
  result.output = o.output;
  for (const auto& i : o.inputs) result.inputs.push_back(i.ToString());
  for (const auto& v : loaded) result.inputs.push_back(v.isTensor() ? Describe(v.toTensor()) : KindOf(v));
  try {
    torch::jit::Module traced = EmptyCopy(original);
    traced.eval();
    std::vector<c10::IValue> inputs = loaded.empty() ? MakeInputs(o.inputs, 0) : loaded;
    const auto& formal = method.function().getSchema().arguments();
    for (size_t i = 0; i < inputs.size() && i + 1 < formal.size(); ++i) inputs[i] = Retype(formal[i + 1].type(), inputs[i]);
    auto fn = [&](torch::jit::Stack in) -> torch::jit::Stack {
      c10::IValue out = method(std::vector<c10::IValue>(in.begin(), in.end()));
      return {out};
    };
    torch::NoGradGuard no_grad;
    auto traced_state = torch::jit::tracer::trace(
        inputs, fn, [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/false,
        /*force_outplace=*/false, &traced);
    std::shared_ptr<torch::jit::Graph> graph = std::get<0>(traced_state)->graph;
    auto* function = traced._ivalue()->compilation_unit()->create_function(
        c10::QualifiedName(*traced.type()->name(), o.method), graph);
    traced.type()->addMethod(function);
    torch::jit::Method traced_method = traced.get_method(o.method);

    CheckTrace(o, method, traced_method, result);
    if (result.diverged) return result;
    if (!o.save_outputs_path.empty()) SaveValueFile(traced_method(inputs), o.save_outputs_path);
    if (o.freeze) traced = torch::jit::freeze(traced);
    for (const auto& m : traced.get_methods()) result.methods.push_back(m.name());
    result.bytes = SaveAtomically(traced, o.method, o.inputs, o.output);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromTorch(e);
  }
  return result;
}

MakeResult ScriptFromSource(const ScriptOptions& o) {
  LoadOperatorLibraries(o.load_libraries);
  MakeResult result;
  result.output = o.output;
  for (const auto& i : o.inputs) result.inputs.push_back(i.ToString());
  torch::jit::Module m(c10::QualifiedName("__torch__", o.class_name));
  try {
    m.define(o.source, std::make_shared<SourceResolver>());
  } catch (const std::exception& e) {
    Error err = FromTorch(e);
    std::vector<std::string> missing;
    for (const auto& m : OperatorsInCode(o.source_name, o.source)) {
      for (const auto& op : m.operators) {
        if (!OperatorRegistered(op.name)) missing.push_back(op.name);
      }
    }
    if (!missing.empty()) {
      throw Error(ErrorKind::kUsage, std::string("cannot compile ") + o.source_name + ": " + DescribeMissingOperators(missing), err.detail());
    }
    throw Error(ErrorKind::kUsage, std::string("cannot compile ") + o.source_name + ": " + err.what(), err.detail());
  }
  try {
    m.eval();
    if (!o.inputs.empty()) {
      if (!m.find_method("forward")) throw Error(ErrorKind::kUsage, "--input given but " + o.source_name + " defines no forward");
      torch::NoGradGuard no_grad;
      try {
        m.get_method("forward")(MakeInputs(o.inputs, 0));  // fails here, not at serving time
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {
        Error err = FromTorch(e);  // the --input specs do not fit the source: a usage error (exit 2)
        throw Error(ErrorKind::kUsage, std::string("forward fails on --input: ") + err.what(), err.detail());
      }
    }
    if (o.freeze) m = torch::jit::freeze(m);
    for (const auto& method : m.get_methods()) result.methods.push_back(method.name());
    if (result.methods.empty()) throw Error(ErrorKind::kUsage, o.source_name + " defines no methods (def name(self, ...):)");
    result.bytes = SaveAtomically(m, "forward", o.inputs, o.output);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromTorch(e);
  }
  return result;
}

}  // namespace tsctl
