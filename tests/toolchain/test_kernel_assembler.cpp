// The kernel fast path (assemble_kernel: builder instructions as MCInsts) against the text path (cdna::print +
// the "llvm" Assembler): every form the builder offers on every target, whole kernels with loops and branches,
// constants and offsets across their value classes, fallbacks, and several threads at once. The code objects
// must be byte-identical (so .text, descriptor and metadata are too; those are also compared as codeobj reads
// them, for clearer failures).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/cdna/sample.h"
#include "isatune/error.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/kernel_assembler.h"
#include "llvm_skip.h"
#include "toolchain_test_util.h"

using namespace isatune;
using namespace isatune::cdna;
using isatune::toolchain::KernelAssembleStats;

namespace {

const toolchain::Assembler& text_assembler() {
  static auto a = toolchain::make_assembler("llvm");
  return *a;
}

toolchain::Assembled text_path(const Kernel& k) {
  toolchain::AssembleOptions o;
  o.target = k.target.str();
  o.file_name = k.name + ".s";
  return text_assembler().assemble(print(k), o);
}

std::string fallback_text(const KernelAssembleStats& s) {
  std::string out;
  for (const auto& f : s.fallback_forms) out += "\n  " + f;
  return out;
}

// Fast path == text path: bytes, .text, and what codeobj reads from descriptor and metadata.
void expect_same(const Kernel& k, KernelAssembleStats* stats_out = nullptr) {
  const toolchain::Assembled text = text_path(k);
  KernelAssembleStats stats;
  const toolchain::Assembled fast = toolchain::assemble_kernel(k, {}, &stats);
  if (stats_out) *stats_out = stats;
  const auto text_code = toolchain::testing::elf_section(text.code.bytes, ".text");
  const auto fast_code = toolchain::testing::elf_section(fast.code.bytes, ".text");
  ASSERT_TRUE(text_code && fast_code);
  EXPECT_EQ(*fast_code, *text_code) << "the .text sections differ\n" << print(k);
  EXPECT_EQ(fast.code.sha256, text.code.sha256) << "the code objects differ";
  ASSERT_EQ(fast.code.kernels.size(), 1u);
  ASSERT_EQ(text.code.kernels.size(), 1u);
  const KernelInfo &a = fast.code.kernels[0], &b = text.code.kernels[0];
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.symbol, b.symbol);
  EXPECT_EQ(a.kernarg_size, b.kernarg_size);
  EXPECT_EQ(a.lds_bytes, b.lds_bytes);
  EXPECT_EQ(a.vgprs, b.vgprs);
  EXPECT_EQ(a.agprs, b.agprs);
  EXPECT_EQ(a.sgprs, b.sgprs);
  EXPECT_EQ(a.max_workgroup_size, b.max_workgroup_size);
  EXPECT_EQ(a.args.size(), b.args.size());
  EXPECT_EQ(a.code_size, b.code_size);
  ASSERT_TRUE(a.descriptor && b.descriptor);
  EXPECT_EQ(a.descriptor->compute_pgm_rsrc1, b.descriptor->compute_pgm_rsrc1);
  EXPECT_EQ(a.descriptor->compute_pgm_rsrc2, b.descriptor->compute_pgm_rsrc2);
  EXPECT_EQ(a.descriptor->compute_pgm_rsrc3, b.descriptor->compute_pgm_rsrc3);
  EXPECT_EQ(a.descriptor->kernel_code_properties, b.descriptor->kernel_code_properties);
  EXPECT_EQ(stats.instructions, stats.fast + stats.fallback);
}

struct Case {
  const Form* form;
  Gfx gfx;
};

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const auto& f : all_forms())
    for (const auto& t : all_targets())
      if (f.available_on(t.gfx)) out.push_back({&f, t.gfx});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return std::string(info.param.form->name) + "_" + std::string(all_targets()[static_cast<int>(info.param.gfx)].name);
}

