#include "graph.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/serialization/python_print.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "operator_libraries.h"
#include "tsctl/error.h"
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

// Graphviz DOT of a graph, made for dot to lay out large real graphs: values
// are named in their producer's label ("%x.3 = aten::add"), not on edges
// (edge labels double what dot lays out: an inlined MobileNet took over 60 s
// with them, 19 s without); constants are folded into the labels of the
// nodes that use them (a frozen graph has constants with a fan-out of 100 and
// more); ranks are computed over the clusters of sub-blocks together
// (newrank: without it Graphviz 2.43 fails with "trouble in init_rank").
class DotWriter {
 public:
  explicit DotWriter(std::ostringstream& out) : out_(out) {}

  void Write(const torch::jit::Graph& g, const std::string& name) {
    out_ << "digraph \"" << DotEscape(name) << "\" {\n";
    out_ << "  rankdir=TB;\n  newrank=true;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
    for (const torch::jit::Value* v : g.inputs()) {
      std::string id = "in_" + std::to_string(v->unique());
      out_ << "  " << id << " [shape=ellipse, label=\"" << DotEscape("%" + v->debugName() + " : " + v->type()->annotation_str()) << "\"];\n";
      producer_[v] = id;
    }
    WriteBlock(*g.block(), "  ");
    out_ << "  out [shape=ellipse, label=\"return\"];\n";
    for (const torch::jit::Value* v : g.outputs()) Edge(v, "out", "  ");
    out_ << "}\n";
  }

 private:
  static constexpr size_t kMaxFolded = 6;  // constant lines per node label

  static std::string ConstantText(const torch::jit::Node* n) {
    std::ostringstream v;
    if (auto iv = torch::jit::toIValue(n->output())) {
      if (iv->isTensor()) {
        v << "Tensor" << iv->toTensor().sizes();
      } else {
        v << *iv;
      }
    } else {
      v << n->output()->type()->annotation_str();
    }
    std::string text = v.str();
    return text.size() > 40 ? text.substr(0, 37) + "..." : text;
  }

  void WriteBlock(const torch::jit::Block& block, const std::string& indent) {
    for (const torch::jit::Node* n : block.nodes()) {
      if (n->kind() == c10::prim::Constant) {
        constants_[n->output()] = ConstantText(n);  // folded into its users
        continue;
      }
      std::string id = "n" + std::to_string(next_++);
      // "%x.3 = aten::add", as the IR reads: the values are named on their
      // producer, not on every edge (edge labels double the graph dot lays out).
      std::string label;
      for (size_t i = 0; i < n->outputs().size() && i < 3; ++i) label += (i ? ", %" : "%") + n->outputs()[i]->debugName();
      if (n->outputs().size() > 3) label += ", ...";
      label += (label.empty() ? "" : " = ") + std::string(n->kind().toQualString());
      if (n->hasAttribute(c10::attr::name) && n->kindOf(c10::attr::name) == torch::jit::AttributeKind::s) {
        label += "\n" + n->s(c10::attr::name);
      }
      size_t folded = 0;
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        auto c = constants_.find(n->inputs()[i]);
        if (c == constants_.end()) continue;
        if (folded++ < kMaxFolded) {
          label += "\n" + std::to_string(i) + ": " + c->second;
        } else if (folded == kMaxFolded + 1) {
          label += "\n...";
        }
      }
      out_ << indent << id << " [label=\"" << DotEscape(label) << "\"];\n";
      for (const torch::jit::Value* in : n->inputs()) {
        if (!constants_.count(in)) Edge(in, id, indent);
      }
      for (const torch::jit::Value* o : n->outputs()) producer_[o] = id;
      size_t b = 0;
      for (const torch::jit::Block* sub : n->blocks()) {
        std::string cluster = "cluster_" + id + "_" + std::to_string(b++);
        out_ << indent << "subgraph " << cluster << " {\n" << indent << "  label=\"" << DotEscape(label) << " block" << (b - 1) << "\";\n";
        for (const torch::jit::Value* v : sub->inputs()) producer_[v] = id;
        WriteBlock(*sub, indent + "  ");
        std::string ret = cluster + "_return";
        out_ << indent << "  " << ret << " [shape=point];\n";
        for (const torch::jit::Value* v : sub->outputs()) Edge(v, ret, indent + "  ");
        out_ << indent << "}\n";
        out_ << indent << ret << " -> " << id << " [style=dashed];\n";
      }
    }
  }

  // An edge from the node that produces `v`. A constant returned as a value
  // (not folded into a user) gets a small node of its own, where it is used.
  void Edge(const torch::jit::Value* v, const std::string& to, const std::string& indent) {
    auto it = producer_.find(v);
    if (it == producer_.end()) {
      auto c = constants_.find(v);
      if (c == constants_.end()) return;
      std::string id = "c" + std::to_string(next_++);
      out_ << indent << id << " [shape=plaintext, label=\"" << DotEscape(c->second) << "\"];\n";
      out_ << indent << id << " -> " << to << ";\n";
      return;
    }
    out_ << "  " << it->second << " -> " << to << ";\n";
  }

  std::ostringstream& out_;
  std::unordered_map<const torch::jit::Value*, std::string> producer_;
  std::unordered_map<const torch::jit::Value*, std::string> constants_;
  size_t next_ = 0;
};

