// A simple aligned table for the text renderers (render_inspect.cc,
// render_pt2.cc); cells must already be escaped. Not a public interface.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace tsctl {

// A simple aligned table: columns padded to their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Columns listed in `right` are right-aligned.
  void Print(std::ostream& out, const std::string& indent, const std::vector<size_t>& right = {}) const {
    std::vector<size_t> width;
    for (const auto& r : rows_) {
      if (width.size() < r.size()) width.resize(r.size(), 0);
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    }
    for (const auto& r : rows_) {
      std::string line = indent;
      for (size_t i = 0; i < r.size(); ++i) {
        bool is_right = std::find(right.begin(), right.end(), i) != right.end();
        std::string pad(width[i] - r[i].size(), ' ');
        if (i + 1 == r.size() && !is_right) {
          line += r[i];
        } else {
          line += is_right ? pad + r[i] : r[i] + pad;
        }
        if (i + 1 < r.size()) line += "  ";
      }
      out << line << '\n';
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tsctl
