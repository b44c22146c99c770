#include "view_guard.h"

#include <ATen/record_function.h>
#include <torch/csrc/jit/api/function_impl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

#include "sandbox.h"
#include "torch_util.h"

namespace tsctl {
namespace {

using Wide = __int128;

// Past this many elements no storage exists: 2^57 bytes is the whole
// address space of x86-64's 5-level paging, even at 1 byte an element.
constexpr Wide kMaxElements = Wide{1} << 57;
// A term this large already ends the check (and keeps the sum of up to
// 2^10 of them far from the 2^127 an __int128 holds).
constexpr Wide kHuge = Wide{1} << 100;

std::string WideText(Wide v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + s : s;
}

std::string IntsText(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The first and last element the view reaches, relative to the storage's
// start, in elements; nullopt for an empty view (it reads nothing).
struct Extent {
  Wide lo = 0, hi = 0;
  bool huge = false;  // a term past kHuge: outside any storage
};
std::optional<Extent> ExtentOf(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset) {
  Extent e;
  e.lo = e.hi = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return std::nullopt;
    // Callers pass strides in full (set_'s stride=[] as ContiguousStrides);
    // a shorter list LibTorch refuses itself.
    const Wide stride = i < strides.size() ? strides[i] : 0;
    const Wide term = Wide{sizes[i] - 1} * stride;  // both int64: fits in 127 bits
    if (term > kHuge || term < -kHuge) {
      e.huge = true;
      return e;
    }
    (term < 0 ? e.lo : e.hi) += term;
  }
  return e;
}

// Contiguous strides for `sizes` (set_ without strides), saturating.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  Wide acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = acc > INT64_MAX ? INT64_MAX : static_cast<int64_t>(acc);
    acc *= sizes[i] > 0 ? sizes[i] : 1;
    if (acc > kHuge) acc = kHuge;
  }
  return strides;
}

std::optional<std::vector<int64_t>> IntsOfValue(const c10::IValue& v) {
  if (v.isIntList()) return v.toIntVector();
  if (v.isList()) {
    std::vector<int64_t> out;
    for (const c10::IValue& item : v.toListRef()) {
      if (!item.isInt()) return std::nullopt;
      out.push_back(item.toInt());
    }
    return out;
  }
  return std::nullopt;
}

// The view a guarded call asks for, read from its boxed arguments.
struct ViewCall {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  uint64_t itemsize = 1, storage_bytes = 0;
  bool unchecked = false;  // LibTorch checks nothing: any byte past the storage is a finding
};

// _reshape_alias(self, size, stride) and _reshape_alias_copy: "for internal
// use by reshape", their kernel (alias_with_sizes_and_strides) sets the sizes
// and strides at self's offset with no bounds check at all, in 1.13 and 2.x.
bool Unchecked(const std::string& op) {
  return op == "aten::_reshape_alias" || op == "aten::_reshape_alias_copy";
}

// as_strided(self, size, stride, offset?), as_strided_, as_strided_copy;
// as_strided_scatter(self, src, size, stride, offset?); set_(self, source
// Storage or Tensor, offset, size, stride=[]). Other overloads of set_
// (a whole storage or tensor) place nothing: nullopt.
std::optional<ViewCall> ReadCall(const std::string& op, c10::ArrayRef<const c10::IValue> in) {
  if (in.empty() || !in[0].isTensor()) return std::nullopt;
  const at::Tensor& self = in[0].toTensor();
  if (!self.has_storage()) return std::nullopt;
  ViewCall c;
  c.itemsize = self.element_size();
  if (op == "aten::set_") {
    if (in.size() < 4 || !in[2].isInt()) return std::nullopt;
    if (in[1].isStorage()) c.storage_bytes = in[1].toStorage().nbytes();
    else if (in[1].isTensor() && in[1].toTensor().has_storage()) c.storage_bytes = in[1].toTensor().storage().nbytes();
    else return std::nullopt;
    c.offset = in[2].toInt();
    auto sizes = IntsOfValue(in[3]);
    if (!sizes) return std::nullopt;
    c.sizes = *sizes;
    auto strides = in.size() > 4 ? IntsOfValue(in[4]) : std::nullopt;
    c.strides = strides && !strides->empty() ? *strides : ContiguousStrides(c.sizes);
    return c;
  }
  const size_t first = op == "aten::as_strided_scatter" ? 2 : 1;
  if (in.size() < first + 2) return std::nullopt;
  c.unchecked = Unchecked(op);
  auto sizes = IntsOfValue(in[first]);
  auto strides = IntsOfValue(in[first + 1]);
  if (!sizes || !strides) return std::nullopt;
  c.sizes = *sizes;
  c.strides = *strides;
  c.offset = !c.unchecked && in.size() > first + 2 && in[first + 2].isInt() ? in[first + 2].toInt()
                                                                              : self.storage_offset();
  c.storage_bytes = self.storage().nbytes();
  return c;
}

