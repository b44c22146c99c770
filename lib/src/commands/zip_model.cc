// The rows of the ZIP formats (zip_model.h) and what picks one.
#include "zip_model.h"

namespace tsctl {

const std::vector<const ZipModel*>& ZipModels() {
  static const std::vector<const ZipModel*> kModels = {&kPt2Model, &kTorchScriptModel};
  return kModels;
}

const ZipModel& ZipModelOf(const Archive& archive) {
  for (const ZipModel* m : ZipModels()) {
    if (m->claims(archive)) return *m;
  }
  return *ZipModels().back();
}

}  // namespace tsctl
