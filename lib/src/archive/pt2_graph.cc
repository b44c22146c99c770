// `tsctl graph` of a .pt2: the program's graph as Python's
// `print(torch.export.load(path).graph)` prints it, rebuilt from the program
// JSON the way torch/_export/serde/serialize.py deserializes it (placeholders,
// call_function nodes with positional and keyword arguments, getitem nodes for
// multiple outputs, one output node) and printed as torch/fx/node.py's
// format_node does.
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "pt2_json.h"
#include "../text/units.h"
#include "tsctl/error.h"
#include "tsctl/pt2.h"

namespace tsctl {
namespace {

using namespace pt2_json;

// An argument as FX holds it: a literal (its str()), a node, or a container.
struct Arg {
  enum Kind { kText, kNode, kList, kTuple, kDict } kind = kText;
  std::string text;  // kText: str(value); kNode: the node's name
  // Containers' elements (keys for kDict only). A struct of its own, not a
  // std::pair: clang 14 cannot check a pair of an incomplete type.
  struct Item;
  std::vector<Item> items;
};
struct Arg::Item {
  std::string key;
  Arg value;
};

Arg TextArg(std::string s) { return {Arg::kText, std::move(s), {}}; }
Arg NodeRef(std::string name) { return {Arg::kNode, std::move(name), {}}; }

std::string Scalar(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) return PyFloat(v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  return v.dump();
}

Arg SymArg(const json& v) {
  auto [kind, value] = Union(v);
  if (kind == "as_name" && value->is_string()) return NodeRef(value->get<std::string>());
  return TextArg(value ? Scalar(*value) : "None");
}

Arg List(const json& values, Arg (*each)(const json&), Arg::Kind kind = Arg::kList) {
  Arg a{kind, "", {}};
  if (values.is_array()) {
    for (const json& v : values) a.items.push_back({"", each(v)});
  }
  return a;
}

Arg ScalarArg(const json& v) { return TextArg(Scalar(v)); }
Arg TensorRef(const json& v) { return NodeRef(Str(v, "name", "?")); }
Arg OptionalTensor(const json& v) {
  auto [kind, value] = Union(v);
  return kind == "as_tensor" ? TensorRef(*value) : TextArg("None");
}

// deserialize_input: one Argument union as FX holds it.
Arg Deserialize(const json& arg) {
  auto [kind, value] = Union(arg);
  if (!value || kind == "as_none") return TextArg("None");
  const json& v = *value;
  if (kind == "as_tensor" || kind == "as_custom_obj" || kind == "as_graph") return NodeRef(Str(v, "name", "?"));
  if (kind == "as_scalar_type") return TextArg("torch." + DtypeName(v.is_number_integer() ? v.get<int64_t>() : 0));
  if (kind == "as_memory_format") return TextArg(MemoryFormatName(v.is_number_integer() ? v.get<int64_t>() : -1));
  if (kind == "as_layout") return TextArg(LayoutName(v.is_number_integer() ? v.get<int64_t>() : -1));
  if (kind == "as_device") return TextArg(DeviceText(v));
  if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") return SymArg(v);
  if (kind == "as_tensors") return List(v, TensorRef);
  if (kind == "as_optional_tensors") return List(v, OptionalTensor);
  if (kind == "as_optional_tensor") return OptionalTensor(v);
  if (kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") return List(v, SymArg);
  if (kind == "as_int_lists") return List(v, [](const json& x) { return List(x, ScalarArg, Arg::kTuple); });
  if (kind == "as_float_lists") return List(v, [](const json& x) { return List(x, ScalarArg); });
  if (kind == "as_nested_tensors") return List(v, [](const json& x) { return List(x, TensorRef); });
  if (kind == "as_string_to_argument") {
    Arg d{Arg::kDict, "", {}};
    if (v.is_object()) {
      for (const auto& [k, x] : v.items()) d.items.push_back({k, Deserialize(x)});
    }
    return d;
  }
  if (kind == "as_complex") {
    auto part = [&](const char* key) {
      const json* x = Field(v, key);
      return x && x->is_number() ? PyFloat(x->get<double>()) : std::string("nan");
    };
    return TextArg("(" + part("real") + "+" + part("imag") + "j)");
  }
  if (v.is_array()) return List(v, ScalarArg);  // as_ints, as_floats, as_bools, as_strings
  return TextArg(Scalar(v));                       // as_int, as_float, as_bool, as_string, as_operator
}

// torch/fx/node.py _format_arg.
std::string Format(const Arg& a) {
  switch (a.kind) {
    case Arg::kText: return a.text;
    case Arg::kNode: return "%" + a.text;
    default: break;
  }
  std::string s;
  for (const auto& [key, item] : a.items) s += (s.empty() ? "" : ", ") + (a.kind == Arg::kDict ? key + ": " : "") + Format(item);
  if (a.kind == Arg::kDict) return "{" + s + "}";
  if (a.kind == Arg::kTuple) return "(" + s + (a.items.size() == 1 ? "," : "") + ")";
  return "[" + s + "]";
}

// Python's str() of the output node's argument: repr of each element.
std::string Repr(const Arg& a) {
  if (a.kind == Arg::kText || a.kind == Arg::kNode) return a.text;
  std::string s;
  for (const auto& [key, item] : a.items) s += (s.empty() ? "" : ", ") + (a.kind == Arg::kDict ? "'" + key + "': " : "") + Repr(item);
  if (a.kind == Arg::kDict) return "{" + s + "}";
  if (a.kind == Arg::kTuple) return "(" + s + (a.items.size() == 1 ? "," : "") + ")";
  return "[" + s + "]";
}

// The module a node runs in, from its nn_module_stack metadata as
// torch/_export/serde/serialize.py writes it: "key,path,type" entries joined
// by ";", outermost first (the root's path is empty). The path may hold
// commas ("L['self'].a"); the type does not, nor does the key.
std::string InnermostModule(const std::string& stack) {
  if (stack.empty()) return "";
  const size_t start = stack.rfind(';') == std::string::npos ? 0 : stack.rfind(';') + 1;
  const std::string entry = stack.substr(start);
  const size_t first = entry.find(','), last = entry.rfind(',');
  if (first == std::string::npos || last == first) return "";
  return entry.substr(first + 1, last - first - 1);
}

struct FxNode {
  std::string name, op, target;
  Arg args{Arg::kTuple, "", {}};
  Arg kwargs{Arg::kDict, "", {}};
  std::string module = {};  // the innermost path of its nn_module_stack ("" at the top)
};

void Uses(const Arg& a, std::set<std::string>& out) {
  if (a.kind == Arg::kNode) out.insert(a.text);
  for (const auto& [key, item] : a.items) Uses(item, out);
}

class GraphBuilder {
 public:
  std::vector<FxNode> nodes;

  // A name FX would generate for `base`: base, base_1, base_2, ...
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }
  void Add(FxNode n) {
    used_.insert(n.name);
    nodes.push_back(std::move(n));
  }

  void AddCall(const json& node) {
    FxNode n;
    n.op = "call_function";
    n.module = InnermostModule(Str(Object(node, "metadata"), "nn_module_stack"));
    std::string target = Str(node, "target", "?");
    n.target = target.rfind("_operator.", 0) == 0 ? "operator." + target.substr(10) : target;
    for (const json& input : Array(node, "inputs")) {
      std::string name = Str(input, "name");
      Arg value = Deserialize(Object(input, "arg"));
      if (Int(input, "kind", 1) == 2) {
        n.kwargs.items.push_back({name, std::move(value)});
      } else {
        n.args.items.push_back({"", std::move(value)});
      }
    }
    const json& outputs = Array(node, "outputs");
    auto [kind, value] = outputs.size() == 1 ? Union(outputs[0]) : std::pair<std::string, const json*>{"", nullptr};
    const bool single = kind == "as_tensor" || kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool";
    std::string out_name = !single ? "" : kind == "as_tensor" ? Str(*value, "name") : Str(*value, "as_name");
    n.name = !out_name.empty() ? out_name : !Str(node, "name").empty() ? Str(node, "name") : Fresh(BaseName(n.target));
    if (kind == "as_none") n.name = Fresh(BaseName(n.target) + "_unused");
    const std::string call = n.name;
    Add(std::move(n));
    if (single || kind == "as_none" || outputs.empty()) return;
    // Several outputs: one getitem node per element (generate_getitems).
    Getitems(call, outputs.size() == 1 && kind == "as_tensors" ? *value : outputs, kind == "as_tensors" && outputs.size() == 1);
  }

 private:
  static std::string BaseName(const std::string& target) {
    std::string t = target.rfind("torch.ops.", 0) == 0 ? target.substr(10) : target;
    size_t first = t.find('.');
    if (first != std::string::npos) t = t.substr(first + 1);
    size_t dot = t.find('.');
    return dot == std::string::npos ? t : t.substr(0, dot);
  }

  void Getitem(const std::string& of, size_t index, const std::string& name) {
    FxNode g;
    g.op = "call_function";
    g.module = nodes.empty() ? "" : nodes.back().module;
    g.target = "operator.getitem";
    g.name = name.empty() ? Fresh("getitem") : name;
    g.args.items.push_back({"", NodeRef(of)});
    g.args.items.push_back({"", TextArg(std::to_string(index))});
    Add(std::move(g));
  }

  void Getitems(const std::string& of, const json& list, bool bare_tensors) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (bare_tensors) {
        Getitem(of, i, Str(list[i], "name"));
        continue;
      }
      auto [kind, value] = Union(list[i]);
      if (kind == "as_tensor") {
        Getitem(of, i, Str(*value, "name"));
      } else if (kind == "as_sym_int" || kind == "as_sym_float") {
        Getitem(of, i, Str(*value, "as_name"));
      } else if (kind == "as_none") {
        Getitem(of, i, Fresh("as_none"));
      } else if (value && value->is_array()) {
        Getitem(of, i, "");
        const std::string inner = nodes.back().name;
        Getitems(inner, *value, kind == "as_tensors");
      }
    }
  }

