// Line-based unified diffs (diff -u hunks) of two texts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tsctl {

// Lines of `text`, split after each '\n' (without it); a last line without
// '\n' is kept, an empty text has no lines.
std::vector<std::string_view> SplitLines(std::string_view text);

// The hunks of a unified diff that turns `a` into `b`: "@@ -l,n +l,n @@"
// headers, then lines prefixed ' ' (context, at most `context` around each
// change), '-' and '+'. Every line ends in '\n'. Empty when equal. Uses
// Myers' O(ND) algorithm on the lines between the common head and tail; past
// `max_edits` differing lines it gives one hunk that replaces that middle.
std::string UnifiedDiff(std::string_view a, std::string_view b, int context = 3,
                        int max_edits = 4000);

}  // namespace tsctl
