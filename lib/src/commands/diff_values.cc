// Element-wise comparison of tensor storage bytes, per dtype.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "tsctl/diff.h"
#include "tsctl/dtype.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // storages are little-endian, as is every host we build for
  return v;
}

double HalfToDouble(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(static_cast<double>(mant + 1024), exp - 25);
  }
  return sign ? -v : v;
}

double BFloat16ToDouble(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The float8 formats (c10/util/Float8_*.h): sign, `E` exponent bits of
// bias `kBias`, the rest mantissa. kIeee (e5m2): an all-ones exponent is
// infinity or NaN; kFn (e4m3fn): only all ones is NaN, no infinity; kFnuz:
// 0x80 is the one NaN, no infinity, no negative zero.
enum class F8 { kIeee, kFn, kFnuz };
template <int E, int kBias, F8 kMode>
double Float8ToDouble(uint8_t v) {
  constexpr int M = 7 - E;
  const int sign = v >> 7, exp = (v >> M) & ((1 << E) - 1), mant = v & ((1 << M) - 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (kMode == F8::kFnuz && v == 0x80) return nan;
  if (kMode == F8::kIeee && exp == (1 << E) - 1) return mant ? nan : (sign ? -1 : 1) * std::numeric_limits<double>::infinity();
  if (kMode == F8::kFn && exp == (1 << E) - 1 && mant == (1 << M) - 1) return nan;
  const double x = exp == 0 ? std::ldexp(static_cast<double>(mant), 1 - kBias - M)
                            : std::ldexp(static_cast<double>(mant + (1 << M)), exp - kBias - M);
  return sign ? -x : x;
}

// float8_e8m0fnu: an exponent alone, 2^(v-127); 0xff is NaN.
double E8M0ToDouble(uint8_t v) {
  return v == 0xff ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, static_cast<int>(v) - 127);
}

// One pair of values (real, or the parts of a complex number).
inline void Visit(double x, double y, double xi, double yi, bool integral, double rtol, double atol,
                  ValueStats& s) {
  if (!integral && x == y && xi == yi) return;  // callers compare integers exactly
  bool nx = std::isnan(x) || std::isnan(xi), ny = std::isnan(y) || std::isnan(yi);
  if (nx || ny) {
    if (nx && ny) return;
    s.nan_mismatch = true;
    ++s.differing;
    return;
  }
  double d = xi == 0 && yi == 0 ? std::fabs(x - y) : std::hypot(x - y, xi - yi);
  if (integral && d == 0) d = 1;  // int64 values too close for a double still differ
  double mag = xi == 0 ? std::fabs(x) : std::hypot(x, xi);
  double rel = mag == 0 ? std::numeric_limits<double>::infinity() : d / mag;
  if (d > s.max_abs || std::isnan(d)) s.max_abs = d;
  if (rel > s.max_rel) s.max_rel = rel;
  if (!(d <= atol + rtol * mag)) ++s.differing;
}

template <typename T, bool kIntegral>
void CompareReal(const char* a, const char* b, uint64_t n, double rtol, double atol, ValueStats& s) {
  for (uint64_t i = 0; i < n; ++i) {
    T x = Load<T>(a + i * sizeof(T)), y = Load<T>(b + i * sizeof(T));
    if (x == y) continue;
    Visit(static_cast<double>(x), static_cast<double>(y), 0, 0, kIntegral, rtol, atol, s);
  }
}

template <double (*kDecode)(uint16_t)>
void Compare16(const char* a, const char* b, uint64_t n, double rtol, double atol, ValueStats& s) {
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t x = Load<uint16_t>(a + 2 * i), y = Load<uint16_t>(b + 2 * i);
    if (x == y) continue;
    Visit(kDecode(x), kDecode(y), 0, 0, false, rtol, atol, s);
  }
}

template <double (*kDecode)(uint8_t)>
void Compare8(const char* a, const char* b, uint64_t n, double rtol, double atol, ValueStats& s) {
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t x = static_cast<uint8_t>(a[i]), y = static_cast<uint8_t>(b[i]);
    if (x == y) continue;
    Visit(kDecode(x), kDecode(y), 0, 0, false, rtol, atol, s);
  }
}

void CompareBool(const char* a, const char* b, uint64_t n, double rtol, double atol, ValueStats& s) {
  for (uint64_t i = 0; i < n; ++i) {
    bool x = a[i] != 0, y = b[i] != 0;
    if (x != y) Visit(x ? 1 : 0, y ? 1 : 0, 0, 0, true, rtol, atol, s);
  }
}

template <typename T>
void CompareComplex(const char* a, const char* b, uint64_t n, double rtol, double atol, ValueStats& s) {
  for (uint64_t i = 0; i < n; ++i) {
    const char* pa = a + 2 * i * sizeof(T);
    const char* pb = b + 2 * i * sizeof(T);
    if (std::memcmp(pa, pb, 2 * sizeof(T)) == 0) continue;
    Visit(Load<T>(pa), Load<T>(pb), Load<T>(pa + sizeof(T)), Load<T>(pb + sizeof(T)), false, rtol, atol, s);
  }
}

