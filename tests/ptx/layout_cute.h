#pragma once
// A tiny CuTe-style layout evaluator for the layout tests: nested shape:stride tuples written as in CuTe
// ("((4,8),(2,2,2)):((32,1),(16,8,128))"), coordinates split colexicographically (first mode fastest), as
// cute/layout.hpp's crd2idx does. It is an independent formulation of the fragment/descriptor maps: the tests
// compare the library's closed forms with these layouts element by element.
#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace layout_test {

struct IntTuple {
  bool leaf = true;
  int64_t value = 0;
  std::vector<IntTuple> kids;
};

inline IntTuple parse_tuple(const std::string& s, size_t& p) {
  IntTuple t;
  if (s[p] == '(') {
    t.leaf = false;
    ++p;
    while (true) {
      t.kids.push_back(parse_tuple(s, p));
      if (s[p] == ',') {
        ++p;
        continue;
      }
      if (s[p] != ')')
        throw std::runtime_error("bad tuple: " + s);
      ++p;
      break;
    }
    return t;
  }
  size_t q = p;
  while (q < s.size() && (std::isdigit(static_cast<unsigned char>(s[q])) || s[q] == '-'))
    ++q;
  if (q == p)
    throw std::runtime_error("bad tuple: " + s);
  t.value = std::stoll(s.substr(p, q - p));
  p = q;
  return t;
}

inline int64_t tuple_size(const IntTuple& t) {
  if (t.leaf)
    return t.value;
  int64_t n = 1;
  for (const IntTuple& k : t.kids)
    n *= tuple_size(k);
  return n;
}

// idx (< size of shape) split colexicographically over the (nested) modes, dotted with the strides.
inline int64_t crd2idx(const IntTuple& shape, const IntTuple& stride, int64_t idx) {
  if (shape.leaf) {
    if (!stride.leaf)
      throw std::runtime_error("shape/stride mismatch");
    return idx * stride.value;
  }
  if (stride.leaf || stride.kids.size() != shape.kids.size())
    throw std::runtime_error("shape/stride mismatch");
  int64_t r = 0;
  for (size_t i = 0; i < shape.kids.size(); ++i) {
    int64_t n = tuple_size(shape.kids[i]);
    r += crd2idx(shape.kids[i], stride.kids[i], idx % n);
    idx /= n;
  }
  return r;
}

struct Layout {
  IntTuple shape, stride;
  explicit Layout(const std::string& text) {
    size_t colon = text.find(':');
    size_t p = 0;
    std::string a = text.substr(0, colon), b = text.substr(colon + 1);
    shape = parse_tuple(a, p);
    p = 0;
    stride = parse_tuple(b, p);
  }
  int64_t size() const { return tuple_size(shape); }
  int64_t mode_size(size_t m) const { return tuple_size(shape.kids.at(m)); }
  // Rank-2 layouts (thread, value) or (mn, k): each top-level mode gets its own coordinate.
  int64_t operator()(int64_t c0, int64_t c1) const {
    if (c0 >= mode_size(0) || c1 >= mode_size(1))
      throw std::runtime_error("coordinate out of the layout's shape");
    return crd2idx(shape.kids.at(0), stride.kids.at(0), c0) +
           crd2idx(shape.kids.at(1), stride.kids.at(1), c1);
  }
};

// Bit-by-bit statement of CuTe's Swizzle<B,M,S> (S > 0): bit j in [M, M+B) is XORed with bit j+S.
inline uint64_t swizzle_bits_reference(uint32_t b, uint32_t m, uint32_t s, uint64_t x) {
  uint64_t y = x;
  for (uint32_t j = m; j < m + b; ++j)
    y ^= ((x >> (j + s)) & 1) << j;
  return y;
}

} // namespace layout_test
