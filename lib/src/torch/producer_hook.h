#pragma once

namespace tsctl {

// Makes every archive this process saves through LibTorch carry
// extra/producer_info.json (AutoProducerFields plus "written_by": "tsctl"),
// through torch::jit::SetExportModuleExtraFilesHook. Files the caller passes
// to save() under the same name win. Called once, when the plugin loads.
void InstallProducerHook();

}  // namespace tsctl