// How many nodes `graph` holds once every call in it is inlined: its own,
// its blocks', and each callee's (counted once per function, added per
// call), saturating. TorchScript has no recursion; a cycle counts as 0.
class InlinedCounter {
 public:
  uint64_t Block(const torch::jit::Block* block) {
    uint64_t n = 0;
    for (const torch::jit::Node* node : block->nodes()) {
      n = Add(n, 1);
      for (const torch::jit::Block* inner : node->blocks()) n = Add(n, Block(inner));
      if (const torch::jit::Function* callee = Callee(node)) n = Add(n, Function(callee));
    }
    return n;
  }

 private:
  static constexpr uint64_t kMax = uint64_t{1} << 62;
  static uint64_t Add(uint64_t a, uint64_t b) { return a + b > kMax ? kMax : a + b; }

  static const torch::jit::Function* Callee(const torch::jit::Node* node) {
    if (node->kind() == c10::prim::CallFunction && !node->inputs().empty()) {
      if (auto fn = node->input(0)->type()->cast<c10::FunctionType>()) return fn->function();
    }
    if (node->kind() == c10::prim::CallMethod && !node->inputs().empty()) {
      if (auto cls = node->input(0)->type()->cast<c10::ClassType>()) return cls->findMethod(node->s(c10::attr::name));
    }
    return nullptr;
  }

  uint64_t Function(const torch::jit::Function* fn) {
    if (auto it = memo_.find(fn); it != memo_.end()) return it->second;
    memo_[fn] = 0;  // a cycle, were there one
    if (!fn->isGraphFunction()) return 0;
    const uint64_t n = Block(torch::jit::toGraphFunction(const_cast<torch::jit::Function&>(*fn)).graph()->block());
    memo_[fn] = n;
    return n;
  }

  std::unordered_map<const torch::jit::Function*, uint64_t> memo_;
};

// A field of a NodeLines line: tabs and line ends would split it.
std::string SingleLine(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// The module a node of an inlined graph runs in: the instance names on its
// call stack (outermost first), "SELF" (a method of the same module) left out.
std::string ModuleOf(const torch::jit::Node* n) {
  auto stack = n->callstack();
  if (!stack) return "";
  std::string path;
  for (const auto& entry : (*stack)->vec()) {
    const auto& info = std::get<2>(entry);
    if (!info || info->instance_name() == "SELF" || info->instance_name().empty()) continue;
    path += (path.empty() ? "" : ".") + info->instance_name();
  }
  return path;
}

// GraphOptions::Format::kNodes. A node with sub-blocks (prim::If,
// prim::Loop) is one line; what its blocks use from outside is its input.
std::string NodeLines(const torch::jit::Graph& g) {
  std::unordered_map<const torch::jit::Value*, size_t> line_of;
  std::ostringstream out;
  size_t lines = 0;
  auto write = [&](const std::string& module, const char* kind, const std::string& label,
                   const std::vector<const torch::jit::Value*>& takes) {
    std::vector<size_t> from;
    for (const torch::jit::Value* v : takes) {
      auto it = line_of.find(v);
      if (it != line_of.end() && std::find(from.begin(), from.end(), it->second) == from.end()) from.push_back(it->second);
    }
    out << SingleLine(module) << '\t' << kind << '\t' << SingleLine(label) << '\t';
    for (size_t i = 0; i < from.size(); ++i) out << (i ? "," : "") << from[i];
    out << '\n';
    return lines++;
  };
  for (const torch::jit::Value* v : g.inputs()) {
    if (v->type()->cast<c10::ClassType>()) continue;  // self
    line_of[v] = write("", "input", "input " + v->debugName(), {});
  }
  for (const torch::jit::Node* n : g.nodes()) {
    if (n->kind() == c10::prim::Constant || n->kind() == c10::prim::GetAttr) continue;
    std::vector<const torch::jit::Value*> takes(n->inputs().begin(), n->inputs().end());
    const size_t line = write(ModuleOf(n), "op", n->kind().toQualString(), takes);
    for (const torch::jit::Value* o : n->outputs()) line_of[o] = line;
  }
  const auto returned = g.return_node()->inputs();
  write("", "output", "output", std::vector<const torch::jit::Value*>(returned.begin(), returned.end()));
  return out.str();
}

}  // namespace

uint64_t InlinedNodes(const torch::jit::Graph& graph) { return InlinedCounter().Block(graph.block()); }

std::string RenderGraph(const GraphOptions& options) {
  LoadOperatorLibraries(options.load_libraries);
  torch::jit::Module module = LoadModule(options.load_path.empty() ? options.path : options.load_path);
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
      // Counted before LibTorch inlines anything: its Inline pass cannot be
      // stopped half way.
      if (const uint64_t nodes = InlinedNodes(*graph); nodes > options.max_nodes) {
        throw Error(ErrorKind::kIo, "inlining " + options.method + " would make about " + std::to_string(nodes) +
                                        " nodes, more than --max-nodes " + std::to_string(options.max_nodes) +
                                        " (print it without --inlined, or raise --max-nodes)");
      }
      graph = graph->copy();
      torch::jit::Inline(*graph);
    }
    if (options.format == GraphOptions::Format::kNodes) return NodeLines(*graph);
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