// Every sample of the form, then a label and s_endpgm (branch samples jump to it).
Kernel form_kernel(const Form& form, Gfx gfx, const std::string& target_id = "") {
  const TargetInfo& info = all_targets()[static_cast<int>(gfx)];
  Builder b(parse_target_id(target_id.empty() ? std::string(info.name) : target_id), "k");
  Label end = b.label("end");
  for (const auto& s : sample_instructions(form, gfx, end)) b.emit(form.name, s.operands(), s.modifiers());
  b.bind(end);
  b.s_endpgm();
  return b.finish();
}

class KernelAssemblerForms : public testing::TestWithParam<Case> {};

TEST_P(KernelAssemblerForms, SameBytesAsTextPathWithoutFallback) {
  const Case c = GetParam();
  const TargetInfo& info = all_targets()[static_cast<int>(c.gfx)];
  if (std::string why = test::llvm_lacks(info.name); !why.empty()) GTEST_SKIP() << why;
  const Kernel k = form_kernel(*c.form, c.gfx);
  KernelAssembleStats stats;
  expect_same(k, &stats);
  EXPECT_EQ(stats.fallback, 0u) << "instructions that took the text path:" << fallback_text(stats);
  EXPECT_GE(stats.instructions, 2u);
  // Again, from the templates learned above.
  KernelAssembleStats again;
  expect_same(k, &again);
  EXPECT_EQ(again.templates_learned, 0u);
  EXPECT_EQ(again.fallback, stats.fallback);
}

INSTANTIATE_TEST_SUITE_P(AllForms, KernelAssemblerForms, testing::ValuesIn(all_cases()), case_name);

// The benchmark's mix (bench/bench_assemble.cpp): VALU, VOP3P, SALU with literals, SMEM, global, LDS, MFMA.
Kernel mixed_kernel(const std::string& target, int n) {
  Builder b(parse_target_id(target), "big");
  b.add_arg("a", 8, 8, ArgKind::global_buffer);
  b.add_arg("b", 8, 8, ArgKind::global_buffer);
  b.add_arg("c", 8, 8, ArgKind::global_buffer);
  b.set_lds_bytes(65536);
  b.s_load(s(4, 4), b.kernarg_ptr(), 0);
  b.s_load(s(8, 2), b.kernarg_ptr(), 0x10);
  b.emit("v_and_b32", {v(0), 0x3ff, v(0)});
  b.emit("v_lshlrev_b32", {v(2), 4, v(0)});
  b.emit("v_lshlrev_b32", {v(1), 3, v(0)});
  b.s_waitcnt(std::nullopt, 0);
  for (int i = 0; i < n; ++i) {
    const int r = i % 8;
    Modifiers m;
    switch (i % 10) {
    case 0:
      m.offset = 16 * r;
      b.emit("global_load_dwordx4", {v(static_cast<uint16_t>(20 + 4 * (r % 4)), 4), v(2), s(4, 2)}, m);
      break;
    case 1:
      m.offset = 64 * r;
      b.emit("ds_read_b128", {v(static_cast<uint16_t>(36 + 4 * (r % 4)), 4), v(1)}, m);
      break;
    case 2:
      b.emit("v_fma_f32", {v(static_cast<uint16_t>(52 + r)), v(static_cast<uint16_t>(20 + r)),
                           v(static_cast<uint16_t>(36 + r)), v(static_cast<uint16_t>(52 + r))});
      break;
    case 3: b.s_waitcnt(0, 0); break;
    case 4: b.emit("v_mfma_f32_32x32x8_f16", {a(0, 16), v(20, 2), v(36, 2), a(0, 16)}); break;
    case 5:
      m.offset = 128 + 8 * r;
      b.emit("ds_write_b64", {v(1), v(static_cast<uint16_t>(52 + (r & 6)), 2)}, m);
      break;
    case 6:
      b.emit("v_add_u32", {v(static_cast<uint16_t>(3 + r % 2)), s(static_cast<uint16_t>(10 + r % 2)),
                           v(static_cast<uint16_t>(3 + r % 2))});
      break;
    case 7:
      b.emit("s_add_u32", {s(static_cast<uint16_t>(12 + r % 4)), s(static_cast<uint16_t>(12 + r % 4)), 0x100 + r});
      break;
    case 8:
      m.offset = 4 * r;
      b.emit("global_store_dword", {v(2), v(static_cast<uint16_t>(52 + r)), s(8, 2)}, m);
      break;
    default: b.emit("v_pk_fma_f32", {v(60, 2), v(20, 2), v(22, 2), v(60, 2)}); break;
    }
  }
  b.s_endpgm();
  return b.finish();
}

