#pragma once

#include <string>

#include "tsctl/torch_backend.h"

namespace tsctl {

std::string RenderGraph(const GraphOptions& options);
std::string RenderCompiledCode(const std::string& path, const std::string& method);

}  // namespace tsctl
