// Guards issue 21: the fast path's learned templates must not keep pointers into the MCContext that parsed their
// probes (it is destroyed when learning ends). Branch forms are the case that did: their label operand is an
// MCExpr owned by that context, and matching the two probes read it after the context was gone. Under
// AddressSanitizer (scripts/sanitize.sh address,undefined) that was a heap-use-after-free inside learn(); in a
// normal build it read freed memory. This test learns every branch shape in a fresh process (CTest runs each
// test alone), churns the heap so that freed blocks are reused, then uses the templates again for branches to
// other labels at other distances, and requires the bytes of the text path every time.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/kernel_assembler.h"
#include "llvm_skip.h"
#include "toolchain_test_util.h"

using namespace isatune;
using namespace isatune::cdna;

namespace {

const char* const kConditions[] = {"scc0", "scc1", "vccz", "vccnz", "execz", "execnz"};

// Branches of every kind forward and backward over `pad` filler instructions, so that offsets differ.
Kernel branch_kernel(const std::string& target, int pad) {
  Builder b(parse_target_id(target), "branches");
  Label top = b.label("top"), mid = b.label("mid"), end = b.label("end");
  Reg x = b.alloc_s(1);
  b.s_mov(x, 0);
  b.bind(top);
  for (int i = 0; i < pad; ++i) b.emit("s_add_u32", {x, x, 1});
  for (const char* c : kConditions) b.s_cbranch(c, end);
  b.bind(mid);
  for (int i = 0; i < pad; ++i) b.emit("s_add_u32", {x, x, 3});
  for (const char* c : kConditions) b.s_cbranch(c, top);
  b.s_branch(mid);
  b.s_branch(end);
  b.bind(end);
  b.s_endpgm();
  return b.finish();
}

std::vector<uint8_t> text_bytes(const Kernel& k) {
  static auto assembler = toolchain::make_assembler("llvm");
  toolchain::AssembleOptions o;
  o.target = k.target.str();
  o.file_name = k.name + ".s";
  return assembler->assemble(print(k), o).code.bytes;
}

// Allocates and fills many blocks of the sizes LLVM's MC objects use, then frees them: a stale pointer into a
// freed context would now read 0xa5 bytes rather than the old expression.
void churn_heap() {
  std::vector<std::unique_ptr<uint8_t[]>> blocks;
  for (size_t size : {16, 24, 32, 48, 64, 96, 128, 256, 4096})
    for (int i = 0; i < 256; ++i) {
      blocks.emplace_back(new uint8_t[size]);
      std::memset(blocks.back().get(), 0xa5, size);
    }
}

TEST(KernelAssemblerTemplateLifetime, BranchTemplatesOwnTheirOperands) {
  bool ran = false;
  for (const auto& t : all_targets()) {
    if (std::string why = test::llvm_lacks(t.name); !why.empty()) {
      std::printf("skipping %s: %s\n", std::string(t.name).c_str(), why.c_str());
      continue;
    }
    SCOPED_TRACE(std::string(t.name));
    toolchain::KernelAssembleStats first;
    const Kernel k1 = branch_kernel(std::string(t.name), 1);
    const auto fast1 = toolchain::assemble_kernel(k1, {}, &first).code.bytes;
    EXPECT_GT(first.templates_learned, 0u) << "the branch shapes were learned earlier in this process";
    EXPECT_EQ(first.fallback, 0u) << "a branch form fell back to the text path";
    EXPECT_EQ(fast1, text_bytes(k1));
    churn_heap();
    for (int pad : {0, 7, 40}) {
      toolchain::KernelAssembleStats again;
      const Kernel k = branch_kernel(std::string(t.name), pad);
      EXPECT_EQ(toolchain::assemble_kernel(k, {}, &again).code.bytes, text_bytes(k)) << "pad " << pad;
      EXPECT_EQ(again.templates_learned, 0u) << "the second kernel should reuse the learned templates";
      EXPECT_EQ(again.fallback, 0u);
    }
    ran = true;
  }
  EXPECT_TRUE(ran) << "no target could be assembled with this LLVM";
}

} // namespace
