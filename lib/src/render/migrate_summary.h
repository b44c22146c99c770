// The figures of a migrate run that its text, JSON and page share
// (render_migrate.cc), private to render/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tsctl/migrate.h"

namespace tsctl {

// Every stage, in order, from kNone to kPackaged.
inline constexpr MigrateStage kMigrateStages[] = {MigrateStage::kNone,           MigrateStage::kLoaded,
                                                  MigrateStage::kInputs,         MigrateStage::kConverted,
                                                  MigrateStage::kVerifiedSample, MigrateStage::kVerifiedShapes,
                                                  MigrateStage::kPackaged};

// Blocker kinds ranked by how many models they stop (a model counts once
// per kind), most first; ties in the kinds' order.
std::vector<std::pair<std::string, int>> RankedMigrateBlockers(const std::vector<MigrateResult>& results);
// How many models reached at least `stage`.
int MigrateReached(const std::vector<MigrateResult>& results, MigrateStage stage);

// A --bench median as text: "412 us", "1.23 ms", "2.05 s".
std::string MigrateLatency(double ns);
// A --bench form's name as the reports write it: "TorchScript",
// "torch.export program", "AOTInductor package".
std::string MigrateFormName(const std::string& form);

// --compare-intermediates' finding, in words (not escaped): "first differing
// node aten::rand at File "code/__torch__.py", line 9 (the program's rand
// (aten::rand)): max abs 0.3; 2 of 5 matched nodes agree before it", or the
// note saying why none is named. "" where nothing was compared.
std::string MigrateDivergenceText(const MigrateDivergence& d);

}  // namespace tsctl
