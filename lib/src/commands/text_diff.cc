// Myers, "An O(ND) Difference Algorithm and Its Variations" (1986): the
// greedy forward search, keeping each round's furthest-reaching paths to
// trace the edit script back. Written here rather than taken from Debian's
// libdtl-dev (see docs/manual/diff.md).
#include "tsctl/text_diff.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>

namespace tsctl {
namespace {

enum class Op : char { kKeep = ' ', kDelete = '-', kInsert = '+' };

struct Edit {
  Op op;
  size_t a;  // index in a (kKeep, kDelete)
  size_t b;  // index in b (kKeep, kInsert)
};

// Edit script of a[0..n) -> b[0..m), or an empty optional past max_edits.
bool Myers(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, int max_edits,
           std::vector<Edit>& out) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  const int max_d = std::min(n + m, max_edits);
  const int offset = max_d + 1;
  std::vector<int> v(static_cast<size_t>(2 * max_d + 3), 0);
  std::vector<std::vector<int>> trace;
  int found = -1;
  for (int d = 0; d <= max_d && found < 0; ++d) {
    trace.push_back(v);
    for (int k = -d; k <= d; k += 2) {
      int x;
      if (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) {
        x = v[offset + k + 1];
      } else {
        x = v[offset + k - 1] + 1;
      }
      int y = x - k;
      while (x < n && y < m && a[static_cast<size_t>(x)] == b[static_cast<size_t>(y)]) {
        ++x;
        ++y;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return false;
  // Walk back from (n, m) through the saved rounds.
  std::vector<Edit> rev;
  int x = n, y = m;
  for (int d = found; d > 0; --d) {
    const std::vector<int>& pv = trace[static_cast<size_t>(d)];
    int k = x - y;
    int prev_k = (k == -d || (k != d && pv[offset + k - 1] < pv[offset + k + 1])) ? k + 1 : k - 1;
    int prev_x = pv[offset + prev_k];
    int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x;
      --y;
      rev.push_back({Op::kKeep, static_cast<size_t>(x), static_cast<size_t>(y)});
    }
    if (x == prev_x) {
      --y;
      rev.push_back({Op::kInsert, static_cast<size_t>(x), static_cast<size_t>(y)});
    } else {
      --x;
      rev.push_back({Op::kDelete, static_cast<size_t>(x), static_cast<size_t>(y)});
    }
    x = prev_x;
    y = prev_y;
  }
  while (x > 0 && y > 0) {
    --x;
    --y;
    rev.push_back({Op::kKeep, static_cast<size_t>(x), static_cast<size_t>(y)});
  }
  out.assign(rev.rbegin(), rev.rend());
  return true;
}

std::string Range(size_t start, size_t count) {
  // diff -u: "l,n" with l 1-based; an empty range names the line before it.
  size_t first = count == 0 ? start : start + 1;
  return count == 1 ? std::to_string(first) : std::to_string(first) + "," + std::to_string(count);
}

}  // namespace

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

std::string UnifiedDiff(std::string_view a_text, std::string_view b_text, int context, int max_edits) {
  std::vector<std::string_view> a = SplitLines(a_text), b = SplitLines(b_text);
  if (a == b) return {};
  context = std::max(context, 0);
  // Lines as small integers: equal lines, equal ids.
  std::unordered_map<std::string_view, uint32_t> ids;
  auto id_of = [&](std::string_view s) {
    return ids.emplace(s, static_cast<uint32_t>(ids.size())).first->second;
  };
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  std::vector<uint32_t> ma, mb;
  for (size_t i = head; i < a.size() - tail; ++i) ma.push_back(id_of(a[i]));
  for (size_t i = head; i < b.size() - tail; ++i) mb.push_back(id_of(b[i]));

  std::vector<Edit> edits;
  for (size_t i = 0; i < head; ++i) edits.push_back({Op::kKeep, i, i});
  std::vector<Edit> middle;
  if (!Myers(ma, mb, max_edits, middle)) {
    middle.clear();
    for (size_t i = 0; i < ma.size(); ++i) middle.push_back({Op::kDelete, i, 0});
    for (size_t j = 0; j < mb.size(); ++j) middle.push_back({Op::kInsert, ma.size(), j});
  }
  for (const Edit& e : middle) edits.push_back({e.op, e.a + head, e.b + head});
  for (size_t i = 0; i < tail; ++i) edits.push_back({Op::kKeep, a.size() - tail + i, b.size() - tail + i});

  // Group changes with their context into hunks.
  std::string out;
  const size_t ctx = static_cast<size_t>(context);
  size_t i = 0;
  while (i < edits.size()) {
    while (i < edits.size() && edits[i].op == Op::kKeep) ++i;
    if (i == edits.size()) break;
    size_t start = i >= ctx ? i - ctx : 0;
    size_t end = i;  // one past the last change of this hunk
    size_t j = i;
    while (j < edits.size()) {
      if (edits[j].op != Op::kKeep) {
        end = j + 1;
        ++j;
        continue;
      }
      size_t run = j;
      while (run < edits.size() && edits[run].op == Op::kKeep) ++run;
      if (run == edits.size() || run - j > 2 * ctx) break;
      j = run;
    }
    size_t stop = std::min(edits.size(), end + ctx);
    size_t a_start = edits[start].a, b_start = edits[start].b, a_n = 0, b_n = 0;
    std::string body;
    for (size_t k = start; k < stop; ++k) {
      const Edit& e = edits[k];
      std::string_view line = e.op == Op::kInsert ? b[e.b] : a[e.a];
      if (e.op != Op::kInsert) ++a_n;
      if (e.op != Op::kDelete) ++b_n;
      body += static_cast<char>(e.op);
      body.append(line);
      body += '\n';
    }
    out += "@@ -" + Range(a_start, a_n) + " +" + Range(b_start, b_n) + " @@\n" + body;
    i = stop;
  }
  return out;
}

}  // namespace tsctl