TEST(KernelAssembler, MixedKernel) {
  KernelAssembleStats stats;
  expect_same(mixed_kernel("gfx942", 2000), &stats);
  EXPECT_EQ(stats.instructions, 2007u);
  EXPECT_EQ(stats.fallback, 0u) << fallback_text(stats);
}

// The vector add of the printer tests, built with the builder.
Kernel vadd_kernel(const std::string& target) {
  Builder b(parse_target_id(target), "vadd");
  uint32_t a_off = b.add_arg("a", 8, 8, ArgKind::global_buffer, "read_only");
  b.add_arg("b", 8, 8, ArgKind::global_buffer, "read_only");
  uint32_t c_off = b.add_arg("c", 8, 8, ArgKind::global_buffer, "write_only");
  uint32_t n_off = b.add_arg("n", 4, 4, ArgKind::by_value);
  Reg ab = b.alloc_s(4), c = b.alloc_s(2), count = b.alloc_s(1);
  Reg tid = b.workitem_ids(), gid = b.alloc_v(1), addr = b.alloc_v(1), x = b.alloc_v(1), y = b.alloc_v(1);
  Reg saved = b.alloc_s(2);
  b.s_load(ab, b.kernarg_ptr(), static_cast<int>(a_off));
  b.s_load(c, b.kernarg_ptr(), static_cast<int>(c_off));
  b.s_load(count, b.kernarg_ptr(), static_cast<int>(n_off));
  b.emit("v_and_b32", {tid, 0x3ff, tid});
  Reg wg = b.workgroup_id(0);
  b.emit("s_lshl_b32", {wg, wg, 8});
  b.emit("v_add_u32", {gid, wg, tid});
  b.s_waitcnt(std::nullopt, 0);
  b.emit("v_cmp_gt_u32", {vcc(), count, gid});
  b.s_and_saveexec_b64(saved, vcc());
  Label end = b.label("end");
  b.s_cbranch("execz", end);
  b.emit("v_lshlrev_b32", {addr, 2, gid});
  b.global_load(x, addr, ab.sub(0, 2));
  b.global_load(y, addr, ab.sub(2, 2));
  b.s_waitcnt(0, std::nullopt);
  b.emit("v_add_f32", {x, x, y});
  b.global_store(addr, x, c);
  b.bind(end);
  b.s_endpgm();
  return b.finish();
}

TEST(KernelAssembler, VectorAddEveryTarget) {
  for (const auto& t : all_targets()) {
    if (!test::llvm_lacks(t.name).empty()) continue;
    SCOPED_TRACE(std::string(t.name));
    KernelAssembleStats stats;
    expect_same(vadd_kernel(std::string(t.name)), &stats);
    EXPECT_EQ(stats.fallback, 0u) << fallback_text(stats);
  }
}

