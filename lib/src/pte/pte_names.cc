// Names of the reader's enums and of ExecuTorch's scalar types, and tensor
// sizes.
#include "pte_internal.h"
#include "tsctl/dtype.h"

namespace tsctl {
namespace pte_internal {
namespace {

}  // namespace

// ExecuTorch's ScalarType (runtime/core/portable_type/scalar_type.h) is
// c10's, value for value, with the names its runtime prints (tsctl/dtype.h).
std::string ScalarTypeName(int value) {
  if (const DtypeInfo* d = DtypeByValue(value)) return d->c10;
  return "ScalarType(" + std::to_string(value) + ")";
}

uint64_t ScalarTypeSize(int value) {
  const DtypeInfo* d = DtypeByValue(value);
  return d ? d->size : 0;
}

uint64_t TensorBytes(int scalar_type, const std::vector<int64_t>& sizes) {
  uint64_t n = ScalarTypeSize(scalar_type);
  for (int64_t s : sizes) {
    if (s < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(s), &n)) return 0;
  }
  return n;
}

void Budget::Spend(uint64_t items) {
  if (items > left_) {
    Fail(name_, "the flatbuffer's tables refer to the same data again and again (more than 4 items per byte): refused");
  }
  left_ -= items;
}

}  // namespace pte_internal

const char* PteKindName(PteKind kind) {
  switch (kind) {
    case PteKind::kProgram: return "program";
    case PteKind::kFlatTensor: return "flat_tensor";
    case PteKind::kBundled: return "bundled_program";
  }
  return "?";
}

const char* PteValueKindName(PteValueKind kind) {
  switch (kind) {
    case PteValueKind::kNone: return "None";
    case PteValueKind::kInt: return "Int";
    case PteValueKind::kBool: return "Bool";
    case PteValueKind::kDouble: return "Double";
    case PteValueKind::kTensor: return "Tensor";
    case PteValueKind::kString: return "String";
    case PteValueKind::kIntList: return "IntList";
    case PteValueKind::kDoubleList: return "DoubleList";
    case PteValueKind::kBoolList: return "BoolList";
    case PteValueKind::kTensorList: return "TensorList";
    case PteValueKind::kOptionalTensorList: return "OptionalTensorList";
    case PteValueKind::kUnknown: return "Unknown";
  }
  return "?";
}

const char* PteShapeDynamismName(PteShapeDynamism d) {
  switch (d) {
    case PteShapeDynamism::kStatic: return "static";
    case PteShapeDynamism::kDynamicBound: return "dynamic_bound";
    case PteShapeDynamism::kDynamicUnbound: return "dynamic_unbound";
    case PteShapeDynamism::kUnknown: return "unknown";
  }
  return "?";
}

const char* PteDataLocationName(PteDataLocation l) {
  switch (l) {
    case PteDataLocation::kNone: return "none";
    case PteDataLocation::kInline: return "inline";
    case PteDataLocation::kSegment: return "segment";
    case PteDataLocation::kMutable: return "mutable";
    case PteDataLocation::kExternal: return "external";
  }
  return "?";
}

const char* PteSizeKindName(PteSizeKind kind) {
  switch (kind) {
    case PteSizeKind::kHeader: return "header";
    case PteSizeKind::kFlatbuffer: return "flatbuffer";
    case PteSizeKind::kConstants: return "constants";
    case PteSizeKind::kDelegate: return "delegate";
    case PteSizeKind::kNamedData: return "named_data";
    case PteSizeKind::kMutableData: return "mutable_data";
    case PteSizeKind::kTensorData: return "tensor_data";
    case PteSizeKind::kProgram: return "program";
    case PteSizeKind::kTestData: return "test_data";
    case PteSizeKind::kUnreferenced: return "unreferenced";
    case PteSizeKind::kPadding: return "padding";
  }
  return "?";
}

std::string PteOperatorKey(const PteOperator& op) { return op.overload.empty() ? op.name : op.name + "." + op.overload; }

}  // namespace tsctl
