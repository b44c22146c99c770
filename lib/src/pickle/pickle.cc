#include "tsctl/pickle.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "pickle_parser.h"
#include "tsctl/error.h"

namespace tsctl {

namespace {

// Moves the children of `v` into `pending`, leaving `v` a leaf.
void TakeChildren(PyValue& v, std::vector<PyRef>& pending) {
  for (auto& i : v.items) {
    if (i) pending.push_back(std::move(i));
  }
  v.items.clear();
  for (auto& [k, val] : v.entries) {
    if (k) pending.push_back(std::move(k));
    if (val) pending.push_back(std::move(val));
  }
  v.entries.clear();
  if (v.callable) pending.push_back(std::move(v.callable));
  if (v.state) pending.push_back(std::move(v.state));
}

}  // namespace

PyValue::~PyValue() {
  if (items.empty() && entries.empty() && !callable && !state) return;
  std::vector<PyRef> pending;
  TakeChildren(*this, pending);
  while (!pending.empty()) {
    PyRef p = std::move(pending.back());
    pending.pop_back();
    // The last owner: empty it first, so its destructor does not recurse.
    if (p.use_count() == 1) TakeChildren(*p, pending);
  }
}

std::string PyValue::QualifiedName() const {
  if (kind == PyKind::kGlobal) return str.empty() ? name : str + "." + name;
  if (kind == PyKind::kObject && callable) return callable->QualifiedName();
  return {};
}

bool PyValue::IsGlobal(std::string_view module, std::string_view global_name) const {
  const PyValue* g = this;
  if (kind == PyKind::kObject && callable) g = callable.get();
  return g->kind == PyKind::kGlobal && g->str == module && g->name == global_name;
}

PyRef PyValue::Get(std::string_view key) const {
  if (kind != PyKind::kDict) return nullptr;
  for (const auto& [k, v] : entries) {
    if (k && k->kind == PyKind::kString && k->str == key) return v;
  }
  return nullptr;
}

namespace pickle_internal {

PyRef Parser::Parse() {
  try {
    PyRef root = Run();
    op_pos_ = pos_ - 1;
    Walk(root);
    // Containers the result does not reach are garbage; empty them in
    // case they form a cycle among themselves.
    for (const PyRef& m : mutated_) {
      if (m->walk == 0) Clear(*m);
    }
    return root;
  } catch (...) {
    for (const PyRef& m : mutated_) Clear(*m);
    throw;
  }
}

void Parser::Clear(PyValue& v) {
  std::vector<PyRef> pending;
  TakeChildren(v, pending);
}

PyValue* Parser::Child(const PyValue& v, size_t i) {
  if (i < v.items.size()) return v.items[i].get();
  i -= v.items.size();
  if (i < 2 * v.entries.size()) {
    const auto& e = v.entries[i / 2];
    return (i % 2 ? e.second : e.first).get();
  }
  i -= 2 * v.entries.size();
  return (i == 0 ? v.callable : v.state).get();
}

void Parser::Walk(const PyRef& root) {
  struct Frame {
    PyValue* v;
    size_t next;
  };
  std::vector<Frame> path;
  root->walk = 1;
  path.push_back({root.get(), 0});
  while (!path.empty()) {
    Frame& f = path.back();
    if (f.next < ChildCount(*f.v)) {
      PyValue* c = Child(*f.v, f.next++);
      if (!c || c->walk == 2) continue;
      if (c->walk == 1) Fail("the pickle refers to itself (a cycle through the memo)");
      if (path.size() >= limits_.max_depth) {
        Fail("values nested deeper than " + std::to_string(limits_.max_depth) + " levels");
      }
      c->walk = 1;
      path.push_back({c, 0});
      continue;
    }
    PyValue* v = f.v;
    uint32_t depth = 0;
    uint64_t expanded = 1;
    for (size_t i = 0, n = ChildCount(*v); i < n; ++i) {
      const PyValue* c = Child(*v, i);
      if (!c) continue;
      depth = std::max(depth, c->depth + 1);
      expanded = std::min(expanded + c->expanded, limits_.max_expanded + 1);
    }
    if (depth > limits_.max_depth) {
      Fail("values nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    if (expanded > limits_.max_expanded) {
      Fail("shared memo references expand to more than " + std::to_string(limits_.max_expanded) + " values");
    }
    v->depth = depth;
    v->expanded = expanded;
    v->walk = 2;
    path.pop_back();
  }
}

PyRef Parser::Run() {
  while (true) {
    if (pos_ >= in_.size()) Fail("pickle ends without a STOP opcode");
    op_pos_ = pos_;
    auto op = static_cast<uint8_t>(in_[pos_++]);
    if (op == '.') {
      if (stack_.empty()) Fail("STOP with an empty stack");
      for (const PyRef& m : mutated_) m->walk = 0;
      return stack_.back();
    }
    Step(op);
  }
}

void Parser::Fail(const std::string& what) const {
  throw Error(ErrorKind::kFormat, "malformed pickle at offset " + std::to_string(op_pos_) + ": " + what);
}

}  // namespace pickle_internal

namespace {

void ReprInto(const PyRef& v, std::ostringstream& out, size_t max_chars, size_t depth);

// A tensor that torch._utils rebuilds, shown by what it is rather than by its
// pickle: "Tensor(Float[8, 8])", "QTensor(QInt8[8, 8], scale=0.05, zero_point=0)"
// (quantized weights inside packed params are otherwise a wall of
// persistent ids). False if `v` is not one.
bool TensorRepr(const PyValue& v, std::ostringstream& out, size_t max_chars, size_t depth) {
  if (v.kind != PyKind::kObject || !v.callable || v.callable->kind != PyKind::kGlobal || v.callable->str != "torch._utils") return false;
  const std::string& fn = v.callable->name;
  if (fn == "_rebuild_parameter" && !v.items.empty() && v.items[0]) {
    out << "Parameter(";
    ReprInto(v.items[0], out, max_chars, depth + 1);
    out << ")";
    return true;
  }
  const bool quantized = fn == "_rebuild_qtensor";
  if ((fn != "_rebuild_tensor_v2" && !quantized) || v.items.size() < 4) return false;
  std::string dtype = "?";
  const PyRef& pid = v.items[0];
  if (pid && pid->kind == PyKind::kPersistentId && !pid->items.empty() && pid->items[0] &&
      pid->items[0]->kind == PyKind::kTuple && pid->items[0]->items.size() >= 2 && pid->items[0]->items[1]) {
    dtype = pid->items[0]->items[1]->name;
    if (dtype.size() > 7 && dtype.compare(dtype.size() - 7, 7, "Storage") == 0) dtype.resize(dtype.size() - 7);
  }
  out << (quantized ? "QTensor(" : "Tensor(") << dtype << "[";
  const PyRef& size = v.items[2];
  if (size && size->kind == PyKind::kTuple) {
    for (size_t i = 0; i < size->items.size() && i < 8; ++i) {
      out << (i ? ", " : "");
      ReprInto(size->items[i], out, max_chars, depth + 1);
    }
    if (size->items.size() > 8) out << ", ...";
  }
  out << "]";
  if (quantized && v.items.size() > 4 && v.items[4] && v.items[4]->kind == PyKind::kTuple) {
    const auto& q = v.items[4]->items;  // (torch.per_tensor_affine, scale, zero_point) or per-channel
    std::string scheme = !q.empty() && q[0] && q[0]->kind == PyKind::kGlobal ? q[0]->name : "";
    if (scheme == "per_tensor_affine" && q.size() >= 3) {
      out << ", scale=";
      ReprInto(q[1], out, max_chars, depth + 1);
      out << ", zero_point=";
      ReprInto(q[2], out, max_chars, depth + 1);
    } else if (!scheme.empty()) {
      out << ", " << scheme;
      if (q.size() >= 4 && q[3] && q[3]->kind == PyKind::kInt) out << " axis=" << q[3]->integer;
    }
  }
  out << ")";
  return true;
}

void ReprInto(const PyRef& v, std::ostringstream& out, size_t max_chars, size_t depth) {
  if (out.tellp() > static_cast<std::streamoff>(max_chars)) return;
  if (!v) { out << "<null>"; return; }
  if (depth > 64) { out << "..."; return; }
  auto seq = [&](const std::vector<PyRef>& items, const char* open, const char* close) {
    out << open;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out << ", ";
      if (out.tellp() > static_cast<std::streamoff>(max_chars)) { out << "..."; break; }
      ReprInto(items[i], out, max_chars, depth + 1);
    }
    if (items.size() == 1 && std::strcmp(open, "(") == 0) out << ",";
    out << close;
  };
  switch (v->kind) {
    case PyKind::kNone: out << "None"; break;
    case PyKind::kBool: out << (v->boolean ? "True" : "False"); break;
    case PyKind::kInt: if (v->str.empty()) out << v->integer; else out << v->str; break;
    case PyKind::kFloat: {
      std::ostringstream f;
      f.precision(17);
      f << v->real;
      out << f.str();
      break;
    }
    case PyKind::kString: out << '\'' << v->str << '\''; break;
    case PyKind::kBytes: out << "b<" << v->str.size() << " bytes>"; break;
    case PyKind::kList: seq(v->items, "[", "]"); break;
    case PyKind::kTuple: seq(v->items, "(", ")"); break;
    case PyKind::kSet: seq(v->items, "{", "}"); break;
    case PyKind::kDict:
      out << "{";
      for (size_t i = 0; i < v->entries.size(); ++i) {
        if (i) out << ", ";
        if (out.tellp() > static_cast<std::streamoff>(max_chars)) { out << "..."; break; }
        ReprInto(v->entries[i].first, out, max_chars, depth + 1);
        out << ": ";
        ReprInto(v->entries[i].second, out, max_chars, depth + 1);
      }
      out << "}";
      break;
    case PyKind::kGlobal: out << v->QualifiedName(); break;
    case PyKind::kObject:
      if (TensorRepr(*v, out, max_chars, depth)) break;
      out << (v->callable ? v->callable->QualifiedName() : std::string("object"));
      seq(v->items, "(", ")");
      if (v->state) { out << ".__setstate__("; ReprInto(v->state, out, max_chars, depth + 1); out << ")"; }
      break;
    case PyKind::kPersistentId:
      out << "persistent_id";
      seq(v->items, "(", ")");
      break;
  }
}

}  // namespace

PyRef ParsePickle(std::string_view bytes, const PickleLimits& limits, PickleFacts* facts) {
  return pickle_internal::Parser(bytes, limits, facts).Parse();
}

std::string Repr(const PyRef& value, size_t max_chars) {
  std::ostringstream out;
  ReprInto(value, out, max_chars, 0);
  std::string s = out.str();
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "...";
  return s;
}

}  // namespace tsctl