// Loops with backward branches, forward branches over code, nested labels, a label at the very start and
// branches to the end; AGPRs, LDS, a different descriptor (workgroup ids, float modes).
Kernel loop_kernel(const std::string& target) {
  EntryOptions e;
  e.workgroup_id_y = true;
  e.workitem_id_dims = 2;
  Builder b(parse_target_id(target), "loops", e);
  b.add_arg("out", 8, 8, ArgKind::global_buffer, "write_only");
  b.add_arg("k", 4, 4, ArgKind::by_value);
  b.set_lds_bytes(8192);
  b.set_workgroup_size(512);
  b.float_modes().denorm_32 = 0;
  Label top = b.label("top"), outer = b.label("outer"), inner = b.label("inner"), skip = b.label("skip"),
        done = b.label("done");
  b.bind(top);
  Reg out = b.alloc_s(2), k = b.alloc_s(1), i = b.alloc_s(1), j = b.alloc_s(1);
  Reg acc = b.alloc_v(1), addr = b.alloc_v(1), t = b.alloc_v(2);
  Reg c = b.alloc_a(4);
  b.s_load(out, b.kernarg_ptr(), 0);
  b.s_load(k, b.kernarg_ptr(), 8);
  b.s_waitcnt(std::nullopt, 0);
  b.s_mov(i, 0);
  b.v_mov(acc, 0);
  b.emit("s_cmp_eq_u32", {k, 0});
  b.s_cbranch("scc1", done);
  b.bind(outer);
  b.s_mov(j, 0);
  b.bind(inner);
  b.emit("v_add_f32", {acc, 1.0, acc});
  b.emit("v_lshlrev_b32", {addr, 2, b.workitem_ids()});
  b.ds_write(addr, acc, 16);
  b.ds_read(t.sub(0), addr, 16);
  b.s_waitcnt(std::nullopt, 0);
  b.emit("s_add_u32", {j, j, 1});
  b.emit("s_cmp_lt_u32", {j, 4});
  b.s_cbranch("scc1", inner);
  b.emit("v_accvgpr_write_b32", {c.sub(1), acc});
  b.emit("s_add_u32", {i, i, 1});
  b.emit("s_cmp_lt_u32", {i, k});
  b.s_cbranch("scc0", skip);
  b.s_branch(outer);
  b.bind(skip);
  b.emit("v_accvgpr_read_b32", {t.sub(1), c.sub(1)});
  b.emit("v_mov_b32", {t.sub(0), 0});
  b.global_store(addr, acc, out);
  b.s_cbranch("execnz", done);
  b.s_branch(top);
  b.bind(done);
  b.s_endpgm();
  return b.finish();
}

TEST(KernelAssembler, LoopsAndBranches) {
  for (const auto& t : all_targets()) {
    if (!test::llvm_lacks(t.name).empty()) continue;
    SCOPED_TRACE(std::string(t.name));
    KernelAssembleStats stats;
    expect_same(loop_kernel(std::string(t.name)), &stats);
    EXPECT_EQ(stats.fallback, 0u) << fallback_text(stats);
  }
}

// Constants and offsets across their classes and edges, many values per shape: the templates learned from
// two probes must encode every other value of the class as the parser does.
TEST(KernelAssembler, ValuesAcrossClasses) {
  for (const auto& tinfo : all_targets()) {
    if (!test::llvm_lacks(tinfo.name).empty()) continue;
    SCOPED_TRACE(std::string(tinfo.name));
    Builder b(parse_target_id(std::string(tinfo.name)), "values");
    const int64_t ints[] = {0, 1, 7, 63, 64, 65, 100, 0x3ff, 0x7fff, 0x8000, 0xffff, 0x10000, 0x12345, 0x7fffffff,
                            0x80000000LL, 0xbf800000LL, 0xfffffff0LL, 0xfffffff9LL, 0xffffffffLL, -1, -7, -16,
                            -17, -100, -0x8000, -0x12345, INT32_MIN};
    // Values a form does not take (a literal where only inline constants go) are refused by the builder.
    size_t emitted = 0;
    auto emit = [&](std::string_view form, std::vector<Operand> ops) {
      try {
        b.emit(form, std::move(ops));
        ++emitted;
      } catch (const InputError&) {
      }
    };
    for (int64_t x : ints) {
      emit("s_mov_b32", {s(5), x});
      emit("v_mov_b32", {v(3), x});
      emit("v_add_u32", {v(4), x, v(3)});
      emit("s_add_u32", {s(6), s(7), x});
      emit("s_mov_b64", {s(8, 2), x});
      emit("v_add_f32", {v(5), x, v(6)});
      emit("v_fma_f32", {v(5), x, v(6), v(7)});
      emit("s_movk_i32", {s(9), x});
    }
    for (double f : {0.5, -0.5, 1.0, -1.0, 2.0, -4.0, 0.0, 0.15915494309189535, 3.0, -1.5, 1e10}) {
      emit("v_mov_b32", {v(3), f});
      emit("v_add_f32", {v(4), f, v(3)});
      emit("v_fma_f32", {v(5), f, v(6), v(7)});
    }
    EXPECT_GT(emitted, 150u);
    for (int32_t off : {1, 2, 4, 16, 100, 1024, 4095, -1, -16, -4096})
      b.global_load(v(20), v(2), s(4, 2), off);
    for (int32_t off : {1, 8, 255, 4095}) {
      Modifiers m;
      m.offen = true;
      m.offset = off;
      b.emit("buffer_load_dword", {v(21), v(2), s(12, 4), s(16)}, m);
    }
    for (uint16_t off : {1, 8, 255, 256, 4096, 65535}) b.ds_read(v(22), v(1), off);
    for (int imm : {0, 1, 0x10, 0xff, 0xfffff, -1, -0x100000}) b.s_load(s(20, 2), s(0, 2), imm);
    for (int lane : {0, 1, 31, 63}) b.emit("v_readlane_b32", {s(24), v(3), lane});
    for (int n : {0, 1, 7, 15}) b.s_nop(n);
    b.s_endpgm();
    KernelAssembleStats stats;
    expect_same(b.finish(), &stats);
    EXPECT_EQ(stats.fallback, 0u) << fallback_text(stats);
  }
}

