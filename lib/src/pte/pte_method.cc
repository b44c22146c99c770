// One method (ExecutionPlan) of a verified program: its signature, operators
// and how often each is called, instructions by kind, delegates, memory plan,
// and the tensors whose bytes the file carries or names. Every index into
// another table is checked before it is followed.
#include <cstdio>

#include "pte_program.h"
#include "tsctl/zip.h"

namespace tsctl::pte_internal {
namespace {

using flatbuffers::uoffset_t;

// A vector of 4-byte (or smaller) integers, which the verifier found aligned.
template <typename T>
std::vector<int64_t> Ints(const flatbuffers::Vector<T>* v, Budget& budget) {
  static_assert(sizeof(T) <= 4, "8-byte scalars: Wide");
  std::vector<int64_t> out;
  if (!v) return out;
  budget.Spend(v->size());
  out.reserve(v->size());
  for (T x : *v) out.push_back(static_cast<int64_t>(x));
  return out;
}

PteShapeDynamism Dynamism(pte_fb::TensorShapeDynamism d) {
  switch (d) {
    case pte_fb::TensorShapeDynamism::STATIC: return PteShapeDynamism::kStatic;
    case pte_fb::TensorShapeDynamism::DYNAMIC_BOUND: return PteShapeDynamism::kDynamicBound;
    case pte_fb::TensorShapeDynamism::DYNAMIC_UNBOUND: return PteShapeDynamism::kDynamicUnbound;
  }
  return PteShapeDynamism::kUnknown;
}

PteTensor DescribeTensor(const pte_fb::Tensor& t, Budget& budget) {
  PteTensor out;
  const int scalar_type = static_cast<int>(t.scalar_type());
  out.dtype = ScalarTypeName(scalar_type);
  out.sizes = Ints(t.sizes(), budget);
  if (const auto* d = t.dim_order()) {
    budget.Spend(d->size());
    out.dim_order.assign(d->begin(), d->end());
  }
  out.dynamism = Dynamism(t.shape_dynamism());
  out.nbytes = TensorBytes(scalar_type, out.sizes);
  out.data_buffer_idx = t.data_buffer_idx();
  if (const auto* a = t.allocation_info()) {
    out.memory_planned = true;
    out.memory_id = a->memory_id();
    out.memory_offset = uint64_t{a->memory_offset_low()} | (uint64_t{a->memory_offset_high()} << 32);
  }
  if (const auto* x = t.extra_tensor_info()) out.fqn = Str(x->fully_qualified_name(), budget);
  return out;
}

PteValue ListValue(PteValueKind kind, std::vector<int64_t> items) {
  PteValue out;
  out.kind = kind;
  out.list_size = items.size();
  out.items = std::move(items);
  return out;
}

// A list's items; 8-byte ones copied (Wide), as the verifier does not align them.
template <typename L>
std::vector<int64_t> ListItems(const L* l, Budget& budget) {
  if (!l || !l->items()) return {};
  if constexpr (sizeof(*l->items()->data()) == 8) {
    return Wide(l->items(), budget);
  } else {
    return Ints(l->items(), budget);
  }
}

std::string DoubleText(double d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

PteValue DescribeValue(const pte_fb::EValue* v, const std::string& where, const ProgramContext& ctx) {
  using K = pte_fb::KernelTypes;
  PteValue out;
  if (!v) return out;
  switch (v->val_type()) {
    case K::NONE:
    case K::Null: out.kind = PteValueKind::kNone; break;
    case K::Int:
      out.kind = PteValueKind::kInt;
      if (const auto* x = v->val_as_Int()) out.scalar = std::to_string(x->int_val());
      break;
    case K::Bool:
      out.kind = PteValueKind::kBool;
      if (const auto* x = v->val_as_Bool()) out.scalar = x->bool_val() ? "true" : "false";
      break;
    case K::Double:
      out.kind = PteValueKind::kDouble;
      if (const auto* x = v->val_as_Double()) out.scalar = DoubleText(x->double_val());
      break;
    case K::String:
      out.kind = PteValueKind::kString;
      if (const auto* x = v->val_as_String()) out.scalar = Str(x->string_val(), ctx.budget);
      break;
    case K::Tensor:
      out.kind = PteValueKind::kTensor;
      if (const auto* t = v->val_as_Tensor()) {
        out.tensor = DescribeTensor(*t, ctx.budget);
        LocateTensor(*t, where, ctx, out.tensor);
      }
      break;
    case K::IntList: return ListValue(PteValueKind::kIntList, ListItems(v->val_as_IntList(), ctx.budget));
    case K::DoubleList: {
      const auto* l = v->val_as_DoubleList();
      out.kind = PteValueKind::kDoubleList;
      if (l && l->items()) out.doubles = Wide(l->items(), ctx.budget);
      out.list_size = out.doubles.size();
      break;
    }
    case K::BoolList: return ListValue(PteValueKind::kBoolList, ListItems(v->val_as_BoolList(), ctx.budget));
    case K::TensorList: return ListValue(PteValueKind::kTensorList, ListItems(v->val_as_TensorList(), ctx.budget));
    case K::OptionalTensorList:
      return ListValue(PteValueKind::kOptionalTensorList, ListItems(v->val_as_OptionalTensorList(), ctx.budget));
    default: out.kind = PteValueKind::kUnknown; break;
  }
  return out;
}

using EValues = flatbuffers::Vector<flatbuffers::Offset<pte_fb::EValue>>;

std::vector<PteValue> ReadSignature(const flatbuffers::Vector<int32_t>* indices, const EValues* values,
                                    const std::string& where, const ProgramContext& ctx) {
  std::vector<PteValue> out;
  if (!indices) return out;
  const uint64_t n = values ? values->size() : 0;
  ctx.budget.Spend(indices->size());
  for (uoffset_t i = 0; i < indices->size(); ++i) {
    const int32_t at = indices->Get(i);
    const std::string what = where + " " + N(i);
    if (at < 0 || static_cast<uint64_t>(at) >= n) {
      Fail(ctx.name, what + " is value " + std::to_string(at) + ", not one of the method's " + N(n) + " values");
    }
    out.push_back(DescribeValue(values->Get(static_cast<uoffset_t>(at)), what, ctx));
  }
  return out;
}

std::vector<PteOperator> ReadOperators(const pte_fb::ExecutionPlan& plan, const ProgramContext& ctx) {
  std::vector<PteOperator> out;
  if (!plan.operators()) return out;
  for (const pte_fb::Operator* op : *plan.operators()) {
    out.push_back(PteOperator{Str(op->name(), ctx.budget), Str(op->overload(), ctx.budget), 0});
  }
  return out;
}

PteDelegate ReadDelegate(const pte_fb::BackendDelegate& d, const std::string& where, const ProgramContext& ctx) {
  PteDelegate out;
  out.backend_id = Str(d.id(), ctx.budget);
  const std::string what = where + " (" + Quote(out.backend_id) + ")";
  const pte_fb::BackendDelegateDataReference* ref = d.processed();
  if (!ref) Fail(ctx.name, what + " has no reference to its data");
  out.index = ref->index();
  if (ref->location() == pte_fb::DataLocation::INLINE) {
    const auto* blobs = ctx.program.backend_delegate_data();
    const uint64_t n = blobs ? blobs->size() : 0;
    if (out.index >= n) Fail(ctx.name, what + ": inline data " + N(out.index) + ", past the " + N(n) + " the program has");
    const auto* data = blobs->Get(out.index)->data();
    out.inline_data = true;
    out.bytes = data ? data->size() : 0;
    if (data && ctx.base) out.data_offset = static_cast<uint64_t>(data->data() - ctx.base);
  } else if (ref->location() == pte_fb::DataLocation::SEGMENT) {
    const uint64_t n = ctx.read.segments.size();
    if (out.index >= n) Fail(ctx.name, what + ": segment " + N(out.index) + ", past the " + N(n) + " the program has");
    out.bytes = ctx.read.segments[out.index].size;
    out.data_offset = ctx.read.segments[out.index].file_offset;
  } else {
    Fail(ctx.name, what + ": data location " + N(static_cast<uint8_t>(ref->location())) + " is neither inline nor segment");
  }
  if (const auto* specs = d.compile_specs()) {
    for (const pte_fb::CompileSpec* s : *specs) {
      out.compile_spec_keys.push_back(Str(s->key(), ctx.budget));
      const std::string& key = out.compile_spec_keys.back();
      const uint32_t n = static_cast<uint32_t>(key.size());
      out.compile_specs_crc = Crc32(&n, sizeof n, out.compile_specs_crc);
      out.compile_specs_crc = Crc32(key.data(), key.size(), out.compile_specs_crc);
      const uint32_t m = s->value() ? s->value()->size() : 0;
      out.compile_specs_crc = Crc32(&m, sizeof m, out.compile_specs_crc);
      if (m) out.compile_specs_crc = Crc32(s->value()->data(), m, out.compile_specs_crc);
    }
  }
  return out;
}

// Counts each chain's instructions by kind, and the calls of each operator
// and delegate.
void CountInstructions(const pte_fb::ExecutionPlan& plan, const std::string& where, const ProgramContext& ctx,
                       PteMethod& m) {
  using I = pte_fb::InstructionArguments;
  if (!plan.chains()) return;
  PteInstructionCounts& c = m.instructions;
  for (uoffset_t ci = 0; ci < plan.chains()->size(); ++ci) {
    const auto* instructions = plan.chains()->Get(ci)->instructions();
    if (!instructions) continue;
    for (uoffset_t ii = 0; ii < instructions->size(); ++ii) {
      const pte_fb::Instruction* in = instructions->Get(ii);
      const std::string what = where + ", chain " + N(ci) + ", instruction " + N(ii);
      switch (in->instr_args_type()) {
        case I::KernelCall: {
          ++c.kernel_calls;
          const auto* k = in->instr_args_as_KernelCall();
          const int32_t op = k ? k->op_index() : -1;
          if (op < 0 || static_cast<size_t>(op) >= m.operators.size()) {
            Fail(ctx.name, what + " calls operator " + std::to_string(op) + ", not one of the method's " +
                               N(m.operators.size()));
          }
          ++m.operators[static_cast<size_t>(op)].calls;
          break;
        }
        case I::DelegateCall: {
          ++c.delegate_calls;
          const auto* d = in->instr_args_as_DelegateCall();
          const int32_t di = d ? d->delegate_index() : -1;
          if (di < 0 || static_cast<size_t>(di) >= m.delegates.size()) {
            Fail(ctx.name, what + " calls delegate " + std::to_string(di) + ", not one of the method's " +
                               N(m.delegates.size()));
          }
          ++m.delegates[static_cast<size_t>(di)].calls;
          break;
        }
        case I::MoveCall: ++c.moves; break;
        case I::JumpFalseCall: ++c.jump_false; break;
        case I::FreeCall: ++c.frees; break;
        default: ++c.unknown; break;
      }
    }
  }
}

// Checks that `v` names one of the method's `n` values (-1 too where `none`
// is allowed) and returns it.
int64_t Named(int64_t v, uint64_t n, bool none, const std::string& what, const ProgramContext& ctx) {
  if ((v < 0 && !(none && v == -1)) || (v >= 0 && static_cast<uint64_t>(v) >= n)) {
    Fail(ctx.name, what + " names value " + std::to_string(v) + ", not one of the method's " + N(n) + " values");
  }
  return v;
}

// The method's value table; the items of its index lists are checked.
void ReadValueTable(const EValues* values, const std::string& where, const ProgramContext& ctx, PteMethod& m) {
  if (!values) return;
  m.value_table.reserve(values->size());
  for (uoffset_t i = 0; i < values->size(); ++i) {
    const std::string what = where + ", value " + N(i);
    PteValue v = DescribeValue(values->Get(i), what, ctx);
    const bool index_list = v.kind == PteValueKind::kIntList || v.kind == PteValueKind::kTensorList ||
                            v.kind == PteValueKind::kOptionalTensorList;
    if (index_list) {
      for (int64_t item : v.items) Named(item, m.values, v.kind == PteValueKind::kOptionalTensorList, what, ctx);
    }
    m.value_table.push_back(std::move(v));
  }
}

std::vector<int64_t> NamedList(const flatbuffers::Vector<int32_t>* v, const std::string& what, const PteMethod& m,
                               const ProgramContext& ctx) {
  std::vector<int64_t> out = Ints(v, ctx.budget);
  for (int64_t x : out) Named(x, m.values, false, what, ctx);
  return out;
}

PteInstruction ReadInstruction(const pte_fb::Instruction& in, size_t chain_size, const std::string& what,
                               const PteMethod& m, const ProgramContext& ctx) {
  using I = pte_fb::InstructionArguments;
  PteInstruction out;
  auto value = [&](int32_t v) { out.args.push_back(Named(v, m.values, false, what, ctx)); };
  switch (in.instr_args_type()) {
    case I::KernelCall: {
      const auto* k = in.instr_args_as_KernelCall();
      out.kind = PteInstructionKind::kKernelCall;
      out.target = k ? k->op_index() : -1;  // checked by CountInstructions
      if (k) out.args = NamedList(k->args(), what, m, ctx);
      break;
    }
    case I::DelegateCall: {
      const auto* d = in.instr_args_as_DelegateCall();
      out.kind = PteInstructionKind::kDelegateCall;
      out.target = d ? d->delegate_index() : -1;  // checked by CountInstructions
      if (d) out.args = NamedList(d->args(), what, m, ctx);
      break;
    }
    case I::MoveCall: {
      const auto* mv = in.instr_args_as_MoveCall();
      out.kind = PteInstructionKind::kMove;
      value(mv ? mv->move_from() : -1);
      value(mv ? mv->move_to() : -1);
      break;
    }
    case I::JumpFalseCall: {
      const auto* j = in.instr_args_as_JumpFalseCall();
      out.kind = PteInstructionKind::kJumpFalse;
      value(j ? j->cond_value_index() : -1);
      out.target = j ? j->destination_instruction() : -1;
      if (out.target < 0 || static_cast<uint64_t>(out.target) > chain_size) {
        Fail(ctx.name, what + " jumps to instruction " + std::to_string(out.target) + ", outside its chain of " +
                           N(chain_size));
      }
      break;
    }
    case I::FreeCall: {
      const auto* f = in.instr_args_as_FreeCall();
      out.kind = PteInstructionKind::kFree;
      value(f ? f->value_index() : -1);
      break;
    }
    default: break;
  }
  return out;
}

// Each chain's inputs, outputs and instructions, every value index checked.
void ReadChains(const pte_fb::ExecutionPlan& plan, const std::string& where, const ProgramContext& ctx,
                PteMethod& m) {
  ReadValueTable(plan.values(), where, ctx, m);
  m.input_values = Ints(plan.inputs(), ctx.budget);  // checked by ReadSignature
  m.output_values = Ints(plan.outputs(), ctx.budget);
  if (!plan.chains()) return;
  for (uoffset_t ci = 0; ci < plan.chains()->size(); ++ci) {
    const pte_fb::Chain* c = plan.chains()->Get(ci);
    const std::string what = where + ", chain " + N(ci);
    PteChain chain;
    chain.inputs = NamedList(c->inputs(), what + " input", m, ctx);
    chain.outputs = NamedList(c->outputs(), what + " output", m, ctx);
    if (const auto* instructions = c->instructions()) {
      chain.instructions.reserve(instructions->size());
      for (uoffset_t ii = 0; ii < instructions->size(); ++ii) {
        chain.instructions.push_back(
            ReadInstruction(*instructions->Get(ii), instructions->size(), what + ", instruction " + N(ii), m, ctx));
      }
    }
    m.chain_list.push_back(std::move(chain));
  }
}

// The method's tensors whose bytes are in the file or in a .ptd.
void CollectStored(const EValues* values, const std::string& method, const std::string& where,
                   const ProgramContext& ctx, std::vector<PteStoredTensor>& stored) {
  if (!values) return;
  for (uoffset_t i = 0; i < values->size(); ++i) {
    const pte_fb::Tensor* t = values->Get(i)->val_as_Tensor();
    if (!t) continue;
    const auto* extra = t->extra_tensor_info();
    bool external = extra && extra->location() == pte_fb::TensorDataLocation::EXTERNAL;
    if (t->data_buffer_idx() == 0 && !external) continue;
    PteStoredTensor s{method, i, DescribeTensor(*t, ctx.budget)};
    LocateTensor(*t, where + ", value " + N(i), ctx, s.tensor);
    stored.push_back(std::move(s));
  }
}

}  // namespace

PteMethod ReadMethod(const pte_fb::ExecutionPlan& plan, size_t index, const ProgramContext& ctx,
                     std::vector<PteStoredTensor>& stored) {
  PteMethod m;
  m.name = Str(plan.name(), ctx.budget);
  const std::string where = "method " + N(index) + " (" + Quote(m.name) + ")";
  const EValues* values = plan.values();
  m.values = values ? values->size() : 0;
  m.chains = plan.chains() ? plan.chains()->size() : 0;
  m.inputs = ReadSignature(plan.inputs(), values, where + ", input", ctx);
  m.outputs = ReadSignature(plan.outputs(), values, where + ", output", ctx);
  m.operators = ReadOperators(plan, ctx);
  if (const auto* delegates = plan.delegates()) {
    for (uoffset_t i = 0; i < delegates->size(); ++i) {
      m.delegates.push_back(ReadDelegate(*delegates->Get(i), where + ", delegate " + N(i), ctx));
    }
  }
  CountInstructions(plan, where, ctx, m);
  if (ctx.chains) ReadChains(plan, where, ctx, m);
  m.non_const_buffer_sizes = Wide(plan.non_const_buffer_sizes(), ctx.budget);
  CollectStored(values, m.name, where, ctx, stored);
  return m;
}

}  // namespace tsctl::pte_internal
