// Several threads assembling different variants at once give the same bytes as serial runs.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/llvm_mc.h"
#include "llvm_skip.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

using testing::vadd_kernel;

struct Variant {
  std::string isa, text;
};

// The mix of ISAs the linked LLVM knows; one it does not (gfx950 on LLVM 19) is left out with the reason printed.
std::vector<std::string> mixed_isas() {
  std::vector<std::string> isas;
  for (const char* isa : {"gfx90a", "gfx942", "gfx950"}) {
    if (std::string why = isatune::test::llvm_lacks(isa); !why.empty())
      std::cout << "[   NOTE   ] " << isa << " left out of the mix: " << why << "\n";
    else
      isas.push_back(isa);
  }
  return isas;
}

std::vector<Variant> variants() {
  const std::vector<std::string> isas = mixed_isas();
  std::vector<Variant> out;
  for (int i = 0; i < 24; ++i) {
    std::string extra;
    for (int j = 0; j <= i; ++j) extra += "  v_fma_f32 v4, v3, v3, v" + std::to_string(j % 4) + "\n";
    std::string isa = isas[i % isas.size()];
    out.push_back({isa, vadd_kernel(isa, "k" + std::to_string(i), extra)});
  }
  return out;
}

TEST(Concurrency, EightThreadsMatchSerial) {
  auto as = make_assembler("llvm");
  const auto vs = variants();
  std::vector<std::vector<uint8_t>> serial;
  for (const auto& v : vs) serial.push_back(as->assemble(v.text, {v.isa, "v.s"}).code.bytes);
  // All variants differ from each other, so a mix-up between threads would be seen.
  for (size_t i = 1; i < serial.size(); ++i) ASSERT_NE(serial[i], serial[i - 1]);

  constexpr int kThreads = 8, kRounds = 3;
  std::vector<std::vector<std::vector<uint8_t>>> got(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRounds; ++r)
          for (size_t i = 0; i < vs.size(); ++i) {
            size_t k = (i + static_cast<size_t>(t) * 5) % vs.size(); // each thread its own order
            auto bytes = as->assemble(vs[k].text, {vs[k].isa, "v.s"}).code.bytes;
            if (bytes != serial[k]) ++errors;
          }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
        ++errors;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST(Concurrency, ObjectsOnlyInParallel) {
  // The MC stage alone has no lock: check it separately, with errors mixed in.
  const auto vs = variants();
  std::vector<std::vector<uint8_t>> serial;
  for (const auto& v : vs) serial.push_back(llvm_assemble_object(v.text, {v.isa, "v.s"}));
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < vs.size(); ++i) {
        if ((i + t) % 4 == 0) {
          try {
            llvm_assemble_object(".text\n  v_bogus v0\n", {"gfx942", "bad.s"});
            ++errors;
          } catch (const AssemblyError& e) {
            if (e.diagnostics().front().line != 2) ++errors;
          }
        }
        if (llvm_assemble_object(vs[i].text, {vs[i].isa, "v.s"}) != serial[i]) ++errors;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

} // namespace
} // namespace isatune::toolchain
