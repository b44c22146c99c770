// The producer record tsctl writes into extra/producer_info.json: who made or
// changed an archive, with what, when, from which commit and CI run.
#pragma once

#include <nlohmann/json.hpp>

namespace tsctl {

inline constexpr const char* kProducerRecord = "producer_info.json";

// Fields tsctl can know by itself: tsctl_version, libtorch_version, user,
// host, time (UTC, ISO 8601), git_commit of the working directory when it is
// in a git checkout, and a "ci" object with the usual CI variables that are
// set (CI, GITHUB_SHA, GITHUB_RUN_ID, CI_PIPELINE_ID, BUILD_NUMBER, ...).
nlohmann::json AutoProducerFields();

// The LibTorch version tsctl was built against, known without loading it.
const char* BuiltLibTorchVersion();

}  // namespace tsctl