  std::set<std::string> used_;
};

// The program JSON of `model` and its record name.
std::pair<json, std::string> LoadProgram(const Archive& a, const std::string& model) {
  auto records = Pt2ProgramRecords(a);
  if (records.empty()) {
    if (a.kind() == ArchiveKind::kPt2Aoti) {
      throw Error(ErrorKind::kUnavailable,
                  "a .pt2 AOTInductor package holds compiled code and no exported program: there is no graph to print");
    }
    throw Error(ErrorKind::kFormat, "the .pt2 archive holds no models/*.json program");
  }
  for (const auto& [name, record] : records) {
    if (model.empty() || model == name) return {ReadJson(a, record), record};
  }
  std::string names;
  for (const auto& r : records) names += (names.empty() ? "" : ", ") + r.first;
  throw Error(ErrorKind::kUsage, "no model '" + model + "' in the .pt2 archive (models: " + names + ")");
}

// The program's nodes as torch.export.load rebuilds them: placeholders, calls
// (with getitems), the output.
std::vector<FxNode> BuildGraph(const Archive& a, const std::string& model) {
  auto [ep, record] = LoadProgram(a, model);
  const json& graph = Object(Object(ep, "graph_module"), "graph");
  if (graph.empty()) throw Error(ErrorKind::kFormat, record + ": no graph_module.graph");
  GraphBuilder b;
  for (const json& input : Array(graph, "inputs")) {
    auto [kind, value] = Union(input);
    std::string name = !value ? "" : kind == "as_sym_int" ? Str(*value, "as_name") : Str(*value, "name");
    if (name.empty()) name = b.Fresh("arg" + std::to_string(b.nodes.size()));
    b.Add({name, "placeholder", name, {Arg::kTuple, "", {}}, {Arg::kDict, "", {}}});
  }
  for (const json& node : Array(graph, "nodes")) b.AddCall(node);
  FxNode out{"output", "output", "output", {Arg::kTuple, "", {}}, {Arg::kDict, "", {}}};
  Arg results{Arg::kTuple, "", {}};
  for (const json& o : Array(graph, "outputs")) results.items.push_back({"", Deserialize(o)});
  const bool single = Bool(graph, "is_single_tensor_return") && results.items.size() == 1;
  out.args.items.push_back({"", single ? results.items[0].value : results});
  b.nodes.push_back(out);
  return std::move(b.nodes);
}

}  // namespace

