#pragma once
// The shared datasets (see /work/shared/datasets/README.md); tests that need one skip when it is absent.
#include <filesystem>
#include <string>

namespace isatune::tune::test {

struct DatasetCase {
  const char* file;
  const char* format;
  size_t entries;
  size_t invalid;
};

inline const DatasetCase kDatasets[] = {
    {"gemm-rtx3090/RTX_3090.json.gz", "kernel-tuner", 17956, 0},
    {"convolution-a100-mi250x/A100.json.gz", "kernel-tuner", 4362, 161},
    {"convolution-a100-mi250x/MI250X.json.gz", "kernel-tuner", 4362, 0},
    {"convolution-a100-mi250x/MI250X_T4.json.gz", "t4", 4362, 0},
    {"pnpoly-rtx3090/KTPnpolyOutput_3090.json.gz", "ktt", 4092, 274},
    {"pnpoly-rtx3090/RTX_3090.json.gz", "kernel-tuner", 4092, 330},
};

inline std::string dataset_path(const char* file) {
  return std::string(ISATUNE_DATASETS_DIR) + "/" + file;
}

} // namespace isatune::tune::test

#define ISATUNE_NEED_DATASET(path)                                                                           \
  do {                                                                                                       \
    if (!std::filesystem::exists(path))                                                                      \
      GTEST_SKIP() << "dataset absent: " << (path);                                                          \
  } while (0)
