// Small text helpers shared by the commands and the renderers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tsctl {

// "1.5 KiB", "12 B", "3.2 GiB".
std::string HumanBytes(uint64_t bytes);

// True if `s` is valid UTF-8 without control characters other than \n, \r
// and \t: how inspect and diff decide that an extra/ record is text.
bool IsTextual(const std::string& s);

// True if `s` is an identifier as Python and TorchScript spell one in ASCII:
// a letter or '_' first, then letters, digits and '_'.
bool IsIdentifier(const std::string& s);

// True if `s` ends with `tail`.
bool EndsWith(std::string_view s, std::string_view tail);

// The largest length <= `max` at which `s` can be cut without splitting a
// UTF-8 sequence (a cut never lands on a continuation byte).
size_t Utf8CutPoint(std::string_view s, size_t max);

}  // namespace tsctl
