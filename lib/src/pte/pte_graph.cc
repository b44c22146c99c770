// tsctl graph of an ExecuTorch program: each chain of a method as
// ExecuTorch's print_program (exir/print_program.py) prints it, or as
// Graphviz DOT. Strings are left as the file has them; the caller escapes the
// text as it does any graph's.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "tsctl/dtype.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/pte.h"
#include "tsctl/report_graph.h"
#include "../text/units.h"

namespace tsctl {
namespace {

// print_program's short dtype names (_scalar_type_str); the full name for
// the types it does not know.
std::string ShortDtype(const std::string& name) {
  const DtypeInfo* d = DtypeByC10(name);
  return d && *d->short_name ? d->short_name : name;
}

template <typename T, typename F>
std::string PyList(const std::vector<T>& items, F item) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + item(items[i]);
  return s + "]";
}

std::string IntText(int64_t v) { return std::to_string(v); }

// print_program's _format_evalue, without its colours; dynamic tensors are
// marked (UBT, DUT) and a tensor whose bytes the file holds or names is CT.
std::string ProgramValueText(const PteValue& v) {
  switch (v.kind) {
    case PteValueKind::kTensor: {
      const PteTensor& t = v.tensor;
      std::string s;
      if (t.location != PteDataLocation::kNone && !t.memory_planned) {
        s = "CT";
      } else {
        if (t.dynamism == PteShapeDynamism::kDynamicBound) s += "UB";
        if (t.dynamism == PteShapeDynamism::kDynamicUnbound) s += "DU";
        s += "T";
        s += t.memory_planned ? "m" + std::to_string(t.memory_id) + "." + std::to_string(t.memory_offset) : "m.";
      }
      return s + PyList(t.sizes, IntText) + ShortDtype(t.dtype);
    }
    case PteValueKind::kTensorList: return "TL" + PyList(v.items, IntText);
    case PteValueKind::kOptionalTensorList:
      return "OTL" + PyList(v.items, [](int64_t i) { return i < 0 ? std::string("None") : std::to_string(i); });
    case PteValueKind::kIntList: return "IL" + PyList(v.items, IntText);
    case PteValueKind::kDoubleList: return "DL" + PyList(v.doubles, PyFloat);
    case PteValueKind::kBoolList:
      return "BL" + PyList(v.items, [](int64_t b) { return std::string(b ? "True" : "False"); });
    case PteValueKind::kInt: return "I" + v.scalar;
    case PteValueKind::kDouble: return "D" + PyFloat(std::strtod(v.scalar.c_str(), nullptr));
    case PteValueKind::kBool: return std::string("B") + (v.scalar == "true" ? "1" : "0");
    case PteValueKind::kString: return "S" + v.scalar;
    case PteValueKind::kNone: return "N";
    case PteValueKind::kUnknown: break;
  }
  return "?";
}

int64_t IndexIn(const std::vector<int64_t>& list, int64_t value) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == value) return static_cast<int64_t>(i);
  }
  return -1;
}

// print_program's _format_arg: the value's index, I<n>/O<n> when it is the
// method's n-th input or output, then the value.
std::string ArgText(const PteMethod& m, int64_t index) {
  std::string s = std::to_string(index);
  if (int64_t i = IndexIn(m.input_values, index); i >= 0) s += "I" + std::to_string(i);
  if (int64_t o = IndexIn(m.output_values, index); o >= 0) s += "O" + std::to_string(o);
  return s + ProgramValueText(m.value_table[static_cast<size_t>(index)]);
}

std::string Args(const PteMethod& m, const std::vector<int64_t>& args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? "," : "") + ArgText(m, args[i]);
  return s;
}

// What an instruction calls: "aten::add.out", a delegate's backend id, MOVE,
// JF, FREE.
std::string Callee(const PteMethod& m, const PteInstruction& in) {
  switch (in.kind) {
    case PteInstructionKind::kKernelCall: return PteOperatorKey(m.operators[static_cast<size_t>(in.target)]);
    case PteInstructionKind::kDelegateCall: return m.delegates[static_cast<size_t>(in.target)].backend_id;
    case PteInstructionKind::kMove: return "MOVE";
    case PteInstructionKind::kJumpFalse: return "JF";
    case PteInstructionKind::kFree: return "FREE";
    case PteInstructionKind::kUnknown: break;
  }
  return "UNKNOWN";
}

