#include "tsctl/pickle.h"

#include <cstring>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

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

namespace {

class Parser {
 public:
  Parser(std::string_view bytes, const PickleLimits& limits, PickleFacts* facts)
      : in_(bytes), limits_(limits), facts_(facts) {}

  // Parses, then walks the result to bound its depth and expanded size and to
  // refuse cycles. On failure, breaks every cycle the pickle built, so that
  // nothing leaks.
  PyRef Parse() {
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

 private:
  static void Clear(PyValue& v) {
    std::vector<PyRef> pending;
    TakeChildren(v, pending);
  }

  // The i-th child of `v` in a fixed order (items, dict keys and values,
  // callable, state); null for an absent one.
  static size_t ChildCount(const PyValue& v) { return v.items.size() + 2 * v.entries.size() + 2; }
  static PyValue* Child(const PyValue& v, size_t i) {
    if (i < v.items.size()) return v.items[i].get();
    i -= v.items.size();
    if (i < 2 * v.entries.size()) {
      const auto& e = v.entries[i / 2];
      return (i % 2 ? e.second : e.first).get();
    }
    i -= 2 * v.entries.size();
    return (i == 0 ? v.callable : v.state).get();
  }

  // Iterative depth-first walk over the value graph (memo references make it
  // a DAG): each value is visited once.
  void Walk(const PyRef& root) {
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

  void Mutated(const PyRef& v) {
    if (v->walk == 0) {
      v->walk = 3;  // listed; reset below so the walk starts clean
      mutated_.push_back(v);
    }
  }

  void Global(const std::string& module, const std::string& name) {
    if (!facts_) return;
    std::string q = module + "." + name;
    if (globals_seen_.insert(q).second) facts_->globals.push_back(std::move(q));
  }

  PyRef Run() {
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

  [[noreturn]] void Fail(const std::string& what) const {
    throw Error(ErrorKind::kFormat, "malformed pickle at offset " + std::to_string(op_pos_) + ": " + what);
  }

  std::string_view Take(size_t n) {
    if (n > in_.size() - pos_) Fail("data ends inside an opcode");
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  uint64_t LE(size_t n) {
    std::string_view s = Take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[i])) << (8 * i);
    return v;
  }
  std::string Line() {
    size_t nl = in_.find('\n', pos_);
    if (nl == std::string_view::npos) Fail("text argument without a newline");
    std::string s(in_.substr(pos_, nl - pos_));
    pos_ = nl + 1;
    return s;
  }

  PyRef New(PyKind kind) {
    if (++created_ > limits_.max_values) Fail("more values than the limit");
    auto v = std::make_shared<PyValue>();
    v->kind = kind;
    return v;
  }
  void Push(PyRef v) {
    if (stack_.size() >= limits_.max_values) Fail("stack deeper than the limit");
    stack_.push_back(std::move(v));
  }
  PyRef Pop() {
    if (stack_.size() <= Floor()) Fail("stack underflow");
    PyRef v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  PyRef& Top() {
    if (stack_.size() <= Floor()) Fail("stack underflow");
    return stack_.back();
  }
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<PyRef> PopMark() {
    if (marks_.empty()) Fail("no MARK on the stack");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PyRef> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  PyRef Int(int64_t v) {
    PyRef r = New(PyKind::kInt);
    r->integer = v;
    return r;
  }
  PyRef Str(PyKind kind, std::string_view s) {
    PyRef r = New(kind);
    r->str.assign(s);
    return r;
  }
  PyRef Long(std::string_view bytes) {
    if (bytes.size() <= 8) {
      uint64_t v = 0;
      for (size_t i = 0; i < bytes.size(); ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
      if (!bytes.empty() && bytes.size() < 8 && (static_cast<uint8_t>(bytes.back()) & 0x80)) {
        v |= ~uint64_t{0} << (8 * bytes.size());  // sign-extend
      }
      return Int(static_cast<int64_t>(v));
    }
    PyRef r = New(PyKind::kInt);
    r->str = "<" + std::to_string(bytes.size() * 8) + "-bit integer>";
    return r;
  }
  void Memo(uint64_t idx) {
    if (memo_.size() >= limits_.max_values && !memo_.count(idx)) Fail("more memo entries than the limit");
    memo_[idx] = Top();
  }
  PyRef Recall(uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) Fail("memo key " + std::to_string(idx) + " is not defined");
    return it->second;
  }
  PyRef MakeObject(PyRef callable, std::vector<PyRef> args) {
    PyRef o = New(PyKind::kObject);
    o->callable = std::move(callable);
    o->items = std::move(args);
    return o;
  }
  void AddToDict(PyRef& dict, std::vector<PyRef>& kv) {
    if (kv.size() % 2 != 0) Fail("SETITEMS with an odd number of items");
    for (size_t i = 0; i < kv.size(); i += 2) Insert(dict, kv[i], kv[i + 1]);
  }
  void Insert(PyRef& dict, PyRef key, PyRef value) {
    Mutated(dict);
    if (dict->kind == PyKind::kObject) {  // e.g. an OrderedDict built by REDUCE
      if (!dict->state) dict->state = New(PyKind::kDict);
      dict->state->entries.emplace_back(std::move(key), std::move(value));
      return;
    }
    if (dict->kind != PyKind::kDict) Fail("SETITEM on a value that is not a dict");
    dict->entries.emplace_back(std::move(key), std::move(value));
  }
  void Append(PyRef& list, std::vector<PyRef> items) {
    Mutated(list);
    if (list->kind == PyKind::kList || list->kind == PyKind::kSet) {
      for (auto& i : items) list->items.push_back(std::move(i));
    } else if (list->kind == PyKind::kObject) {  // list subclass: keep the items as state
      if (!list->state) list->state = New(PyKind::kList);
      for (auto& i : items) list->state->items.push_back(std::move(i));
    } else {
      Fail("APPEND on a value that is not a list");
    }
  }
  PyRef Tuple(std::vector<PyRef> items) {
    PyRef t = New(PyKind::kTuple);
    t->items = std::move(items);
    return t;
  }

  void Step(uint8_t op) {
    switch (op) {
      case 0x80: Take(1); break;  // PROTO
      case 0x95: Take(8); break;  // FRAME
      case '(':
        if (marks_.size() >= limits_.max_values) Fail("more MARKs than the limit");
        marks_.push_back(stack_.size());
        break;
      case ')': Push(New(PyKind::kTuple)); break;
      case ']': Push(New(PyKind::kList)); break;
      case '}': Push(New(PyKind::kDict)); break;
      case 0x8f: Push(New(PyKind::kSet)); break;
      case 'N': Push(New(PyKind::kNone)); break;
      case 0x88:
      case 0x89: {
        PyRef b = New(PyKind::kBool);
        b->boolean = op == 0x88;
        Push(b);
        break;
      }
      case 'J': Push(Int(static_cast<int32_t>(LE(4)))); break;
      case 'K': Push(Int(static_cast<int64_t>(LE(1)))); break;
      case 'M': Push(Int(static_cast<int64_t>(LE(2)))); break;
      case 0x8a: { size_t n = LE(1); Push(Long(Take(n))); break; }
      case 0x8b: {
        uint64_t n = LE(4);
        if (n > in_.size()) Fail("LONG4 length past the end");
        Push(Long(Take(n)));
        break;
      }
      case 'I':
      case 'L': {
        std::string s = Line();
        if (!s.empty() && s.back() == 'L') s.pop_back();
        if (s == "00" || s == "01") {
          PyRef b = New(PyKind::kBool);
          b->boolean = s == "01";
          Push(b);
        } else {
          try { Push(Int(std::stoll(s))); } catch (...) { Fail("bad INT text"); }
        }
        break;
      }
      case 'G': {
        uint64_t bits = 0;
        std::string_view s = Take(8);
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(s[i]);
        PyRef f = New(PyKind::kFloat);
        std::memcpy(&f->real, &bits, 8);
        Push(f);
        break;
      }
      case 'F': {
        PyRef f = New(PyKind::kFloat);
        try { f->real = std::stod(Line()); } catch (...) { Fail("bad FLOAT text"); }
        Push(f);
        break;
      }
      case 'X': Push(Str(PyKind::kString, Take(LE(4)))); break;
      case 0x8c: Push(Str(PyKind::kString, Take(LE(1)))); break;
      case 0x8d: Push(Str(PyKind::kString, Take(LE(8)))); break;
      case 'V': Push(Str(PyKind::kString, Line())); break;
      case 'T': Push(Str(PyKind::kString, Take(LE(4)))); break;
      case 'U': Push(Str(PyKind::kString, Take(LE(1)))); break;
      case 'S': Push(Str(PyKind::kString, Line())); break;
      case 'B': Push(Str(PyKind::kBytes, Take(LE(4)))); break;
      case 'C': Push(Str(PyKind::kBytes, Take(LE(1)))); break;
      case 0x8e: Push(Str(PyKind::kBytes, Take(LE(8)))); break;
      case 0x96: Push(Str(PyKind::kBytes, Take(LE(8)))); break;  // BYTEARRAY8
      case 'c': {
        PyRef g = New(PyKind::kGlobal);
        g->str = Line();
        g->name = Line();
        Global(g->str, g->name);
        Push(g);
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        PyRef name = Pop(), module = Pop();
        PyRef g = New(PyKind::kGlobal);
        g->str = module->str;
        g->name = name->str;
        Global(g->str, g->name);
        Push(g);
        break;
      }
      case 'q': Memo(LE(1)); break;
      case 'r': Memo(LE(4)); break;
      case 0x94: Memo(memo_.size()); break;
      case 'p': try { Memo(std::stoull(Line())); } catch (const Error&) { throw; } catch (...) { Fail("bad PUT"); } break;
      case 'h': Push(Recall(LE(1))); break;
      case 'j': Push(Recall(LE(4))); break;
      case 'g': try { Push(Recall(std::stoull(Line()))); } catch (const Error&) { throw; } catch (...) { Fail("bad GET"); } break;
      case 't': Push(Tuple(PopMark())); break;
      case 0x85: { PyRef a = Pop(); Push(Tuple({a})); break; }
      case 0x86: { PyRef b = Pop(), a = Pop(); Push(Tuple({a, b})); break; }
      case 0x87: { PyRef c = Pop(), b = Pop(), a = Pop(); Push(Tuple({a, b, c})); break; }
      case 'l': { PyRef l = New(PyKind::kList); l->items = PopMark(); Push(l); break; }
      case 'd': {
        std::vector<PyRef> kv = PopMark();
        PyRef d = New(PyKind::kDict);
        AddToDict(d, kv);
        Push(d);
        break;
      }
      case 'a': { PyRef v = Pop(); Append(Top(), {v}); break; }
      case 'e': { std::vector<PyRef> items = PopMark(); Append(Top(), std::move(items)); break; }
      case 0x90: { std::vector<PyRef> items = PopMark(); Append(Top(), std::move(items)); break; }
      case 0x91: { PyRef s = New(PyKind::kSet); s->items = PopMark(); Push(s); break; }
      case 's': { PyRef v = Pop(), k = Pop(); Insert(Top(), k, v); break; }
      case 'u': { std::vector<PyRef> kv = PopMark(); AddToDict(Top(), kv); break; }
      case 'R': {
        PyRef args = Pop(), fn = Pop();
        if (args->kind != PyKind::kTuple) Fail("REDUCE arguments are not a tuple");
        Push(MakeObject(fn, args->items));
        break;
      }
      case 0x81: {  // NEWOBJ
        PyRef args = Pop(), cls = Pop();
        Push(MakeObject(cls, args->kind == PyKind::kTuple ? args->items : std::vector<PyRef>{args}));
        break;
      }
      case 0x92: {  // NEWOBJ_EX
        Pop();  // kwargs
        PyRef args = Pop(), cls = Pop();
        Push(MakeObject(cls, args->items));
        break;
      }
      case 'b': {
        PyRef state = Pop();
        PyRef& obj = Top();
        if (obj->kind != PyKind::kObject) {  // BUILD on a plain value: wrap it
          PyRef o = New(PyKind::kObject);
          o->items = {obj};
          obj = o;
        }
        Mutated(obj);
        obj->state = state;
        break;
      }
      case 'Q': { PyRef id = Pop(); PyRef p = New(PyKind::kPersistentId); p->items = {id}; Push(p); break; }
      case 'P': { PyRef p = New(PyKind::kPersistentId); p->items = {Str(PyKind::kString, Line())}; Push(p); break; }
      case '0': Pop(); break;
      case '2': Push(Top()); break;
      case '1': PopMark(); break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "0x%02x", op);
        Fail(std::string("unknown opcode ") + buf);
      }
    }
  }

  std::string_view in_;
  const PickleLimits& limits_;
  PickleFacts* facts_;
  std::unordered_set<std::string> globals_seen_;
  std::vector<PyRef> mutated_;  // containers changed after creation: where cycles can form
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  size_t created_ = 0;
  std::vector<PyRef> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PyRef> memo_;
};

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
  return Parser(bytes, limits, facts).Parse();
}

std::string Repr(const PyRef& value, size_t max_chars) {
  std::ostringstream out;
  ReprInto(value, out, max_chars, 0);
  std::string s = out.str();
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "...";
  return s;
}

}  // namespace tsctl
