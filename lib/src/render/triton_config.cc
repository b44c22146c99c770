// A Triton model configuration (config.pbtxt) for what bench ran: the
// platform, inputs and outputs as Triton's PyTorch backend names them, the
// instance group and the parameters --sweep chose.
#include <string>
#include <vector>

#include "tensor_type.h"
#include "tsctl/bench.h"
#include "tsctl/dtype.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace {

// Triton's data_type for a tensor dtype (model_config.proto); "" if none.
std::string TritonType(const std::string& dtype) {
  const DtypeInfo* d = DtypeByName(dtype);
  return d ? d->triton : "";
}

// A quoted protobuf text string.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The name Triton's torch_aoti model gives an output: the package's call
// spec flattened, "RESULT" for one tensor, "RESULT[0]" in a tuple, "RESULT[key]"
// in a dict. `path` is the leaf's ("output", "output[1]", "output['k']").
std::string AotiOutputName(const std::string& path) {
  std::string out = "RESULT";
  for (size_t i = 6; i < path.size(); ++i) {
    if (path[i] != '\'') out += path[i];
  }
  return out;
}

// One input or output entry, or a comment when Triton has no type for it.
std::string Entry(const std::string& name, const std::string& desc, const std::optional<TensorDesc>& t) {
  const std::string type = t ? TritonType(t->dtype) : "";
  if (type.empty()) return "  # " + EscapeText(name) + ": " + EscapeText(desc) + " has no Triton data_type; left out\n";
  std::string dims;
  for (int64_t d : t->shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "  {\n    name: " + Quoted(name) + "\n    data_type: " + type + "\n    dims: [ " + dims + " ]\n  }";
}

// Entries joined as a repeated field's list.
std::string ConfigField(const std::string& field, const std::vector<std::string>& entries) {
  std::string items, comments;
  for (const std::string& e : entries) {
    if (e.rfind("  #", 0) == 0) {
      comments += e;
      continue;
    }
    items += (items.empty() ? "" : ",\n") + e;
  }
  return comments + (items.empty() ? "" : field + " [\n" + items + "\n]\n");
}

}  // namespace

std::string TritonConfig(const BenchResult& run, const std::string& parameters) {
  std::string out = "# Triton model configuration written by tsctl bench for " + EscapeText(run.path) + ".\n";
  if (run.aoti) {
    out += "# Put the package at <model>/1/model.pt2 beside this file. Triton loads the package's model named\n"
           "# \"model\" (aoti_compile_and_package's default name).\n";
  } else {
    out += "# Put the archive at <model>/1/model.pt beside this file.\n";
  }
  out += "# Shapes are those benchmarked: write -1 for a dimension that varies.\n";
  out += std::string("platform: ") + (run.aoti ? "\"torch_aoti\"" : "\"pytorch_libtorch\"") + "\nmax_batch_size: 0\n";
  std::vector<std::string> inputs, outputs;
  for (size_t i = 0; i < run.inputs.size(); ++i) {
    std::string spec = run.inputs[i];
    const size_t eq = spec.find('=');
    if (eq != std::string::npos && spec.find(':') > eq) spec.erase(0, eq + 1);  // "x=1x3:float32"
    const std::string name = run.aoti ? "ARGS[" + std::to_string(i) + "]" : "INPUT__" + std::to_string(i);
    inputs.push_back(Entry(name, spec, i < run.input_tensors.size() ? run.input_tensors[i] : std::nullopt));
  }
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    const std::string name = run.aoti ? AotiOutputName(run.outputs[i].name) : "OUTPUT__" + std::to_string(i);
    outputs.push_back(Entry(name, run.outputs[i].desc, run.outputs[i].tensor));
  }
  out += ConfigField("input", inputs) + ConfigField("output", outputs);
  const bool gpu = run.device.rfind("cuda", 0) == 0;
  out += "instance_group [\n  {\n    count: " + std::to_string(run.instances) + "\n    kind: " + (gpu ? "KIND_GPU" : "KIND_CPU");
  if (gpu && run.device.size() > 5) out += "\n    gpus: [ " + run.device.substr(5) + " ]";
  out += "\n  }\n]\n";
  return out + parameters;
}

}  // namespace tsctl