std::string Pt2GraphText(const Archive& a, const std::string& model) {
  const std::vector<FxNode> nodes = BuildGraph(a, model);
  std::map<std::string, std::set<std::string>> users;  // node -> the nodes that use it
  for (const FxNode& n : nodes) {
    std::set<std::string> used;
    Uses(n.args, used);
    Uses(n.kwargs, used);
    for (const std::string& u : used) users[u].insert(n.name);
  }
  std::string s = "graph():";
  for (const FxNode& n : nodes) {
    const std::string head = "\n    %" + n.name + " : [num_users=" + std::to_string(users[n.name].size()) + "] = " + n.op;
    if (n.op == "placeholder") {
      s += head + "[target=" + n.target + "]";
    } else if (n.op == "output") {
      s += "\n    return " + Repr(n.args.items[0].value);
    } else {
      s += head + "[target=" + n.target + "](args = " + Format(n.args) + ", kwargs = " + Format(n.kwargs) + ")";
    }
  }
  return s + "\n";
}

std::vector<Pt2GraphNode> Pt2GraphNodes(const Archive& a, const std::string& model) {
  std::vector<Pt2GraphNode> out;
  for (FxNode& n : BuildGraph(a, model)) {
    std::set<std::string> used;
    Uses(n.args, used);
    Uses(n.kwargs, used);
    out.push_back({std::move(n.name), std::move(n.op), std::move(n.target), std::move(n.module),
                   std::vector<std::string>(used.begin(), used.end())});
  }
  return out;
}

}  // namespace tsctl
