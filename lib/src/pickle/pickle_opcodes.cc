// What each pickle opcode does to the parser's stack, marks and memo, by
// opcode family, and the helpers that read their arguments and build values.
#include <cstdio>
#include <cstring>

#include "pickle_parser.h"
#include "tsctl/error.h"

namespace tsctl::pickle_internal {

void Parser::Mutated(const PyRef& v) {
  if (v->walk == 0) {
    v->walk = 3;  // listed; Run resets it at STOP so the walk starts clean
    mutated_.push_back(v);
  }
}

void Parser::Global(const std::string& module, const std::string& name) {
  if (!facts_) return;
  std::string q = module + "." + name;
  if (globals_seen_.insert(q).second) facts_->globals.push_back(std::move(q));
}

std::string_view Parser::Take(size_t n) {
  if (n > in_.size() - pos_) Fail("data ends inside an opcode");
  std::string_view s = in_.substr(pos_, n);
  pos_ += n;
  return s;
}
uint64_t Parser::LE(size_t n) {
  std::string_view s = Take(n);
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[i])) << (8 * i);
  return v;
}
std::string Parser::Line() {
  size_t nl = in_.find('\n', pos_);
  if (nl == std::string_view::npos) Fail("text argument without a newline");
  std::string s(in_.substr(pos_, nl - pos_));
  pos_ = nl + 1;
  return s;
}

PyRef Parser::New(PyKind kind) {
  if (++created_ > limits_.max_values) Fail("more values than the limit");
  auto v = std::make_shared<PyValue>();
  v->kind = kind;
  return v;
}
void Parser::Push(PyRef v) {
  if (stack_.size() >= limits_.max_values) Fail("stack deeper than the limit");
  stack_.push_back(std::move(v));
}
PyRef Parser::Pop() {
  if (stack_.size() <= Floor()) Fail("stack underflow");
  PyRef v = std::move(stack_.back());
  stack_.pop_back();
  return v;
}
PyRef& Parser::Top() {
  if (stack_.size() <= Floor()) Fail("stack underflow");
  return stack_.back();
}
std::vector<PyRef> Parser::PopMark() {
  if (marks_.empty()) Fail("no MARK on the stack");
  size_t m = marks_.back();
  marks_.pop_back();
  std::vector<PyRef> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
  stack_.resize(m);
  return items;
}
PyRef Parser::Int(int64_t v) {
  PyRef r = New(PyKind::kInt);
  r->integer = v;
  return r;
}
PyRef Parser::Str(PyKind kind, std::string_view s) {
  PyRef r = New(kind);
  r->str.assign(s);
  return r;
}
PyRef Parser::Long(std::string_view bytes) {
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
void Parser::Memo(uint64_t idx) {
  if (memo_.size() >= limits_.max_values && !memo_.count(idx)) Fail("more memo entries than the limit");
  memo_[idx] = Top();
}
PyRef Parser::Recall(uint64_t idx) {
  auto it = memo_.find(idx);
  if (it == memo_.end()) Fail("memo key " + std::to_string(idx) + " is not defined");
  return it->second;
}
PyRef Parser::MakeObject(PyRef callable, std::vector<PyRef> args) {
  PyRef o = New(PyKind::kObject);
  o->callable = std::move(callable);
  o->items = std::move(args);
  return o;
}
void Parser::AddToDict(PyRef& dict, std::vector<PyRef>& kv) {
  if (kv.size() % 2 != 0) Fail("SETITEMS with an odd number of items");
  for (size_t i = 0; i < kv.size(); i += 2) Insert(dict, kv[i], kv[i + 1]);
}
void Parser::Insert(PyRef& dict, PyRef key, PyRef value) {
  Mutated(dict);
  if (dict->kind == PyKind::kObject) {  // e.g. an OrderedDict built by REDUCE
    if (!dict->state) dict->state = New(PyKind::kDict);
    dict->state->entries.emplace_back(std::move(key), std::move(value));
    return;
  }
  if (dict->kind != PyKind::kDict) Fail("SETITEM on a value that is not a dict");
  dict->entries.emplace_back(std::move(key), std::move(value));
}
void Parser::Append(PyRef& list, std::vector<PyRef> items) {
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
PyRef Parser::Tuple(std::vector<PyRef> items) {
  PyRef t = New(PyKind::kTuple);
  t->items = std::move(items);
  return t;
}

void Parser::Step(uint8_t op) {
  if (StackOp(op) || ScalarOp(op) || StringOp(op) || ContainerOp(op) || MemoOp(op) || ObjectOp(op)) return;
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", op);
  Fail(std::string("unknown opcode ") + buf);
}

// Framing, MARK, and the opcodes that drop or copy stack entries.
bool Parser::StackOp(uint8_t op) {
  switch (op) {
    case 0x80: Take(1); break;  // PROTO
    case 0x95: Take(8); break;  // FRAME
    case '(':
      if (marks_.size() >= limits_.max_values) Fail("more MARKs than the limit");
      marks_.push_back(stack_.size());
      break;
    case '0': Pop(); break;
    case '2': Push(Top()); break;
    case '1': PopMark(); break;
    default: return false;
  }
  return true;
}

// None, booleans, integers and floats.
bool Parser::ScalarOp(uint8_t op) {
  switch (op) {
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
    default: return false;
  }
  return true;
}

// Strings and bytes, in every length encoding.
bool Parser::StringOp(uint8_t op) {
  switch (op) {
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
    default: return false;
  }
  return true;
}

// Tuples, lists, dicts and sets: built empty, from the stack, or added to.
bool Parser::ContainerOp(uint8_t op) {
  switch (op) {
    case ')': Push(New(PyKind::kTuple)); break;
    case ']': Push(New(PyKind::kList)); break;
    case '}': Push(New(PyKind::kDict)); break;
    case 0x8f: Push(New(PyKind::kSet)); break;
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
    default: return false;
  }
  return true;
}

// PUT and GET, binary and text.
bool Parser::MemoOp(uint8_t op) {
  switch (op) {
    case 'q': Memo(LE(1)); break;
    case 'r': Memo(LE(4)); break;
    case 0x94: Memo(memo_.size()); break;
    case 'p': try { Memo(std::stoull(Line())); } catch (const Error&) { throw; } catch (...) { Fail("bad PUT"); } break;
    case 'h': Push(Recall(LE(1))); break;
    case 'j': Push(Recall(LE(4))); break;
    case 'g': try { Push(Recall(std::stoull(Line()))); } catch (const Error&) { throw; } catch (...) { Fail("bad GET"); } break;
    default: return false;
  }
  return true;
}

// Globals, the calls and BUILDs applied to them, and persistent ids: all
// recorded as placeholders, never resolved or run.
bool Parser::ObjectOp(uint8_t op) {
  switch (op) {
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
    default: return false;
  }
  return true;
}

}  // namespace tsctl::pickle_internal