std::string InstructionText(const PteMethod& m, const PteInstruction& in) {
  switch (in.kind) {
    case PteInstructionKind::kKernelCall:
    case PteInstructionKind::kDelegateCall: return Callee(m, in) + " " + Args(m, in.args);
    case PteInstructionKind::kJumpFalse: return "JF (" + ArgText(m, in.args[0]) + ") -> " + std::to_string(in.target);
    case PteInstructionKind::kMove: return "MOVE " + ArgText(m, in.args[0]) + " -> " + ArgText(m, in.args[1]);
    case PteInstructionKind::kFree: return "FREE " + ArgText(m, in.args[0]);
    case PteInstructionKind::kUnknown: break;
  }
  return "UNKNOWN (an instruction type this schema does not know)";
}

void ChainText(const PteMethod& m, size_t index, std::ostream& out) {
  const PteChain& c = m.chain_list[index];
  out << "method " << m.name << ", chain " << index << ": " << c.instructions.size() << " instruction"
      << (c.instructions.size() == 1 ? "" : "s");
  if (!c.inputs.empty()) out << ", inputs " << PyList(c.inputs, IntText);
  if (!c.outputs.empty()) out << ", outputs " << PyList(c.outputs, IntText);
  out << '\n';
  for (size_t i = 0; i < c.instructions.size(); ++i) {
    char num[24];
    std::snprintf(num, sizeof num, "%3zu: ", i);
    out << num << InstructionText(m, c.instructions[i]) << '\n';
  }
}

std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

// The tensors an instruction names: its arguments, and the items of a
// tensor list among them.
std::vector<int64_t> TensorsNamed(const PteMethod& m, const PteInstruction& in) {
  std::vector<int64_t> out;
  for (int64_t a : in.args) {
    const PteValue& v = m.value_table[static_cast<size_t>(a)];
    if (v.kind == PteValueKind::kTensor) out.push_back(a);
    if (v.kind == PteValueKind::kTensorList || v.kind == PteValueKind::kOptionalTensorList) {
      for (int64_t i : v.items) {
        if (i >= 0 && m.value_table[static_cast<size_t>(i)].kind == PteValueKind::kTensor) out.push_back(i);
      }
    }
  }
  return out;
}

bool IsConstant(const PteValue& v) { return v.tensor.location != PteDataLocation::kNone && !v.tensor.memory_planned; }

// A node per instruction that calls something (kernel, delegate, move), the
// method's inputs and outputs as ellipses; an edge from where a tensor is
// first named (a method input, or the instruction that writes it: ExecuTorch
// passes out tensors as arguments, and a planned tensor is written before it
// is read) to each later instruction naming it. Constants are not drawn.
void ChainDot(const PteMethod& m, size_t index, std::ostream& out) {
  const PteChain& c = m.chain_list[index];
  const std::string prefix = "c" + std::to_string(index) + "_";
  std::map<int64_t, std::string> first;  // value -> the node that first names it
  for (size_t i = 0; i < m.input_values.size(); ++i) {
    const int64_t v = m.input_values[i];
    const std::string id = prefix + "in" + std::to_string(i);
    out << "  " << id << " [shape=ellipse, label=\"" << DotEscape("input " + std::to_string(i) + ": " + ArgText(m, v))
        << "\"];\n";
    first.emplace(v, id);
  }
  for (size_t i = 0; i < c.instructions.size(); ++i) {
    const PteInstruction& in = c.instructions[i];
    if (in.kind == PteInstructionKind::kFree) continue;
    const std::string id = prefix + "i" + std::to_string(i);
    out << "  " << id << " [label=\"" << DotEscape(std::to_string(i) + ": " + Callee(m, in)) << "\"];\n";
    for (int64_t v : TensorsNamed(m, in)) {
      if (IsConstant(m.value_table[static_cast<size_t>(v)])) continue;
      auto [it, is_first] = first.emplace(v, id);
      if (!is_first && it->second != id) out << "  " << it->second << " -> " << id << ";\n";
    }
  }
  for (size_t o = 0; o < m.output_values.size(); ++o) {
    const int64_t v = m.output_values[o];
    const std::string id = prefix + "out" + std::to_string(o);
    out << "  " << id << " [shape=ellipse, label=\"" << DotEscape("output " + std::to_string(o) + ": " + ArgText(m, v))
        << "\"];\n";
    if (auto it = first.find(v); it != first.end()) out << "  " << it->second << " -> " << id << ";\n";
  }
}

