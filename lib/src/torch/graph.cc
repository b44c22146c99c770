#include "graph.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/serialization/python_print.h>

#include <sstream>
#include <unordered_map>

#include "torch_util.h"

namespace tsctl {
namespace {

std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class DotWriter {
 public:
  explicit DotWriter(std::ostringstream& out) : out_(out) {}

  void Write(const torch::jit::Graph& g, const std::string& name) {
    out_ << "digraph \"" << DotEscape(name) << "\" {\n";
    out_ << "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
    for (const torch::jit::Value* v : g.inputs()) {
      std::string id = "in_" + std::to_string(v->unique());
      out_ << "  " << id << " [shape=ellipse, label=\"" << DotEscape("%" + v->debugName() + " : " + v->type()->annotation_str()) << "\"];\n";
      producer_[v] = id;
    }
    WriteBlock(*g.block(), "  ");
    out_ << "  out [shape=ellipse, label=\"return\"];\n";
    for (const torch::jit::Value* v : g.outputs()) Edge(v, "out");
    out_ << "}\n";
  }

 private:
  void WriteBlock(const torch::jit::Block& block, const std::string& indent) {
    for (const torch::jit::Node* n : block.nodes()) {
      std::string id = "n" + std::to_string(next_++);
      std::string label = n->kind().toQualString();
      if (n->kind() == c10::prim::Constant && n->hasAttribute(c10::attr::value)) {
        std::ostringstream v;
        if (auto iv = torch::jit::toIValue(n->output()); iv && !iv->isTensor()) {
          v << *iv;
          label += "\n" + v.str().substr(0, 40);
        }
      } else if (n->hasAttribute(c10::attr::name) && n->kindOf(c10::attr::name) == torch::jit::AttributeKind::s) {
        label += "\n" + n->s(c10::attr::name);
      }
      out_ << indent << id << " [label=\"" << DotEscape(label) << "\"];\n";
      for (const torch::jit::Value* in : n->inputs()) Edge(in, id);
      for (const torch::jit::Value* o : n->outputs()) producer_[o] = id;
      size_t b = 0;
      for (const torch::jit::Block* sub : n->blocks()) {
        std::string cluster = "cluster_" + id + "_" + std::to_string(b++);
        out_ << indent << "subgraph " << cluster << " {\n" << indent << "  label=\"" << DotEscape(label) << " block" << (b - 1) << "\";\n";
        for (const torch::jit::Value* v : sub->inputs()) producer_[v] = id;
        WriteBlock(*sub, indent + "  ");
        std::string ret = cluster + "_return";
        out_ << indent << "  " << ret << " [shape=point];\n";
        for (const torch::jit::Value* v : sub->outputs()) Edge(v, ret);
        out_ << indent << "}\n";
        out_ << indent << ret << " -> " << id << " [style=dashed];\n";
      }
    }
  }

  void Edge(const torch::jit::Value* v, const std::string& to) {
    auto it = producer_.find(v);
    if (it == producer_.end()) return;
    out_ << "  " << it->second << " -> " << to << " [label=\"" << DotEscape("%" + v->debugName()) << "\"];\n";
  }

  std::ostringstream& out_;
  std::unordered_map<const torch::jit::Value*, std::string> producer_;
  size_t next_ = 0;
};

}  // namespace

std::string RenderGraph(const GraphOptions& options) {
  LoadOperatorLibraries(options.load_libraries);
  torch::jit::Module module = LoadModule(options.path);
  try {
    if (options.frozen) {
      FindMethod(module, options.method);  // a missing method is named before freezing
      module.eval();
      // freeze() keeps only forward unless told otherwise (as torch.jit.freeze's
      // preserved_attrs): keep the method asked for.
      std::vector<std::string> keep;
      if (options.method != "forward") keep.push_back(options.method);
      torch::jit::Module frozen = torch::jit::freeze(module, keep);
      module = torch::jit::optimize_for_inference(frozen, keep);
    }
    torch::jit::Method method = FindMethod(module, options.method);
    std::shared_ptr<torch::jit::Graph> graph = method.graph();
    if (options.inlined) {
      graph = graph->copy();
      torch::jit::Inline(*graph);
    }
    if (options.format == GraphOptions::Format::kDot) {
      std::ostringstream out;
      DotWriter(out).Write(*graph, options.method);
      return out.str();
    }
    return graph->toString(true);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromTorch(e);
  }
}

std::string RenderCompiledCode(const std::string& path, const std::string& method_name) {
  torch::jit::Module module = LoadModule(path);
  try {
    torch::jit::Method method = FindMethod(module, method_name);
    std::vector<at::IValue> constants;
    torch::jit::PrintDepsTable deps;
    torch::jit::PythonPrint pp(constants, deps);
    pp.printMethod(method.function());
    return pp.str();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromTorch(e);
  }
}

}  // namespace tsctl
