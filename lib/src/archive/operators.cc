// Static operator lists. The serializer (python_print.cpp) prints a call of
// an ATen operator as `torch.NAME(...)` and of any other namespace as
// `ops.NS.NAME(...)`; calls of TorchScript functions and methods are
// qualified (`__torch__.a.b.f(...)`, `self.conv.forward(...)`), so a call is
// an operator when its dotted name starts at `torch.` or `ops.`.
#include "tsctl/operators.h"

#include <algorithm>
#include <cctype>

#include "code_records.h"
#include "tsctl/error.h"
#include "tsctl/pickle.h"

namespace tsctl {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// The dotted name that ends right before position `open` (a '('; Python
// allows blanks between them), and where it starts.
std::string DottedNameBefore(std::string_view line, size_t open, size_t& start) {
  size_t end = open;
  while (end > 0 && IsBlank(line[end - 1])) --end;
  size_t b = end;
  while (b > 0 && (IsIdentChar(line[b - 1]) || line[b - 1] == '.')) --b;
  start = b;
  return std::string(line.substr(b, end - b));
}

// The dotted name that starts right after position `open` (fork's callee).
std::string DottedNameAfter(std::string_view line, size_t open) {
  size_t b = open + 1;
  while (b < line.size() && IsBlank(line[b])) ++b;
  size_t e = b;
  while (e < line.size() && (IsIdentChar(line[e]) || line[e] == '.')) ++e;
  return std::string(line.substr(b, e - b));
}

// Which operator a dotted call name is, or "".
std::string OperatorOfCall(const std::string& name) {
  auto parts = [&] {
    std::vector<std::string> p;
    size_t s = 0;
    while (true) {
      size_t dot = name.find('.', s);
      p.push_back(name.substr(s, dot == std::string::npos ? std::string::npos : dot - s));
      if (dot == std::string::npos) break;
      s = dot + 1;
    }
    return p;
  }();
  for (const auto& p : parts) {
    if (p.empty()) return "";
  }
  if (parts.size() == 2 && parts[0] == "torch") return "aten::" + parts[1];
  // LibTorch's importer (import_source.cpp, sugared_value.cpp): `math` and
  // `torch.autograd` are the aten namespace too.
  if (parts.size() == 2 && parts[0] == "math") return "aten::" + parts[1];
  if (parts.size() == 3 && parts[0] == "torch" && parts[1] == "autograd") return "aten::" + parts[2];
  if (parts.size() == 3 && parts[0] == "ops") return parts[1] + "::" + parts[2];
  if (parts.size() == 4 && parts[0] == "torch" && parts[1] == "ops") return parts[2] + "::" + parts[3];
  if (parts.size() == 1) {
    static const std::map<std::string, std::string> kBuiltins = {
        {"int", "aten::Int"},       {"float", "aten::Float"},   {"bool", "aten::Bool"}, {"str", "aten::str"},
        {"sorted", "aten::sorted"}, {"len", "aten::len"},       {"hash", "aten::hash"}, {"ord", "aten::ord"},
        {"chr", "aten::chr"},       {"divmod", "aten::divmod"}, {"print", "prim::Print"}};
    auto it = kBuiltins.find(parts[0]);
    if (it != kBuiltins.end()) return it->second;
  }
  return "";
}

std::vector<OperatorUse> Sorted(const std::map<std::string, uint64_t>& counts) {
  std::vector<OperatorUse> out;
  for (const auto& [name, n] : counts) out.push_back({name, n});
  return out;
}

void AddCounts(const std::vector<OperatorUse>& uses, std::map<std::string, uint64_t>& into) {
  for (const auto& u : uses) into[u.name] += u.count;
}

// A tuple's or list's items; empty for anything else.
const std::vector<PyRef>& Items(const PyRef& v) {
  static const std::vector<PyRef> kNone;
  if (v && (v->kind == PyKind::kTuple || v->kind == PyKind::kList)) return v->items;
  return kNone;
}

// The value of ("key", value) in a table of pairs; null if absent.
PyRef TableField(const PyRef& table, const std::string& key) {
  for (const PyRef& pair : Items(table)) {
    const auto& kv = Items(pair);
    if (kv.size() == 2 && kv[0]->kind == PyKind::kString && kv[0]->str == key) return kv[1];
  }
  return nullptr;
}

}  // namespace

