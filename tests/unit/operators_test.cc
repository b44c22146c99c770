#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "test_util.h"
#include "tsctl/error.h"
#include "tsctl/operators.h"

using namespace tsctl;

namespace {

uint64_t CountOf(const MethodOperators& m, const std::string& op) {
  for (const auto& u : m.operators) {
    if (u.name == op) return u.count;
  }
  return 0;
}

const MethodOperators* Method(const std::vector<MethodOperators>& methods, const std::string& name) {
  for (const auto& m : methods) {
    if (m.method == name) return &m;
  }
  return nullptr;
}

// A tiny pickle writer (protocol 2) for bytecode tables: tuples, strings, ints.
struct Pickle {
  std::string bytes = "\x80\x02";
  Pickle& Mark() { bytes += '('; return *this; }
  Pickle& Tuple() { bytes += 't'; return *this; }
  Pickle& Str(const std::string& s) {
    bytes += 'X';
    uint32_t n = static_cast<uint32_t>(s.size());
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((n >> (8 * i)) & 0xff);
    bytes += s;
    return *this;
  }
  Pickle& Int(int32_t v) {
    bytes += 'J';
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((static_cast<uint32_t>(v) >> (8 * i)) & 0xff);
    return *this;
  }
  Pickle& Instruction(const std::string& op, int32_t x) { return Mark().Str(op).Int(x).Int(0).Tuple(); }
  std::string Done() { return bytes + '.'; }
};

// bytecode.pkl of version 8 with one method calling `ops` by the OP indexes in `calls`.
std::string Bytecode(const std::vector<std::pair<std::string, std::string>>& ops, const std::vector<int>& calls) {
  Pickle p;
  p.Mark().Int(8);
  p.Mark().Str("__torch__.Net.forward");
  p.Mark();
  p.Mark().Str("instructions").Mark();
  p.Instruction("STOREN", 1);
  for (int c : calls) p.Instruction("OP", c);
  p.Instruction("RET", 0);
  p.Tuple().Tuple();
  p.Mark().Str("operators").Mark();
  for (const auto& [name, overload] : ops) p.Mark().Str(name).Str(overload).Int(2).Tuple();
  p.Tuple().Tuple();
  p.Tuple();  // the table
  p.Tuple();  // the method
  p.Tuple();  // the whole
  return p.Done();
}

}  // namespace

TEST_CASE("operators: calls in code records, by method, with counts", "[operators]") {
  const std::string code =
      "class Net(Module):\n"
      "  __parameters__ = []\n"
      "  def forward(self: __torch__.Net,\n"
      "    x: Tensor) -> Tensor:\n"
      "    _0 = __torch__.torchvision.ops.boxes.nms\n"
      "    y = torch.add(x, torch.relu(x), alpha=1)\n"
      "    z = ops.torchvision.nms(y, x, 0.5)\n"
      "    w = torch.ops.my_ops.fuse(z)  # torch.not_this(x)\n"
      "    ops.prim.RaiseException(\"torch.nor_this(x) ops.a.b(\")\n"
      "    n = int(torch.size(w, 0))\n"
      "    return self.conv.forward(torch.add(w, x.mul(2), alpha=1))\n"
      "  def helper(self: __torch__.Net) -> int:\n"
      "    return __torch__.other.f(float(1))\n"
      "def free(x: Tensor) -> Tensor:\n"
      "  return torch.neg(x)\n";
  auto methods = OperatorsInCode("code/__torch__/net.py", code);
  REQUIRE(methods.size() == 3);
  const MethodOperators* fwd = Method(methods, "__torch__.net.Net.forward");
  REQUIRE(fwd != nullptr);
  CHECK(fwd->source == "code");
  CHECK(CountOf(*fwd, "aten::add") == 2);
  CHECK(CountOf(*fwd, "aten::relu") == 1);
  CHECK(CountOf(*fwd, "aten::size") == 1);
  CHECK(CountOf(*fwd, "aten::Int") == 1);
  CHECK(CountOf(*fwd, "torchvision::nms") == 1);
  CHECK(CountOf(*fwd, "my_ops::fuse") == 1);
  CHECK(CountOf(*fwd, "prim::RaiseException") == 1);
  // Not operators: method calls on values, calls of TorchScript functions,
  // text inside strings and comments.
  CHECK(fwd->operators.size() == 7);
  const MethodOperators* helper = Method(methods, "__torch__.net.Net.helper");
  REQUIRE(helper != nullptr);
  REQUIRE(helper->operators.size() == 1);
  CHECK(helper->operators[0].name == "aten::Float");
  const MethodOperators* free_fn = Method(methods, "__torch__.net.free");
  REQUIRE(free_fn != nullptr);
  CHECK(CountOf(*free_fn, "aten::neg") == 1);
  // Sorted by name.
  for (size_t i = 1; i < fwd->operators.size(); ++i) CHECK(fwd->operators[i - 1].name < fwd->operators[i].name);
}