// Register operands that overlap without being equal are never templated: the text path assembles them, in
// place, between fast runs.
TEST(KernelAssembler, OverlappingOperandsFallBackInPlace) {
  Builder b(parse_target_id("gfx942"), "overlap");
  b.emit("v_mov_b32", {v(1), v(2)});
  b.global_load(v(2, 2), v(2, 2), off); // the address is the destination: equal operands are templated
  b.ds_read(v(4, 2), v(5));              // v[4:5] and v5 overlap
  b.emit("v_mov_b32", {v(7), v(8)});
  b.s_endpgm();
  KernelAssembleStats stats;
  expect_same(b.finish(), &stats);
  EXPECT_EQ(stats.fallback, 1u) << fallback_text(stats);
  ASSERT_EQ(stats.fallback_forms.size(), 1u);
  EXPECT_NE(stats.fallback_forms[0].find("ds_read_b64"), std::string::npos) << stats.fallback_forms[0];
}

TEST(KernelAssembler, ErrorsLikeTheTextPath) {
  Builder b(parse_target_id("gfx942"), "bad");
  b.emit("v_mov_b32", {v(1), v(2)});
  b.s_endpgm();
  Kernel k = b.finish();
  toolchain::AssembleOptions o;
  o.target = "gfx90a"; // the kernel says gfx942: .amdgcn_target disagrees
  EXPECT_THROW(toolchain::assemble_kernel(k, o), InputError);
}

// Several threads assemble at once, on a target id whose templates nobody learned yet (so they learn them
// concurrently): every result equals the text path's.
TEST(KernelAssembler, ThreadsGiveIdenticalResults) {
  const std::string target = "amdgcn-amd-amdhsa--gfx942:xnack+";
  if (std::string why = test::llvm_lacks(target); !why.empty()) GTEST_SKIP() << why;
  std::vector<Kernel> kernels = {mixed_kernel(target, 300), loop_kernel(target), vadd_kernel(target)};
  for (const auto& f : all_forms())
    if (f.available_on(Gfx::gfx942) && kernels.size() < 40) kernels.push_back(form_kernel(f, Gfx::gfx942, target));
  std::vector<std::string> expected;
  for (const auto& k : kernels) expected.push_back(text_path(k).code.sha256);
  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (size_t i = 0; i < kernels.size(); ++i) {
          const size_t at = (i + size_t(t) * 7) % kernels.size(); // different orders
          got[t].resize(kernels.size());
          got[t][at] = toolchain::assemble_kernel(kernels[at]).code.sha256;
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "");
    EXPECT_EQ(got[t], expected) << "thread " << t;
  }
}

} // namespace