const PteMethod& FindMethod(const PteProgram& p, const std::string& name) {
  for (const PteMethod& m : p.methods) {
    if (m.name == name) return m;
  }
  // Only the default asked for nothing in particular: the first method.
  if (name == "forward" && !p.methods.empty()) return p.methods.front();
  std::string names;
  for (const PteMethod& m : p.methods) names += (names.empty() ? "" : ", ") + m.name;
  throw Error(ErrorKind::kUsage, "no method '" + EscapeText(name) + "' in the program (it has " +
                                     (names.empty() ? std::string("none") : EscapeText(names)) + ")");
}

}  // namespace

std::string RenderPteGraph(const PteFile& file, const std::string& method, bool dot) {
  if (file.kind == PteKind::kFlatTensor) {
    throw Error(ErrorKind::kFormat, "an ExecuTorch data file (.ptd) holds tensors, not a program: no graph to print");
  }
  const PteMethod& m = FindMethod(file.program, method);
  std::ostringstream out;
  if (dot) {
    out << "digraph \"" << DotEscape(m.name) << "\" {\n";
    out << "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
    for (size_t c = 0; c < m.chain_list.size(); ++c) ChainDot(m, c, out);
    out << "}\n";
  } else {
    for (size_t c = 0; c < m.chain_list.size(); ++c) ChainText(m, c, out);
  }
  return out.str();
}

namespace {

// One chain as the report's graph: the method's inputs, each call, the
// outputs, linked as ChainDot links them; `module` names the chain when the
// method has several.
void ChainNodes(const PteMethod& m, size_t index, const std::string& module, ReportGraph& g) {
  std::map<int64_t, uint32_t> first;  // value -> the node that first names it
  auto add = [&](std::string label, const char* kind) {
    g.nodes.push_back({std::move(label), module, kind, {}});
    return static_cast<uint32_t>(g.nodes.size() - 1);
  };
  for (size_t i = 0; i < m.input_values.size(); ++i) {
    first.emplace(m.input_values[i], add("input " + std::to_string(i), "input"));
  }
  for (const PteInstruction& in : m.chain_list[index].instructions) {
    if (in.kind == PteInstructionKind::kFree || in.kind == PteInstructionKind::kJumpFalse) continue;
    const uint32_t id = add(Callee(m, in), in.kind == PteInstructionKind::kDelegateCall ? "delegate" : "op");
    for (int64_t v : TensorsNamed(m, in)) {
      if (IsConstant(m.value_table[static_cast<size_t>(v)])) continue;
      auto [it, is_first] = first.emplace(v, id);
      if (!is_first && it->second != id) g.nodes[id].from.push_back(it->second);
    }
  }
  for (size_t o = 0; o < m.output_values.size(); ++o) {
    const uint32_t id = add("output " + std::to_string(o), "output");
    if (auto it = first.find(m.output_values[o]); it != first.end()) g.nodes[id].from.push_back(it->second);
  }
}

}  // namespace

ReportGraphs PteReportGraphs(const PteFile& file) {
  ReportGraphs out;
  if (file.kind == PteKind::kFlatTensor) {
    out.note = "An ExecuTorch data file (.ptd) holds tensors, not a program: it has no graph.";
    return out;
  }
  for (const PteMethod& m : file.program.methods) {
    ReportGraph g{m.name, {}};
    for (size_t c = 0; c < m.chain_list.size(); ++c) {
      ChainNodes(m, c, m.chain_list.size() > 1 ? "chain " + std::to_string(c) : "", g);
    }
    out.graphs.push_back(std::move(g));
  }
  out.note = "Each method's calls (kernels, delegates, moves) and the tensors between them, as tsctl graph --format dot "
             "draws them; constants are not drawn. ExecuTorch keeps no modules: a long method is cut into parts.";
  return out;
}

}  // namespace tsctl
