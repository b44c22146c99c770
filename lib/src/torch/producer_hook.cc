#include "producer_hook.h"

#include <torch/csrc/jit/serialization/export.h>

#include "../archive/producer.h"

namespace tsctl {

void InstallProducerHook() {
  torch::jit::SetExportModuleExtraFilesHook([](const torch::jit::Module&) {
    nlohmann::json producer = AutoProducerFields();
    producer["written_by"] = "tsctl";
    return torch::jit::ExtraFilesMap{{kProducerRecord, producer.dump(2) + "\n"}};
  });
}

}  // namespace tsctl