const UnsafeOperator* FindUnsafeOperator(const std::string& op) {
  static constexpr UnsafeOperator kUnsafe[] = {
      {"aten::from_file", "reads any file into a tensor", nullptr},
      {"aten::save", "writes a file", nullptr},
      {"inductor::_reinterpret_tensor", "views memory with sizes and offsets it never checks", nullptr},
      {"aten::_sparse_coo_tensor_unsafe", "builds a sparse tensor from indices it never checks", nullptr},
      {"aten::_sparse_csr_tensor_unsafe", "builds a sparse tensor from indices it never checks", nullptr},
      {"aten::_sparse_csc_tensor_unsafe", "builds a sparse tensor from indices it never checks", nullptr},
      {"aten::_sparse_bsr_tensor_unsafe", "builds a sparse tensor from indices it never checks", nullptr},
      {"aten::_sparse_bsc_tensor_unsafe", "builds a sparse tensor from indices it never checks", nullptr},
      {"aten::_sparse_compressed_tensor_unsafe", "builds a sparse tensor from indices it never checks", nullptr},
      {"aten::segment_reduce", "trusts its lengths and offsets (unsafe=True reads outside the tensor)", "unsafe"},
      // Views that LibTorch never bound-checks against the storage (as
      // as_strided and view do; measured on 1.13): each reads or writes any
      // memory of the process.
      {"aten::_reshape_alias", "views memory with sizes and strides it never checks against the storage", nullptr},
      {"aten::_reshape_alias_copy", "copies a view with sizes and strides it never checks against the storage", nullptr},
      {"aten::set_", "views memory at an offset and sizes it never checks against the storage", nullptr,
       "storage_offset"},
  };
  for (const UnsafeOperator& u : kUnsafe) {
    if (op == u.op) return &u;
  }
  return nullptr;
}

bool UnsafeOperator::Flags(const std::string& overload, const std::vector<std::string>& arguments) const {
  if (!only_with) return true;
  return std::find(arguments.begin(), arguments.end(), only_with) != arguments.end() ||
         overload.find(only_with) != std::string::npos;
}

std::string OperatorNamespace(const std::string& op) {
  size_t sep = op.find("::");
  return sep == std::string::npos ? "" : op.substr(0, sep);
}

std::string OperatorBaseName(const std::string& op) {
  size_t sep = op.find("::");
  size_t dot = op.find('.', sep == std::string::npos ? 0 : sep + 2);
  return op.substr(0, dot);
}

std::map<std::string, std::vector<OperatorUse>> OperatorList::ByNamespace() const {
  std::map<std::string, std::vector<OperatorUse>> out;
  for (const auto& u : totals) out[OperatorNamespace(u.name)].push_back(u);
  return out;
}

std::vector<std::string> OperatorList::Names() const {
  std::vector<std::string> out;
  for (const auto& u : totals) out.push_back(u.name);
  return out;
}

std::vector<MethodOperators> OperatorsInCode(const std::string& record, std::string_view source) {
  const std::string module = ModuleOfRecord(record);
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, uint64_t>> counts;
  std::string current_class, current;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t eol = source.find('\n', pos);
    std::string_view line = source.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? source.size() : eol + 1;
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    std::string_view body = line.substr(indent);
    // Python's tokenizer takes any blanks after `def` and `class`.
    auto keyword = [&](std::string_view kw) {
      return body.size() > kw.size() && body.substr(0, kw.size()) == kw && IsBlank(body[kw.size()]);
    };
    auto word_after = [&](size_t skip) {
      while (skip < body.size() && IsBlank(body[skip])) ++skip;
      size_t e = skip;
      while (e < body.size() && IsIdentChar(body[e])) ++e;
      return std::string(body.substr(skip, e - skip));
    };
    if (indent == 0 && keyword("class")) {
      current_class = word_after(6);
      current.clear();
      continue;
    }
    if (keyword("def")) {
      if (indent == 0) current_class.clear();
      current = module + "." + (current_class.empty() ? "" : current_class + ".") + word_after(4);
      if (!counts.count(current)) order.push_back(current);
      counts[current];
    }
    // Scan for calls outside strings and comments.
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      char c = line[i];
      if (quote) {
        if (c == '\\') ++i;
        else if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') {
        quote = c;
        continue;
      }
      if (c == '#') break;
      if (c != '(') continue;
      size_t start = 0;
      std::string name = DottedNameBefore(line, i, start);
      if (name.empty() || name[0] == '.') continue;  // a method call on a value
      // fork(f, args...) calls f: an operator passed to it is called too.
      if (name == "fork") name = DottedNameAfter(line, i);
      std::string op = OperatorOfCall(name);
      if (op.empty()) continue;
      std::string owner = current.empty() ? module : current;
      if (!counts.count(owner)) order.push_back(owner);
      counts[owner][op] += 1;
    }
  }
  std::vector<MethodOperators> out;
  for (const auto& name : order) out.push_back({name, "code", Sorted(counts[name])});
  return out;
}