void CompareComplexHalf(const char* a, const char* b, uint64_t n, double rtol, double atol, ValueStats& s) {
  for (uint64_t i = 0; i < n; ++i) {
    if (std::memcmp(a + 4 * i, b + 4 * i, 4) == 0) continue;
    Visit(HalfToDouble(Load<uint16_t>(a + 4 * i)), HalfToDouble(Load<uint16_t>(b + 4 * i)),
          HalfToDouble(Load<uint16_t>(a + 4 * i + 2)), HalfToDouble(Load<uint16_t>(b + 4 * i + 2)), false, rtol,
          atol, s);
  }
}

using CompareFn = void (*)(const char*, const char*, uint64_t, double, double, ValueStats&);

struct DtypeEntry {
  uint64_t size;
  CompareFn fn;
};

// One comparison per dtype of tsctl/dtype.h.
CompareFn CompareOf(const DtypeInfo& d) {
  const std::string_view n = d.name;
  switch (d.kind) {
    case DtypeKind::kFloat: return d.size == 4 ? CompareReal<float, false> : CompareReal<double, false>;
    case DtypeKind::kHalf: return Compare16<HalfToDouble>;
    case DtypeKind::kBFloat16: return Compare16<BFloat16ToDouble>;
    case DtypeKind::kFloat8:
      if (n == "float8_e5m2") return Compare8<Float8ToDouble<5, 15, F8::kIeee>>;
      if (n == "float8_e4m3fn") return Compare8<Float8ToDouble<4, 7, F8::kFn>>;
      if (n == "float8_e5m2fnuz") return Compare8<Float8ToDouble<5, 16, F8::kFnuz>>;
      if (n == "float8_e4m3fnuz") return Compare8<Float8ToDouble<4, 8, F8::kFnuz>>;
      if (n == "float8_e8m0fnu") return Compare8<E8M0ToDouble>;
      return nullptr;
    case DtypeKind::kComplex:
      return d.size == 4 ? CompareComplexHalf : d.size == 8 ? CompareComplex<float> : CompareComplex<double>;
    case DtypeKind::kBool: return CompareBool;
    case DtypeKind::kSigned:
    case DtypeKind::kQuantized:  // raw integers: scale and zero point live in the pickle, not the storage
      if (n == "quint8" || n == "quint4x2" || n == "quint2x4") return CompareReal<uint8_t, true>;
      switch (d.size) {
        case 1: return CompareReal<int8_t, true>;
        case 2: return CompareReal<int16_t, true>;
        case 4: return CompareReal<int32_t, true>;
        default: return CompareReal<int64_t, true>;
      }
    case DtypeKind::kUnsigned:
      switch (d.size) {
        case 1: return CompareReal<uint8_t, true>;
        case 2: return CompareReal<uint16_t, true>;
        case 4: return CompareReal<uint32_t, true>;
        default: return CompareReal<uint64_t, true>;
      }
    case DtypeKind::kBits:  // packed or opaque: each stored unit compared as an unsigned integer
      return d.size == 2 ? CompareReal<uint16_t, true> : CompareReal<uint8_t, true>;
  }
  return nullptr;
}

const std::map<std::string, DtypeEntry>& Table() {
  static const std::map<std::string, DtypeEntry> kTable = [] {
    std::map<std::string, DtypeEntry> t;
    for (const DtypeInfo& d : AllDtypes()) {
      if (CompareFn fn = CompareOf(d)) t.emplace(d.name, DtypeEntry{d.size, fn});
    }
    return t;
  }();
  return kTable;
}

}  // namespace

uint64_t DiffElementSize(const std::string& dtype) {
  auto it = Table().find(dtype);
  return it == Table().end() ? 0 : it->second.size;
}

void CompareElements(const std::string& dtype, const char* a, const char* b, uint64_t n, double rtol,
                     double atol, ValueStats& stats) {
  auto it = Table().find(dtype);
  if (it == Table().end()) throw Error(ErrorKind::kFormat, "cannot compare values of dtype " + dtype);
  stats.numel += n;
  // Most chunks of most tensors are byte-identical: skip them in one memcmp.
  constexpr uint64_t kBlock = 4096;
  const uint64_t size = it->second.size;
  for (uint64_t done = 0; done < n;) {
    uint64_t take = std::min(kBlock, n - done);
    const char* pa = a + done * size;
    const char* pb = b + done * size;
    if (std::memcmp(pa, pb, take * size) != 0) it->second.fn(pa, pb, take, rtol, atol, stats);
    done += take;
  }
}

}  // namespace tsctl
