// Every element type LibTorch and ExecuTorch store, from c10's ScalarType
// list (c10/core/ScalarType.h, 1.13 and 2.x; ExecuTorch's ScalarType uses the
// same names): c10's name (also the prefix of the storage class TorchScript's
// pickler writes, "UInt16Storage", and ExecuTorch's schema name), tsctl's
// name (torch's Python name without "torch.": "uint16"), the bytes of one
// element, and how its values compare.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tsctl {

enum class DtypeKind {
  kFloat,      // IEEE float32/64
  kHalf,       // float16
  kBFloat16,
  kFloat8,     // the float8 formats (decoded per format)
  kComplex,    // two floats
  kSigned,     // two's complement integers
  kUnsigned,
  kBool,
  kQuantized,  // integers whose scale lives in the pickle
  kBits,       // packed sub-byte or opaque bits: compared as raw bytes
};

// X(c10 name, tsctl name, bytes per element, kind, ExecuTorch's
// print_program short name or "", .pt2's ScalarType number or 0: the
// schema's own numbering, torch/_export/serde/schema.py; Triton's data_type
// (model_config.proto) or "", whether an input may have it: the types
// LibTorch 1.13 and 2.x both make with rand/randint, --input's dtypes;
// NumPy's little-endian type string (.npy's descr) or "", the legacy
// model.json's dataType, caffe2's TensorProto name (PyTorch 1.0-1.2's
// ATenTypeToCaffe2Type) or "").
// The order is c10's (and ExecuTorch's) ScalarType value: row i is value i.
#define TSCTL_DTYPES(X)                                                                        \
  X(Byte, "uint8", 1, kUnsigned, "bt", 1, "TYPE_UINT8", true, "|u1", "UINT8")                  \
  X(Char, "int8", 1, kSigned, "c", 2, "TYPE_INT8", true, "|i1", "INT8")                        \
  X(Short, "int16", 2, kSigned, "s", 3, "TYPE_INT16", true, "<i2", "INT16")                    \
  X(Int, "int32", 4, kSigned, "i", 4, "TYPE_INT32", true, "<i4", "INT32")                      \
  X(Long, "int64", 8, kSigned, "l", 5, "TYPE_INT64", true, "<i8", "INT64")                     \
  X(Half, "float16", 2, kHalf, "h", 6, "TYPE_FP16", true, "<f2", "FLOAT16")                    \
  X(Float, "float32", 4, kFloat, "f", 7, "TYPE_FP32", true, "<f4", "FLOAT")                    \
  X(Double, "float64", 8, kFloat, "d", 8, "TYPE_FP64", true, "<f8", "DOUBLE")                  \
  X(ComplexHalf, "complex32", 4, kComplex, "c32", 9, "", false, "", "")                        \
  X(ComplexFloat, "complex64", 8, kComplex, "c64", 10, "", false, "<c8", "")                   \
  X(ComplexDouble, "complex128", 16, kComplex, "c128", 11, "", false, "<c16", "")              \
  X(Bool, "bool", 1, kBool, "b", 12, "TYPE_BOOL", true, "|b1", "BOOL")                         \
  X(QInt8, "qint8", 1, kQuantized, "qi8", 0, "", false, "", "")                                \
  X(QUInt8, "quint8", 1, kQuantized, "qui8", 0, "", false, "", "")                             \
  X(QInt32, "qint32", 4, kQuantized, "qi32", 0, "", false, "", "")                             \
  X(BFloat16, "bfloat16", 2, kBFloat16, "bf16", 13, "TYPE_BF16", true, "", "")                 \
  X(QUInt4x2, "quint4x2", 1, kQuantized, "qui4x2", 0, "", false, "", "")                       \
  X(QUInt2x4, "quint2x4", 1, kQuantized, "qui2x4", 0, "", false, "", "")                       \
  X(Bits1x8, "bits1x8", 1, kBits, "", 0, "", false, "", "")                                    \
  X(Bits2x4, "bits2x4", 1, kBits, "", 0, "", false, "", "")                                    \
  X(Bits4x2, "bits4x2", 1, kBits, "", 0, "", false, "", "")                                    \
  X(Bits8, "bits8", 1, kBits, "", 0, "", false, "", "")                                        \
  X(Bits16, "bits16", 2, kBits, "", 0, "", false, "", "")                                      \
  X(Float8_e5m2, "float8_e5m2", 1, kFloat8, "", 30, "", false, "", "")                         \
  X(Float8_e4m3fn, "float8_e4m3fn", 1, kFloat8, "", 29, "", false, "", "")                     \
  X(Float8_e5m2fnuz, "float8_e5m2fnuz", 1, kFloat8, "", 32, "", false, "", "")                 \
  X(Float8_e4m3fnuz, "float8_e4m3fnuz", 1, kFloat8, "", 31, "", false, "", "")                 \
  X(UInt16, "uint16", 2, kUnsigned, "", 28, "TYPE_UINT16", false, "<u2", "")                   \
  X(UInt32, "uint32", 4, kUnsigned, "", 34, "TYPE_UINT32", false, "<u4", "")                   \
  X(UInt64, "uint64", 8, kUnsigned, "", 35, "TYPE_UINT64", false, "<u8", "")                   \
  X(UInt1, "uint1", 1, kBits, "", 0, "", false, "", "")                                        \
  X(UInt2, "uint2", 1, kBits, "", 0, "", false, "", "")                                        \
  X(UInt3, "uint3", 1, kBits, "", 0, "", false, "", "")                                        \
  X(UInt4, "uint4", 1, kBits, "", 0, "", false, "", "")                                        \
  X(UInt5, "uint5", 1, kBits, "", 0, "", false, "", "")                                        \
  X(UInt6, "uint6", 1, kBits, "", 0, "", false, "", "")                                        \
  X(UInt7, "uint7", 1, kBits, "", 0, "", false, "", "")                                        \
  X(Int1, "int1", 1, kBits, "", 0, "", false, "", "")                                          \
  X(Int2, "int2", 1, kBits, "", 0, "", false, "", "")                                          \
  X(Int3, "int3", 1, kBits, "", 0, "", false, "", "")                                          \
  X(Int4, "int4", 1, kBits, "", 0, "", false, "", "")                                          \
  X(Int5, "int5", 1, kBits, "", 0, "", false, "", "")                                          \
  X(Int6, "int6", 1, kBits, "", 0, "", false, "", "")                                          \
  X(Int7, "int7", 1, kBits, "", 0, "", false, "", "")                                          \
  X(Float8_e8m0fnu, "float8_e8m0fnu", 1, kFloat8, "", 33, "", false, "", "")                   \
  X(Float4_e2m1fn_x2, "float4_e2m1fn_x2", 1, kBits, "", 0, "", false, "", "")