std::vector<MethodOperators> OperatorsInBytecode(std::string_view bytecode_pkl) {
  PyRef root = ParsePickle(bytecode_pkl);
  if (!root || root->kind != PyKind::kTuple || root->items.empty() || root->items[0]->kind != PyKind::kInt) {
    throw Error(ErrorKind::kFormat, "bytecode.pkl is not a (version, methods...) tuple");
  }
  std::vector<MethodOperators> out;
  for (size_t m = 1; m < root->items.size(); ++m) {
    const auto& method = Items(root->items[m]);
    if (method.size() < 2 || method[0]->kind != PyKind::kString) {
      throw Error(ErrorKind::kFormat, "bytecode.pkl: method " + std::to_string(m) + " is not a (name, table) tuple");
    }
    std::vector<std::string> table;
    for (const PyRef& op : Items(TableField(method[1], "operators"))) {
      const auto& parts = Items(op);
      if (parts.empty() || parts[0]->kind != PyKind::kString) throw Error(ErrorKind::kFormat, "bytecode.pkl: malformed operator entry");
      std::string name = parts[0]->str;
      if (parts.size() > 1 && parts[1]->kind == PyKind::kString && !parts[1]->str.empty()) name += "." + parts[1]->str;
      table.push_back(name);
    }
    std::map<std::string, uint64_t> counts;
    for (const PyRef& ins : Items(TableField(method[1], "instructions"))) {
      const auto& parts = Items(ins);
      if (parts.size() < 2 || parts[0]->kind != PyKind::kString || parts[1]->kind != PyKind::kInt) continue;
      if (parts[0]->str != "OP" && parts[0]->str != "OPN") continue;
      int64_t index = parts[1]->integer;
      if (index < 0 || static_cast<size_t>(index) >= table.size()) {
        throw Error(ErrorKind::kFormat, "bytecode.pkl: " + method[0]->str + " calls operator " + std::to_string(index) +
                                            " of " + std::to_string(table.size()));
      }
      counts[table[static_cast<size_t>(index)]] += 1;
    }
    // Operators in the table that no instruction calls still need registering.
    for (const auto& name : table) counts[name];
    out.push_back({method[0]->str, "bytecode", Sorted(counts)});
  }
  return out;
}

OperatorList ListOperators(const Archive& archive) {
  OperatorList list;
  std::map<std::string, uint64_t> code_totals;
  bool any_code = false;
  size_t skipped = 0;
  for (const std::string& name : CodeRecords(archive, false, kMaxCodeBytes, &skipped)) {
    try {
      for (MethodOperators& m : OperatorsInCode(name, archive.Read(name))) {
        AddCounts(m.operators, code_totals);
        list.methods.push_back(std::move(m));
      }
      any_code = true;
    } catch (const Error& err) {
      list.warnings.push_back("code record " + name + ": " + err.what());
    }
  }
  list.unscanned = skipped;
  if (skipped) {
    list.warnings.push_back(std::to_string(skipped) + " code records not scanned: the code holds more than " +
                            std::to_string(kMaxCodeBytes >> 20) + " MiB of text");
  }
  if (any_code) {
    list.totals = Sorted(code_totals);
    list.totals_source = "code";
  }
  if (archive.Has("bytecode.pkl")) {
    try {
      std::map<std::string, uint64_t> bytecode_totals;
      for (MethodOperators& m : OperatorsInBytecode(archive.Read("bytecode.pkl"))) {
        AddCounts(m.operators, bytecode_totals);
        list.methods.push_back(std::move(m));
      }
      list.totals = Sorted(bytecode_totals);
      list.totals_source = "bytecode";
    } catch (const Error& err) {
      list.warnings.push_back(std::string("bytecode.pkl: ") + err.what());
    }
  }
  return list;
}

}  // namespace tsctl
