// StateWrites (module_state.h): what a method's graph writes of the module
// it belongs to, found by following each value back to where it came from.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <set>
#include <unordered_map>

#include "module_state.h"

namespace tsctl {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// Where a value of the graph comes from, when it is the module's state: its
// dotted path, the object it is when that is a module or class instance, and
// the type of the module that holds it.
struct Origin {
  std::string path;  // "" for the module itself
  c10::IValue object;
  std::string owner_type;
  // A list, tuple or dict built here from state: what is taken out of it is
  // state, but changing it changes nothing the model keeps.
  bool built_here = false;
};

// Operators whose schema (1.13's) does not say that they update running
// statistics they are given, with the flag that turns that off.
struct HiddenWrite {
  const char* op;
  const char* flag;
};
constexpr HiddenWrite kHiddenWrites[] = {
    {"aten::batch_norm", "training"},         {"aten::_batch_norm_impl_index", "training"},
    {"aten::native_batch_norm", "training"},  {"aten::cudnn_batch_norm", "training"},
    {"aten::miopen_batch_norm", "training"},  {"aten::instance_norm", "use_input_stats"},
};

std::string JoinPath(const std::string& path, const std::string& name) { return path.empty() ? name : path + "." + name; }

std::string TypeName(const c10::IValue& v) {
  if (!v.isObject()) return "";
  const auto name = v.toObjectRef().type()->name();
  return name ? name->qualifiedName() : "";
}

// "FILE:LINE: TEXT" of a source range, or "" when it has no file.
std::string FileLine(const torch::jit::SourceRange& range) {
  const auto flc = range.file_line_col();
  if (!flc || !range.source()) return "";
  const auto& source = range.source();
  std::string text = source->get_line(source->lineno_for_offset(range.start())).str();
  const size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t\r\n");
  text = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  // A traced graph's "line" is the trace's frame, "FILE(LINE): function":
  // the file and line say it already.
  if (text.rfind(std::get<0>(*flc) + "(", 0) == 0) text.clear();
  constexpr size_t kMaxText = 120;
  if (text.size() > kMaxText) text = text.substr(0, kMaxText) + "...";
  return std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc)) + (text.empty() ? "" : ": " + text);
}

// The line of the source the model was scripted or traced from, where the
// archive's debug records keep it; else of its code/ file.
std::string LineOf(const torch::jit::SourceRange& range) {
  try {
    if (const auto original = range.findSourceRangeThatGenerated()) {
      if (std::string s = FileLine(*original); !s.empty()) return s;
    }
  } catch (const std::exception&) {
    // Debug records LibTorch cannot read: the code's own line.
  }
  return FileLine(range);
}

// The source line of `n`: its own, else (prim::SetAttr and prim::GetAttr
// keep none once loaded) that of the value it stores, of a node before it,
// or of the node that holds its block.
std::string WhereOf(const Node* n) {
  if (std::string s = LineOf(n->sourceRange()); !s.empty()) return s;
  if (n->kind() == c10::prim::SetAttr && n->inputs().size() > 1) {
    if (std::string s = LineOf(n->input(1)->node()->sourceRange()); !s.empty()) return s;
  }
  int steps = 0;
  for (const Node* p = n->prev(); p && p->kind() != c10::prim::Param && steps < 8; p = p->prev(), ++steps) {
    if (std::string s = LineOf(p->sourceRange()); !s.empty()) return s;
  }
  const Node* holder = n->owningBlock() ? n->owningBlock()->owningNode() : nullptr;
  return holder ? WhereOf(holder) : "";
}

class StateFinder {
 public:
  explicit StateFinder(const TrainingFlags& training) : training_(training) {}

  // `graph` (inlined) of a method of `self`, whose state is at `prefix`.
  void Graph(const std::shared_ptr<torch::jit::Graph>& graph, const c10::IValue& self, const std::string& prefix,
             const std::string& owner_type) {
    if (graph->inputs().empty()) return;
    state_[graph->inputs()[0]] = {prefix, self, owner_type};
    Walk(graph->block());
  }

  std::vector<StateWrite> Take() { return std::move(out_); }

 private:
  void Walk(Block* block) {
    for (Node* n : block->nodes()) Visit(n);
  }

  const Origin* StateOf(const Value* v) const {
    auto it = state_.find(v);
    return it == state_.end() ? nullptr : &it->second;
  }

  std::optional<bool> Known(const Value* v) const {
    auto it = known_.find(v);
    if (it == known_.end()) return std::nullopt;
    return it->second;
  }

  void Write(const Node* n, const Origin& o, const std::string& attribute) {
    StateWrite w{attribute.empty() ? "the module itself" : attribute, n->kind().toQualString(), WhereOf(n),
                 KnownStateNote(attribute, o.owner_type)};
    if (seen_.insert(w.attribute + "\n" + w.op + "\n" + w.where).second) out_.push_back(std::move(w));
  }

