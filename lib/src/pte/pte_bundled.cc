// A bundled program (.bpte, BP08): test suites (per method: test cases with
// inputs and expected outputs) around a whole program, which is read as a
// .pte of its own. The file is one flatbuffer: no extended header, no
// segments.
#include "bundled_program_generated.h"
#include "pte_internal.h"

namespace tsctl::pte_internal {
namespace {

using flatbuffers::uoffset_t;

using BundledValues = flatbuffers::Vector<flatbuffers::Offset<bpte_fb::Value>>;

// Tensor bytes among `values`.
uint64_t DataBytes(const BundledValues* values) {
  uint64_t bytes = 0;
  if (!values) return bytes;
  for (const bpte_fb::Value* v : *values) {
    const bpte_fb::Tensor* t = v->val_as_Tensor();
    if (t && t->data()) bytes += t->data()->size();  // each at most the file's size: no overflow
  }
  return bytes;
}

// A test case's values, each tensor's bytes by their place in the file (the
// flatbuffer starts it: `base`).
std::vector<PteBundledValue> ReadValues(const BundledValues* values, const uint8_t* base, Budget& budget) {
  std::vector<PteBundledValue> out;
  if (!values) return out;
  budget.Spend(values->size());
  for (const bpte_fb::Value* v : *values) {
    PteBundledValue value;
    if (const bpte_fb::Tensor* t = v->val_as_Tensor()) {
      value.kind = PteValueKind::kTensor;
      value.scalar_type = static_cast<int>(t->scalar_type());
      if (t->sizes()) {
        budget.Spend(t->sizes()->size());
        value.sizes.assign(t->sizes()->begin(), t->sizes()->end());
      }
      if (t->dim_order()) {
        budget.Spend(t->dim_order()->size());
        value.dim_order.assign(t->dim_order()->begin(), t->dim_order()->end());
      }
      if (t->data()) {
        value.data_offset = static_cast<uint64_t>(t->data()->data() - base);
        value.data_size = t->data()->size();
      }
    } else if (const bpte_fb::Int* i = v->val_as_Int()) {
      value.kind = PteValueKind::kInt;
      value.int_value = i->int_val();
    } else if (const bpte_fb::Bool* b = v->val_as_Bool()) {
      value.kind = PteValueKind::kBool;
      value.int_value = b->bool_val();
    } else if (const bpte_fb::Double* d = v->val_as_Double()) {
      value.kind = PteValueKind::kDouble;
      value.double_value = d->double_val();
    }
    out.push_back(std::move(value));
  }
  return out;
}

std::vector<PteTestSuite> ReadSuites(const bpte_fb::BundledProgram& root, const uint8_t* base, Budget& budget,
                                     uint64_t& data_bytes) {
  std::vector<PteTestSuite> out;
  if (!root.method_test_suites()) return out;
  for (const bpte_fb::BundledMethodTestSuite* s : *root.method_test_suites()) {
    PteTestSuite suite;
    if (s->method_name()) {
      budget.Spend(s->method_name()->size());
      suite.method_name = s->method_name()->str();
    }
    if (const auto* cases = s->test_cases()) {
      budget.Spend(cases->size());
      for (const bpte_fb::BundledMethodTestCase* c : *cases) {
        PteTestCase tc;
        tc.inputs = c->inputs() ? c->inputs()->size() : 0;
        tc.expected_outputs = c->expected_outputs() ? c->expected_outputs()->size() : 0;
        tc.data_bytes = DataBytes(c->inputs()) + DataBytes(c->expected_outputs());
        tc.input_values = ReadValues(c->inputs(), base, budget);
        tc.expected_values = ReadValues(c->expected_outputs(), base, budget);
        data_bytes += tc.data_bytes;
        suite.cases.push_back(tc);
      }
    }
    out.push_back(std::move(suite));
  }
  return out;
}

}  // namespace

void ReadBundledFile(std::string_view flatbuffer, const Head& head, const std::string& name,
                     const PteReadOptions& options, PteFile& out) {
  const auto* buf = reinterpret_cast<const uint8_t*>(flatbuffer.data());
  flatbuffers::Verifier v(buf, flatbuffer.size(), VerifierOptions(flatbuffer.size()));
  if (!bpte_fb::VerifyBundledProgramBuffer(v)) {
    Fail(name, "the bundled program's flatbuffer (" + N(flatbuffer.size()) +
                   " bytes) fails the FlatBuffers verifier: an offset, size, alignment or nesting runs out of bounds");
  }
  const bpte_fb::BundledProgram& root = *bpte_fb::GetBundledProgram(buf);
  Budget budget(flatbuffer.size(), name);
  PteBundled& b = out.bundled;
  b.version = root.version();
  uint64_t test_bytes = 0;
  b.suites = ReadSuites(root, buf, budget, test_bytes);
  const auto* program = root.program();
  if (!program || program->size() == 0) Fail(name, "the bundled program carries no program");
  b.program_bytes = program->size();
  b.program_offset = static_cast<uint64_t>(program->data() - buf);
  std::string_view bytes(reinterpret_cast<const char*>(program->data()), program->size());
  const std::string inner_name = name + ": its program";
  // Checked before reading it: a bundled program inside a bundled program
  // would recurse once per level.
  const Head inner_head = ReadHead(bytes.substr(0, kHeadBytes), bytes.size(), inner_name);
  if (inner_head.kind != PteKind::kProgram) {
    Fail(name, "the bundled program carries a " + std::string(PteKindName(inner_head.kind)) + " (" +
                   inner_head.identifier + "), not a program");
  }
  PteFile inner = ReadInMemory(bytes, inner_name, options);
  out.program = std::move(inner.program);
  b.program_header = std::move(inner.header);
  b.program_identifier = std::move(inner.identifier);
  b.program_sizes = std::move(inner.sizes);
  SizeParts inline_parts;
  inline_parts.Add(PteSizeKind::kProgram, "", true, b.program_bytes);
  inline_parts.Add(PteSizeKind::kTestData, "", true, test_bytes);
  out.sizes = BreakDown(out.file_size, 8, head.flatbuffer_end, inline_parts, {}, name);
}

}  // namespace tsctl::pte_internal
