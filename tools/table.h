#pragma once
// A plain text table for people: columns padded to their widest cell, a rule under the header.
#include <string>
#include <vector>

namespace isatune::cli {

class Table {
public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const;

private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

} // namespace isatune::cli