struct Armed {
  std::mutex mu;
  bool on = false;
  at::CallbackHandle handle{};
};
Armed& ViewGuardState() {
  static Armed* g = new Armed;  // never destroyed: a callback may run while the process exits
  return *g;
}

thread_local bool in_guard = false;

std::unique_ptr<at::ObserverContext> OnViewStart(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (in_guard || !name || std::strncmp(name, "aten::", 6) != 0) return nullptr;
  const std::string op = name;
  const auto& guarded = ViewGuardedOperators();
  if (std::find(guarded.begin(), guarded.end(), op) == guarded.end()) return nullptr;
  in_guard = true;
  std::string why;
  try {
    if (std::optional<ViewCall> c = ReadCall(op, fn.inputs())) {
      why = c->unchecked ? ViewPastStorage(c->sizes, c->strides, c->offset, c->itemsize, c->storage_bytes)
                         : ViewOutsideStorage(c->sizes, c->strides, c->offset, c->itemsize, c->storage_bytes);
      if (!why.empty()) why = "the model called " + op + " with " + why + " (stopped before it ran)";
    }
  } catch (const std::exception&) {
    // Arguments this guard cannot read: LibTorch's own checks decide.
  }
  in_guard = false;
  if (!why.empty()) StopChild(why);  // never returns
  return nullptr;
}

template <typename Visit>
void EachFunctionNode(const torch::jit::Module& module, const Visit& visit) {
  const auto unit = module._ivalue()->compilation_unit();
  for (torch::jit::Function* fn : unit->get_functions()) {
    if (!fn->isGraphFunction()) continue;
    const std::string where = fn->qualname().qualifiedName();
    EachNode(torch::jit::toGraphFunction(*fn).graph()->block(), [&](const torch::jit::Node* n) { visit(where, n); });
  }
}

bool Guarded(const torch::jit::Node* node) {
  const auto& guarded = ViewGuardedOperators();
  return std::find(guarded.begin(), guarded.end(), node->kind().toQualString()) != guarded.end();
}

std::optional<int64_t> ConstInt(const torch::jit::Value* v) {
  const auto iv = torch::jit::toIValue(v);
  if (iv && iv->isInt()) return iv->toInt();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> ConstInts(const torch::jit::Value* v) {
  if (const auto iv = torch::jit::toIValue(v)) return IntsOfValue(*iv);
  const torch::jit::Node* n = v->node();
  if (n->kind() != c10::prim::ListConstruct) return std::nullopt;
  std::vector<int64_t> out;
  for (const torch::jit::Value* item : n->inputs()) {
    std::optional<int64_t> x = ConstInt(item);
    if (!x) return std::nullopt;
    out.push_back(*x);
  }
  return out;
}

std::optional<size_t> ArgIndex(const torch::jit::Node* node, const char* name) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (!schema) return std::nullopt;
  const auto index = schema->argumentIndexWithName(name);
  if (!index || *index >= node->inputs().size()) return std::nullopt;
  return static_cast<size_t>(*index);
}

std::string SourceOf(const torch::jit::Node* node) {
  if (auto flc = node->sourceRange().file_line_col()) {
    return std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc));
  }
  return "";
}

}  // namespace

const std::vector<std::string>& ViewGuardedOperators() {
  // From native_functions.yaml (1.13 and 2.x): every operator that takes a
  // view's strides (and a storage_offset, or self's) from its caller and
  // places it on memory it did not allocate. _nested_view_from_buffer checks
  // its buffer's size itself (1.13 asserts it, 2.x's setStorage refuses).
  static const std::vector<std::string> kOps = {"aten::as_strided",        "aten::as_strided_",
                                                "aten::as_strided_copy",   "aten::as_strided_scatter",
                                                "aten::set_",              "aten::_reshape_alias",
                                                "aten::_reshape_alias_copy"};
  return kOps;
}

std::string ViewOutsideStorage(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                               uint64_t itemsize, uint64_t storage_bytes) {
  std::optional<Extent> e = ExtentOf(sizes, strides, offset);
  if (!e) return "";  // empty: reads nothing
  // What LibTorch refuses (or, for set_, resizes the storage to) by its own
  // int64 checks stays its call: a negative offset or stride, an end within
  // int64. Past 2^63 its product wraps and nothing refuses the view.
  const Wide end = e->huge ? kHuge : (e->hi + 1) * static_cast<Wide>(itemsize);
  if (!e->huge && (e->lo < 0 || end <= static_cast<Wide>(INT64_MAX))) return "";
  return "sizes " + IntsText(sizes) + ", strides " + IntsText(strides) + " and storage offset " + std::to_string(offset) +
         " on a storage of " + std::to_string(storage_bytes) + " bytes: a view ending " +
         (e->huge ? std::string("past any address space") : "at byte " + WideText(end)) +
         ", past 2^63, where LibTorch 1.13's int64 bounds check wraps around and lets it read and write the "
         "process's memory";
}