TEST_CASE("operators: names, namespaces and overloads", "[operators]") {
  CHECK(OperatorNamespace("torchvision::nms") == "torchvision");
  CHECK(OperatorNamespace("nms") == "");
  CHECK(OperatorBaseName("aten::add.Tensor") == "aten::add");
  CHECK(OperatorBaseName("aten::add") == "aten::add");
  CHECK(OperatorBaseName("aten::__and__.bool") == "aten::__and__");
}

TEST_CASE("operators: bytecode.pkl counts OP instructions per operator", "[operators]") {
  std::string pkl = Bytecode({{"aten::add", "Tensor"}, {"torchvision::nms", ""}, {"aten::unused", ""}}, {0, 1, 0});
  auto methods = OperatorsInBytecode(pkl);
  REQUIRE(methods.size() == 1);
  CHECK(methods[0].method == "__torch__.Net.forward");
  CHECK(methods[0].source == "bytecode");
  CHECK(CountOf(methods[0], "aten::add.Tensor") == 2);
  CHECK(CountOf(methods[0], "torchvision::nms") == 1);
  // In the table but never called: listed with 0 calls (the interpreter still resolves it).
  REQUIRE(methods[0].operators.size() == 3);
  CHECK(CountOf(methods[0], "aten::unused") == 0);

  // An OP index past the table, and something that is no bytecode table.
  CHECK_THROWS_AS(OperatorsInBytecode(Bytecode({{"aten::add", ""}}, {3})), Error);
  CHECK_THROWS_AS(OperatorsInBytecode(Pickle().Str("hello").Done()), Error);
  CHECK_THROWS_AS(OperatorsInBytecode("not a pickle"), Error);
}

TEST_CASE("operators: a mobile archive's totals come from its bytecode", "[operators]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("mobile.ptl")));
  OperatorList list = ListOperators(a);
  CHECK(list.warnings.empty());
  CHECK(list.totals_source == "bytecode");
  REQUIRE_FALSE(list.totals.empty());
  bool code = false, bytecode = false;
  for (const auto& m : list.methods) {
    code |= m.source == "code";
    bytecode |= m.source == "bytecode";
  }
  CHECK(code);
  CHECK(bytecode);
  auto by_ns = list.ByNamespace();
  CHECK(by_ns.count("aten") == 1);
  CHECK(list.Names().size() == list.totals.size());
}

TEST_CASE("operators: a full-JIT archive's totals sum its code methods", "[operators]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("scripted_multi.pt")));
  OperatorList list = ListOperators(a);
  CHECK(list.totals_source == "code");
  uint64_t sum_methods = 0, sum_totals = 0;
  for (const auto& m : list.methods) {
    for (const auto& u : m.operators) sum_methods += u.count;
  }
  for (const auto& u : list.totals) sum_totals += u.count;
  CHECK(sum_methods == sum_totals);
  CHECK(sum_totals > 0);
}

TEST_CASE("one list of unsafe operators for ts.hooks and torch.unsafe", "[operators]") {
  REQUIRE(tsctl::FindUnsafeOperator("aten::save") != nullptr);
  CHECK(std::string(tsctl::FindUnsafeOperator("aten::save")->why) == "writes a file");
  CHECK(tsctl::FindUnsafeOperator("aten::from_file") != nullptr);
  CHECK(tsctl::FindUnsafeOperator("aten::_sparse_coo_tensor_unsafe") != nullptr);
  // Safe unless its flag is not the constant False: only a graph tells.
  const tsctl::UnsafeOperator* segment = tsctl::FindUnsafeOperator("aten::segment_reduce");
  REQUIRE(segment != nullptr);
  CHECK(std::string(segment->safe_when_false) == "unsafe");
  CHECK(tsctl::FindUnsafeOperator("aten::add") == nullptr);
  CHECK(tsctl::FindUnsafeOperator("aten::save.foo") == nullptr);  // names without overload
  CHECK(segment->GraphOnly());
  CHECK(!tsctl::FindUnsafeOperator("aten::save")->GraphOnly());
  // Views LibTorch never checks against the storage.
  CHECK(tsctl::FindUnsafeOperator("aten::_reshape_alias") != nullptr);
  // set_: only the overloads that take a storage offset.
  const tsctl::UnsafeOperator* set = tsctl::FindUnsafeOperator("aten::set_");
  REQUIRE(set != nullptr);
  CHECK(set->GraphOnly());
  CHECK(set->Flags("source_Storage_storage_offset", {}));
  CHECK(set->Flags("", {"self", "source", "storage_offset", "size", "stride"}));
  CHECK(!set->Flags("source_Tensor", {"self", "source"}));
  CHECK(!set->Flags("source_Storage", {}));
  CHECK(tsctl::FindUnsafeOperator("aten::save")->Flags("", {}));
}