  // Block outputs into the node's outputs: state if any is; a bool known
  // when every block that runs agrees.
  void Merge(Node* n, const std::vector<Block*>& ran) {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      std::optional<bool> agreed;
      bool all_known = true;
      for (Block* b : ran) {
        if (i >= b->outputs().size()) continue;
        if (const Origin* o = StateOf(b->outputs()[i]); o && !state_.count(n->outputs()[i])) state_[n->outputs()[i]] = *o;
        const auto k = Known(b->outputs()[i]);
        if (!k || (agreed && *agreed != *k)) all_known = false;
        else agreed = k;
      }
      if (all_known && agreed) known_[n->outputs()[i]] = *agreed;
    }
  }

  void If(Node* n) {
    const auto cond = Known(n->input(0));
    std::vector<Block*> ran;
    if (cond) ran.push_back(n->blocks()[*cond ? 0 : 1]);
    else ran = {n->blocks()[0], n->blocks()[1]};
    for (Block* b : ran) Walk(b);
    Merge(n, ran);
  }

  void Loop(Node* n) {
    Block* body = n->blocks()[0];
    // Inputs: trip count, condition, carried values; the body's: the
    // iteration, carried values; its outputs: condition, carried values.
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 2; i < n->inputs().size() && i - 1 < body->inputs().size(); ++i) {
        if (const Origin* o = StateOf(n->input(i))) state_[body->inputs()[i - 1]] = *o;
        if (pass == 1 && i - 1 < body->outputs().size()) {
          if (const Origin* o = StateOf(body->outputs()[i - 1])) state_[body->inputs()[i - 1]] = *o;
        }
      }
      Walk(body);
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Origin* o = i + 2 < n->inputs().size() ? StateOf(n->input(i + 2)) : nullptr;
      if (!o && i + 1 < body->outputs().size()) o = StateOf(body->outputs()[i + 1]);
      if (o) state_[n->outputs()[i]] = *o;
    }
  }

  void GetAttr(Node* n, const Origin& from) {
    const std::string name = n->s(c10::attr::name);
    Origin o{JoinPath(from.path, name), c10::IValue(), TypeName(from.object)};
    if (from.object.isObject()) {
      const auto& obj = from.object.toObjectRef();
      if (obj.type()->hasAttribute(name)) {
        o.object = obj.getAttr(name);
        if (name == "training" && o.object.isBool()) {
          auto it = training_.find(&obj);
          known_[n->output()] = it != training_.end() ? it->second : o.object.toBool();
        }
      }
    }
    state_[n->output()] = std::move(o);
  }

  // A call left after inlining (an interface's method): the method of the
  // object the attribute holds, followed once per function and object.
  void CallMethod(Node* n) {
    const Origin* o = StateOf(n->input(0));
    if (!o || !o->object.isObject() || depth_ >= 8) return;
    const auto& obj = o->object.toObjectRef();
    torch::jit::Function* fn = obj.type()->findMethod(n->s(c10::attr::name));
    if (!fn || !fn->isGraphFunction()) return;
    if (!followed_.insert({fn, &obj}).second) return;
    auto graph = torch::jit::toGraphFunction(*fn).graph()->copy();
    torch::jit::Inline(*graph);
    ++depth_;
    Graph(graph, o->object, o->path, TypeName(o->object));
    --depth_;
  }

  void Fork(Node* n) {
    auto sub = n->g(c10::attr::Subgraph);
    for (size_t i = 0; i < n->inputs().size() && i < sub->inputs().size(); ++i) {
      if (const Origin* o = StateOf(n->input(i))) state_[sub->inputs()[i]] = *o;
    }
    Walk(sub->block());
  }

  void Schema(Node* n, const c10::FunctionSchema& schema) {
    const auto& args = schema.arguments();
    const std::string kind = n->kind().toQualString();
    for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
      const c10::AliasInfo* alias = args[i].alias_info();
      if (!alias || !alias->isWrite()) continue;
      if (const Origin* o = StateOf(n->input(i)); o && !o->built_here) Write(n, *o, o->path);
    }
    for (const HiddenWrite& h : kHiddenWrites) {
      if (kind != h.op) continue;
      const auto flag = schema.argumentIndexWithName(h.flag);
      if (flag && *flag < n->inputs().size() && Known(n->input(*flag)) == false) break;
      for (const char* name : {"running_mean", "running_var"}) {
        const auto at = schema.argumentIndexWithName(name);
        if (!at || *at >= n->inputs().size()) continue;
        if (const Origin* o = StateOf(n->input(*at)); o && !o->built_here) Write(n, *o, o->path);
      }
    }
    // An output that aliases a state argument (a view, the list itself, an
    // element of it) is state too.
    const auto& returns = schema.returns();
    for (size_t j = 0; j < returns.size() && j < n->outputs().size(); ++j) {
      if (!returns[j].alias_info()) continue;
      for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
        if (!args[i].alias_info()) continue;
        if (const Origin* o = StateOf(n->input(i))) {
          Origin out = *o;
          if (returns[j].alias_info()->isWildcardBefore()) out.built_here = false;  // an element taken out
          state_[n->outputs()[j]] = std::move(out);
          break;
        }
      }
    }
    // `x is None` for a value that cannot be None, and `not`.
    if ((kind == "aten::__is__" || kind == "aten::__isnot__") && n->inputs().size() == 2) {
      const auto& a = n->input(0)->type();
      const bool none_b = n->input(1)->type()->kind() == c10::TypeKind::NoneType;
      if (none_b && a->kind() != c10::TypeKind::OptionalType && a->kind() != c10::TypeKind::NoneType &&
          a->kind() != c10::TypeKind::AnyType) {
        known_[n->output()] = kind == "aten::__isnot__";
      }
    }
    if (kind == "aten::__not__" && n->inputs().size() == 1) {
      if (const auto k = Known(n->input(0))) known_[n->output()] = !*k;
    }
  }

  void Visit(Node* n) {
    const c10::Symbol kind = n->kind();
    if (kind == c10::prim::Constant) {
      if (n->outputs().size() != 1) return;
      const auto& type = n->output()->type();
      if (type->kind() == c10::TypeKind::TensorType) state_[n->output()] = {"a tensor constant of the graph", {}, ""};
      else if (type->kind() == c10::TypeKind::BoolType) known_[n->output()] = n->i(c10::attr::value) != 0;
      return;
    }
    if (kind == c10::prim::GetAttr) {
      if (const Origin* o = StateOf(n->input(0))) GetAttr(n, *o);
      return;
    }
    if (kind == c10::prim::SetAttr) {
      if (const Origin* o = StateOf(n->input(0))) {
        Origin holder = *o;
        holder.owner_type = TypeName(o->object);
        Write(n, holder, JoinPath(o->path, n->s(c10::attr::name)));
      }
      return;
    }
    if (kind == c10::prim::If) return If(n);
    if (kind == c10::prim::Loop) return Loop(n);
    if (kind == c10::prim::CallMethod) return CallMethod(n);
    if (n->hasAttribute(c10::attr::Subgraph)) return Fork(n);
    for (Block* b : n->blocks()) Walk(b);
    if (const c10::FunctionSchema* schema = n->maybeSchema()) return Schema(n, *schema);
    // Containers built from state, and what is taken out of them, are state.
    static const std::set<c10::Symbol> kBuild = {c10::prim::ListConstruct, c10::prim::TupleConstruct,
                                                 c10::prim::DictConstruct};
    static const std::set<c10::Symbol> kTakeOut = {c10::prim::ListUnpack, c10::prim::TupleUnpack, c10::prim::TupleIndex};
    static const std::set<c10::Symbol> kSame = {c10::prim::unchecked_cast, c10::prim::unchecked_unwrap_optional};
    if (!kBuild.count(kind) && !kTakeOut.count(kind) && !kSame.count(kind)) return;
    for (const Value* in : n->inputs()) {
      if (const Origin* o = StateOf(in)) {
        Origin out = *o;
        if (kBuild.count(kind)) out.built_here = true;
        if (kTakeOut.count(kind)) out.built_here = false;
        for (const Value* v : n->outputs()) state_[v] = out;
        return;
      }
    }
  }

  const TrainingFlags& training_;
  std::unordered_map<const Value*, Origin> state_;
  std::unordered_map<const Value*, bool> known_;
  std::set<std::pair<const torch::jit::Function*, const c10::ivalue::Object*>> followed_;
  int depth_ = 0;
  std::vector<StateWrite> out_;
  std::set<std::string> seen_;
};

}  // namespace

TrainingFlags SavedTrainingFlags(const torch::jit::Module& module) {
  TrainingFlags flags;
  for (const torch::jit::Module& m : module.modules()) flags[m._ivalue().get()] = m.is_training();
  return flags;
}

std::vector<StateWrite> StateWrites(const torch::jit::Module& module, const std::string& method,
                                    const TrainingFlags& training) {
  auto graph = module.get_method(method).graph()->copy();
  torch::jit::Inline(*graph);
  StateFinder finder(training);
  finder.Graph(graph, module._ivalue(), "", TypeName(module._ivalue()));
  return finder.Take();
}

std::string KnownStateNote(const std::string& attribute, const std::string& owner_type) {
  const size_t dot = attribute.rfind('.');
  const std::string leaf = dot == std::string::npos ? attribute : attribute.substr(dot + 1);
  if (owner_type.find("BatchNorm") == std::string::npos && owner_type.find("InstanceNorm") == std::string::npos) return "";
  if (leaf != "running_mean" && leaf != "running_var" && leaf != "num_batches_tracked") return "";
  return "a BatchNorm's running statistics, which it updates in training mode: the model was saved (or traced) in "
         "train() mode; eval() before saving stops it";
}

}  // namespace tsctl