std::string ViewPastStorage(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                            uint64_t itemsize, uint64_t storage_bytes) {
  std::optional<Extent> e = ExtentOf(sizes, strides, offset);
  if (!e) return "";
  const Wide end = e->huge ? kHuge : (e->hi + 1) * static_cast<Wide>(itemsize);
  if (!e->huge && e->lo >= 0 && end <= static_cast<Wide>(storage_bytes)) return "";
  return "sizes " + IntsText(sizes) + ", strides " + IntsText(strides) + " at storage offset " + std::to_string(offset) +
         " on a storage of " + std::to_string(storage_bytes) + " bytes: a view " +
         (!e->huge && e->lo < 0 ? std::string("starting before its storage")
                                : "ending " + (e->huge ? std::string("past any address space") : "at byte " + WideText(end))) +
         ", which this operator places without any bounds check, so it would read and write the process's memory";
}

void ArmViewGuard() {
  std::lock_guard<std::mutex> lock(ViewGuardState().mu);
  if (ViewGuardState().on) return;
  at::RecordFunctionCallback cb(&OnViewStart);
  cb.needsInputs(true).scopes({at::RecordScope::FUNCTION});
  ViewGuardState().handle = at::addGlobalCallback(cb);
  ViewGuardState().on = true;
}

void KeepViewGuardIfCalled(const torch::jit::Module& module) {
  const char* mode = std::getenv("TSCTL_VIEW_GUARD");
  if (mode && std::strcmp(mode, "always") == 0) return;
  bool called = false;
  EachFunctionNode(module, [&](const std::string&, const torch::jit::Node* n) { called = called || Guarded(n); });
  if (called) return;
  std::lock_guard<std::mutex> lock(ViewGuardState().mu);
  if (!ViewGuardState().on) return;
  at::removeCallback(ViewGuardState().handle);
  ViewGuardState().on = false;
}

std::vector<std::string> UnsafeViewCalls(const torch::jit::Module& module) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  EachFunctionNode(module, [&](const std::string& where, const torch::jit::Node* node) {
    if (!Guarded(node)) return;
    const bool set = node->kind() == c10::Symbol::fromQualString("aten::set_");
    const auto size_at = ArgIndex(node, "size"), stride_at = ArgIndex(node, "stride"),
               offset_at = ArgIndex(node, "storage_offset");
    const bool unchecked = Unchecked(node->kind().toQualString());
    if (!size_at || (!offset_at && !unchecked)) return;  // set_(source): a whole storage
    std::optional<std::vector<int64_t>> sizes = ConstInts(node->input(*size_at));
    std::optional<std::vector<int64_t>> strides =
        stride_at ? ConstInts(node->input(*stride_at)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    // An offset of None is the tensor's own, which a sound tensor keeps in bounds.
    // _reshape_alias keeps self's offset: from 0 this is the least it reaches.
    std::optional<int64_t> offset = unchecked ? std::optional<int64_t>(0) : ConstInt(node->input(*offset_at));
    if (!offset && torch::jit::toIValue(node->input(*offset_at)) && torch::jit::toIValue(node->input(*offset_at))->isNone()) offset = 0;
    if (!sizes || !strides || !offset) return;  // computed: the run-time guard checks it
    if (set && strides->empty()) *strides = ContiguousStrides(*sizes);
    std::optional<Extent> e = ExtentOf(*sizes, *strides, *offset);
    if (!e || (!e->huge && e->lo >= 0 && e->hi + 1 <= kMaxElements)) return;
    const std::string source = SourceOf(node);
    std::string line = where + " calls " + node->kind().toQualString() + " with sizes " + IntsText(*sizes) + ", strides " +
                       IntsText(*strides) + (unchecked ? std::string(" at the tensor's own offset") : " and storage offset " + std::to_string(*offset)) +
                       (source.empty() ? "" : " (" + source + ")") +
                       (e->lo < 0 ? ": a view starting before its storage"
                                  : ": a view ending past element 2^57, more memory than any address space holds "
                                    "(LibTorch 1.13's int64 bounds check overflows on such offsets and lets it read "
                                    "the heap)");
    if (seen.insert(line).second) out.push_back(std::move(line));
  });
  return out;
}

}  // namespace tsctl