struct DtypeInfo {
  const char* c10;   // "Float", "UInt16"
  const char* name;  // "float32", "uint16"
  uint64_t size;     // bytes per element
  DtypeKind kind;
  const char* short_name;  // print_program's _scalar_type_str ("f"), "" where it has none
  int pt2;                 // .pt2's serialized ScalarType (7 = FLOAT), 0 where it has none
  const char* triton;      // Triton's data_type ("TYPE_FP32"), "" where it has none
  bool input;              // an input's dtype (--input, inferred inputs)
  const char* numpy;       // NumPy's type string ("<f4"), "" where it has none
  const char* legacy;      // model.json's dataType ("FLOAT"), "" where it has none
};

// Every dtype, in c10's order.
const std::vector<DtypeInfo>& AllDtypes();
// By tsctl's name ("float32"); null if none.
const DtypeInfo* DtypeByName(std::string_view name);
// By c10's (and ExecuTorch's) name ("Float"); null if none.
const DtypeInfo* DtypeByC10(std::string_view c10);
// By .pt2's serialized ScalarType number; null if none.
const DtypeInfo* DtypeByPt2(int64_t value);
// By ScalarType value (c10's and ExecuTorch's enum); null past the list.
const DtypeInfo* DtypeByValue(int value);
// The ScalarType value of a row (its index in AllDtypes()).
int DtypeValue(const DtypeInfo& dtype);
// By tsctl's name, if an input may have it (the `input` column); null if not.
const DtypeInfo* InputDtype(std::string_view name);

}  // namespace tsctl
