#include "tsctl/dtype.h"

namespace tsctl {

const std::vector<DtypeInfo>& AllDtypes() {
#define TSCTL_DTYPE_ROW(c10, name, size, kind, short_name, pt2, triton, input, numpy, legacy) \
  {#c10, name, size, DtypeKind::kind, short_name, pt2, triton, input, numpy, legacy},
  static const std::vector<DtypeInfo> kAll = {TSCTL_DTYPES(TSCTL_DTYPE_ROW)};
#undef TSCTL_DTYPE_ROW
  return kAll;
}

const DtypeInfo* DtypeByName(std::string_view name) {
  for (const DtypeInfo& d : AllDtypes()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

const DtypeInfo* DtypeByC10(std::string_view c10) {
  for (const DtypeInfo& d : AllDtypes()) {
    if (c10 == d.c10) return &d;
  }
  return nullptr;
}

const DtypeInfo* DtypeByPt2(int64_t value) {
  if (value <= 0) return nullptr;
  for (const DtypeInfo& d : AllDtypes()) {
    if (d.pt2 == value) return &d;
  }
  return nullptr;
}

const DtypeInfo* DtypeByValue(int value) {
  const std::vector<DtypeInfo>& all = AllDtypes();
  return value >= 0 && static_cast<size_t>(value) < all.size() ? &all[static_cast<size_t>(value)] : nullptr;
}

int DtypeValue(const DtypeInfo& dtype) { return static_cast<int>(&dtype - AllDtypes().data()); }

const DtypeInfo* InputDtype(std::string_view name) {
  const DtypeInfo* d = DtypeByName(name);
  return d && d->input ? d : nullptr;
}

}  // namespace tsctl
