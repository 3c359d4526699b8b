#pragma once
// The root of every exception the isatune libraries throw. The CLI catches it and prints what() on one line.
#include <stdexcept>
#include <string>

namespace isatune {

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Input that cannot be used: a malformed file, an unknown target, an impossible parameter.
class InputError : public Error {
public:
  using Error::Error;
};

// A toolkit or library that is needed is absent (comgr, ptxas, a GPU driver).
class UnavailableError : public Error {
public:
  using Error::Error;
};

} // namespace isatune
