// The instruction form catalogue. Every entry was checked by assembling and disassembling it on each target
// that has it (tests/cdna/roundtrip_test.cpp); facts from shared/notes/cdna.md sections 3-5.
#include <memory>
#include <string>
#include <unordered_map>

#include "isatune/cdna/form.h"

namespace isatune::cdna {
namespace {

using Names = std::array<std::string_view, 3>;
Names all(std::string_view n) {
  return {n, n, n};
}
Names from942(std::string_view n) {
  return {"", n, n};
}
Names only950(std::string_view n) {
  return {"", "", n};
}

constexpr uint16_t kS = k_sgpr, kV = k_vgpr, kA = k_agpr;
constexpr uint16_t kSrc32 = kV | kS | k_inline | k_literal; // VOP1/VOP2/VOPC src0
constexpr uint16_t kSrc3 = kV | kS | k_inline;              // VOP3/VOP3P source
constexpr uint16_t kSsrc = kS | k_inline | k_literal;       // SALU source

Slot def(std::string_view n, uint16_t k, uint8_t w = 1) {
  return Slot{n, Role::def, k, w};
}
Slot use(std::string_view n, uint16_t k, uint8_t w = 1) {
  return Slot{n, Role::use, k, w};
}
Slot defuse(std::string_view n, uint16_t k, uint8_t w = 1) {
  return Slot{n, Role::def_use, k, w};
}

struct Table {
  std::vector<Form> forms;
  Form& add(std::string_view name, Names sp, Encoding e, Category c, Counter k, std::vector<Slot> slots,
            uint32_t mods = 0) {
    Form f;
    f.name = name;
    f.spelling = sp;
    f.encoding = e;
    f.category = c;
    f.counter = k;
    f.slots = std::move(slots);
    f.modifiers = mods;
    forms.push_back(std::move(f));
    return forms.back();
  }
};

// Strings built at run time (MFMA and compare names) must outlive the table.
std::string_view keep(std::string s) {
  static std::vector<std::unique_ptr<std::string>> store;
  store.push_back(std::make_unique<std::string>(std::move(s)));
  return *store.back();
}

void scalar(Table& t) {
  // SMEM
  const std::pair<const char*, uint8_t> loads[] = {{"s_load_dword", 1},
                                                   {"s_load_dwordx2", 2},
                                                   {"s_load_dwordx4", 4},
                                                   {"s_load_dwordx8", 8},
                                                   {"s_load_dwordx16", 16}};
  for (auto [n, w] : loads) {
    auto& f = t.add(n, all(n), Encoding::smem, Category::smem, Counter::lgkm,
                    {def("sdst", kS, w), use("sbase", kS, 2), use("soffset", kS | k_simm)});
    f.simm_min = -(1 << 20), f.simm_max = (1 << 20) - 1;
  }
  const std::pair<const char*, uint8_t> bloads[] = {
      {"s_buffer_load_dword", 1}, {"s_buffer_load_dwordx2", 2}, {"s_buffer_load_dwordx4", 4}};
  for (auto [n, w] : bloads) {
    auto& f = t.add(n, all(n), Encoding::smem, Category::smem, Counter::lgkm,
                    {def("sdst", kS, w), use("sbase", kS, 4), use("soffset", kS | k_simm)});
    f.simm_min = -(1 << 20), f.simm_max = (1 << 20) - 1;
  }
  t.add("s_memtime", all("s_memtime"), Encoding::smem, Category::smem, Counter::lgkm, {def("sdst", kS, 2)});

  // SOPP
  {
    auto& f =
        t.add("s_nop", all("s_nop"), Encoding::sopp, Category::nop, Counter::none, {use("count", k_simm)});
    f.simm_min = 0, f.simm_max = 15;
  }
  t.add("s_waitcnt", all("s_waitcnt"), Encoding::sopp, Category::waitcnt, Counter::none, {}, m_waitcnt);
  t.add("s_barrier", all("s_barrier"), Encoding::sopp, Category::barrier, Counter::none, {});
  t.add("s_endpgm", all("s_endpgm"), Encoding::sopp, Category::endpgm, Counter::none, {});
  {
    auto& f = t.add("s_setprio", all("s_setprio"), Encoding::sopp, Category::sched, Counter::none,
                    {use("priority", k_simm)});
    f.simm_min = 0, f.simm_max = 3;
  }
  {
    auto& f = t.add("s_sleep", all("s_sleep"), Encoding::sopp, Category::sched, Counter::none,
                    {use("time", k_simm)});
    f.simm_min = 0, f.simm_max = 127;
  }
  t.add("s_branch", all("s_branch"), Encoding::sopp, Category::branch, Counter::none,
        {use("target", k_label)});
  const std::pair<const char*, Reg> cbr[] = {{"s_cbranch_scc0", scc()},   {"s_cbranch_scc1", scc()},
                                             {"s_cbranch_vccz", vcc()},   {"s_cbranch_vccnz", vcc()},
                                             {"s_cbranch_execz", exec()}, {"s_cbranch_execnz", exec()}};
  for (auto [n, r] : cbr)
    t.add(n, all(n), Encoding::sopp, Category::branch, Counter::none, {use("target", k_label)})
        .implicit_uses = {r};

  // SOP1
  t.add("s_mov_b32", all("s_mov_b32"), Encoding::sop1, Category::salu, Counter::none,
        {def("sdst", kS), use("ssrc0", kSsrc)});
  t.add("s_mov_b64", all("s_mov_b64"), Encoding::sop1, Category::salu, Counter::none,
        {def("sdst", kS, 2), use("ssrc0", kS | k_inline, 2)});
  for (const char* n : {"s_and_saveexec_b64", "s_or_saveexec_b64"}) {
    auto& f = t.add(n, all(n), Encoding::sop1, Category::salu, Counter::none,
                    {def("sdst", kS, 2), use("ssrc0", kS | k_inline, 2)});
    f.implicit_defs = {exec(), scc()};
    f.implicit_uses = {exec()};
  }
  t.add("s_getpc_b64", all("s_getpc_b64"), Encoding::sop1, Category::salu, Counter::none,
        {def("sdst", kS, 2)});

  // SOP2
  struct S2 {
    const char* n;
    uint8_t w0, w1;
    bool defs_scc, uses_scc;
  };
  const S2 sop2[] = {{"s_add_u32", 1, 1, true, false},    {"s_sub_u32", 1, 1, true, false},
                     {"s_addc_u32", 1, 1, true, true},    {"s_add_i32", 1, 1, true, false},
                     {"s_mul_i32", 1, 1, false, false},   {"s_lshl_b32", 1, 1, true, false},
                     {"s_lshr_b32", 1, 1, true, false},   {"s_ashr_i32", 1, 1, true, false},
                     {"s_and_b32", 1, 1, true, false},    {"s_or_b32", 1, 1, true, false},
                     {"s_xor_b32", 1, 1, true, false},    {"s_min_u32", 1, 1, true, false},
                     {"s_max_u32", 1, 1, true, false},    {"s_and_b64", 2, 2, true, false},
                     {"s_or_b64", 2, 2, true, false},     {"s_andn2_b64", 2, 2, true, false},
                     {"s_lshl_b64", 2, 1, true, false},   {"s_cselect_b32", 1, 1, false, true},
                     {"s_cselect_b64", 2, 2, false, true}, {"s_mul_hi_u32", 1, 1, false, false}};
  for (const auto& o : sop2) {
    uint16_t src = o.w0 == 1 ? kSsrc : (kS | k_inline);
    uint16_t src1 = o.w1 == 1 ? kSsrc : (kS | k_inline);
    auto& f = t.add(o.n, all(o.n), Encoding::sop2, Category::salu, Counter::none,
                    {def("sdst", kS, o.w0), use("ssrc0", src, o.w0), use("ssrc1", src1, o.w1)});
    if (o.defs_scc)
      f.implicit_defs = {scc()};
    if (o.uses_scc)
      f.implicit_uses = {scc()};
  }
  // SOPK
  {
    auto& f = t.add("s_movk_i32", all("s_movk_i32"), Encoding::sopk, Category::salu, Counter::none,
                    {def("sdst", kS), use("simm16", k_simm)});
    f.simm_min = -32768, f.simm_max = 65535;
  }
  // SOPC
  for (const char* c : {"eq", "lg", "lt", "le", "gt", "ge"})
    for (const char* ty : {"u32", "i32"}) {
      auto n = keep(std::string("s_cmp_") + c + "_" + ty);
      t.add(n, all(n), Encoding::sopc, Category::salu, Counter::none,
            {use("ssrc0", kSsrc), use("ssrc1", kSsrc)})
          .implicit_defs = {scc()};
    }
}

void vector_alu(Table& t) {
  // VOP1
  const std::pair<const char*, Category> vop1[] = {
      {"v_mov_b32", Category::valu},     {"v_not_b32", Category::valu},     {"v_cvt_f32_u32", Category::valu},
      {"v_cvt_f32_i32", Category::valu}, {"v_cvt_u32_f32", Category::valu}, {"v_cvt_i32_f32", Category::valu},
      {"v_cvt_f16_f32", Category::valu}, {"v_exp_f32", Category::trans},    {"v_log_f32", Category::trans},
      {"v_rcp_f32", Category::trans},    {"v_rsq_f32", Category::trans},    {"v_sqrt_f32", Category::trans}};
  for (auto [n, c] : vop1)
    t.add(n, all(n), Encoding::vop1, c, Counter::none, {def("vdst", kV), use("src0", kSrc32)});
  // 16-bit sources: a literal would have to fit in 16 bits, so only registers and inline constants.
  t.add("v_cvt_f32_f16", all("v_cvt_f32_f16"), Encoding::vop1, Category::valu, Counter::none,
        {def("vdst", kV), use("src0", kV | kS | k_inline)});
  t.add("v_cvt_f32_bf16", only950("v_cvt_f32_bf16"), Encoding::vop1, Category::valu, Counter::none,
        {def("vdst", kV), use("src0", kV | kS | k_inline)});
  t.add("v_mov_b64", from942("v_mov_b64"), Encoding::vop1, Category::valu, Counter::none,
        {def("vdst", kV, 2), use("src0", kV | kS | k_inline, 2)});
  t.add("v_readfirstlane_b32", all("v_readfirstlane_b32"), Encoding::vop1, Category::lane, Counter::none,
        {def("sdst", kS), use("src0", kV)});
  t.add("v_accvgpr_mov_b32", all("v_accvgpr_mov_b32"), Encoding::vop1, Category::accvgpr, Counter::none,
        {def("vdst", kA), use("src0", kA)});

  // VOP2: src1 must be a VGPR (the builder does not promote to VOP3).
  const std::pair<const char*, Category> vop2[] = {
      {"v_add_f32", Category::valu},     {"v_sub_f32", Category::valu},     {"v_mul_f32", Category::valu},
      {"v_max_f32", Category::valu},     {"v_min_f32", Category::valu},     {"v_add_u32", Category::valu},
      {"v_sub_u32", Category::valu},     {"v_mul_u32_u24", Category::valu}, {"v_lshlrev_b32", Category::valu},
      {"v_lshrrev_b32", Category::valu}, {"v_ashrrev_i32", Category::valu}, {"v_and_b32", Category::valu},
      {"v_or_b32", Category::valu},      {"v_xor_b32", Category::valu},     {"v_max_u32", Category::valu},
      {"v_min_u32", Category::valu}};
  for (auto [n, c] : vop2)
    t.add(n, all(n), Encoding::vop2, c, Counter::none,
          {def("vdst", kV), use("src0", kSrc32), use("src1", kV)});
  t.add("v_fmac_f32", all("v_fmac_f32"), Encoding::vop2, Category::valu, Counter::none,
        {defuse("vdst", kV), use("src0", kSrc32), use("src1", kV)});
  t.add("v_cndmask_b32", all("v_cndmask_b32"), Encoding::vop2, Category::valu, Counter::none,
        {def("vdst", kV), use("src0", kSrc32), use("src1", kV), use("vcc", k_vcc, 2)});
  for (const char* n : {"v_add_co_u32", "v_sub_co_u32"})
    t.add(n, all(n), Encoding::vop2, Category::valu, Counter::none,
          {def("vdst", kV), def("vcc", k_vcc, 2), use("src0", kSrc32), use("src1", kV)});
  t.add(
      "v_addc_co_u32", all("v_addc_co_u32"), Encoding::vop2, Category::valu, Counter::none,
      {def("vdst", kV), def("vcc", k_vcc, 2), use("src0", kSrc32), use("src1", kV), use("vcc_in", k_vcc, 2)});

  // VOP3
  const std::pair<const char*, int> vop3[] = {{"v_fma_f32", 3},      {"v_mul_lo_u32", 2}, {"v_mul_hi_u32", 2},
                                              {"v_lshl_add_u32", 3}, {"v_add3_u32", 3},   {"v_perm_b32", 3},
                                              {"v_bfe_u32", 3},      {"v_max3_f32", 3},   {"v_min3_f32", 3},
                                              {"v_lshl_or_b32", 3},  {"v_and_or_b32", 3}};
  for (auto [n, ns] : vop3) {
    std::vector<Slot> sl{def("vdst", kV), use("src0", kSrc3), use("src1", kSrc3)};
    if (ns == 3)
      sl.push_back(use("src2", kSrc3));
    t.add(n, all(n), Encoding::vop3, Category::valu, Counter::none, sl);
  }
  t.add("v_cndmask_b32_e64", all("v_cndmask_b32_e64"), Encoding::vop3, Category::valu, Counter::none,
        {def("vdst", kV), use("src0", kSrc3), use("src1", kSrc3), use("ssrc2", kS, 2)});
  t.add("v_add_co_u32_e64", all("v_add_co_u32_e64"), Encoding::vop3, Category::valu, Counter::none,
        {def("vdst", kV), def("sdst", kS, 2), use("src0", kSrc3), use("src1", kSrc3)});
  {
    auto& f = t.add("v_readlane_b32", all("v_readlane_b32"), Encoding::vop3, Category::lane, Counter::none,
                    {def("sdst", kS), use("src0", kV), use("lane", kS | k_simm)});
    f.simm_min = 0, f.simm_max = 63;
  }
  {
    auto& f = t.add("v_writelane_b32", all("v_writelane_b32"), Encoding::vop3, Category::lane, Counter::none,
                    {defuse("vdst", kV), use("src0", kS | k_inline), use("lane", kS | k_simm)});
    f.simm_min = 0, f.simm_max = 63;
  }
  // fp8 conversions write one half of vdst (op_sel chooses which): the other half is kept.
  for (const char* n : {"v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32"})
    t.add(n, from942(n), Encoding::vop3, Category::valu, Counter::none,
          {defuse("vdst", kV), use("src0", kSrc3), use("src1", kSrc3)});
  t.add("v_cvt_pk_bf16_f32", only950("v_cvt_pk_bf16_f32"), Encoding::vop3, Category::valu, Counter::none,
        {def("vdst", kV), use("src0", kSrc3), use("src1", kSrc3)});
  t.add("v_accvgpr_read_b32", all("v_accvgpr_read_b32"), Encoding::vop3p, Category::accvgpr, Counter::none,
        {def("vdst", kV), use("src0", kA)});
  t.add("v_accvgpr_write_b32", all("v_accvgpr_write_b32"), Encoding::vop3p, Category::accvgpr, Counter::none,
        {def("vdst", kA), use("src0", kV | k_inline)});

  // VOP3P
  for (const char* n : {"v_pk_fma_f32", "v_pk_mul_f32", "v_pk_add_f32"}) {
    std::vector<Slot> sl{def("vdst", kV, 2), use("src0", kV, 2), use("src1", kV, 2)};
    if (std::string_view(n) == "v_pk_fma_f32")
      sl.push_back(use("src2", kV, 2));
    t.add(n, all(n), Encoding::vop3p, Category::valu, Counter::none, sl, m_op_sel);
  }
  for (const char* n : {"v_pk_fma_f16", "v_pk_mul_f16", "v_pk_add_f16"}) {
    std::vector<Slot> sl{def("vdst", kV), use("src0", kSrc3), use("src1", kSrc3)};
    if (std::string_view(n) == "v_pk_fma_f16")
      sl.push_back(use("src2", kSrc3));
    t.add(n, all(n), Encoding::vop3p, Category::valu, Counter::none, sl, m_op_sel);
  }
  t.add("v_dot2_f32_f16", all("v_dot2_f32_f16"), Encoding::vop3p, Category::dot, Counter::none,
        {def("vdst", kV), use("src0", kSrc3), use("src1", kSrc3), use("src2", kSrc3)});
  t.add("v_dot2_f32_bf16", only950("v_dot2_f32_bf16"), Encoding::vop3p, Category::dot, Counter::none,
        {def("vdst", kV), use("src0", kSrc3), use("src1", kSrc3), use("src2", kSrc3)});

  // VOPC: e32 writes vcc, e64 writes an SGPR pair; v_cmpx also writes EXEC.
  auto cmp = [&](const std::string& base, bool x) {
    auto n32 = keep(base);
    auto n64 = keep(base + "_e64");
    auto& a32 = t.add(n32, all(n32), Encoding::vopc, Category::valu, Counter::none,
                      {def("vcc", k_vcc, 2), use("src0", kSrc32), use("src1", kV)});
    if (x)
      a32.implicit_defs = {exec()};
    auto& a64 = t.add(n64, all(n64), Encoding::vopc_e64, Category::valu, Counter::none,
                      {def("sdst", kS, 2), use("src0", kSrc3), use("src1", kSrc3)});
    if (x)
      a64.implicit_defs = {exec()};
  };
  for (const char* c : {"eq", "ne", "lt", "le", "gt", "ge"})
    cmp(std::string("v_cmp_") + c + "_u32", false);
  for (const char* c : {"eq", "ne", "lt", "le", "gt", "ge"})
    cmp(std::string("v_cmp_") + c + "_i32", false);
  for (const char* c : {"eq", "neq", "lt", "le", "gt", "ge", "u", "o"})
    cmp(std::string("v_cmp_") + c + "_f32", false);
  for (const char* c : {"eq", "ne", "lt", "gt"})
    cmp(std::string("v_cmpx_") + c + "_u32", true);
  for (const char* c : {"lt", "gt"})
    cmp(std::string("v_cmpx_") + c + "_f32", true);

  // DPP (VOP1/VOP2 with a data-parallel-primitive control)
  t.add("v_mov_b32_dpp", all("v_mov_b32_dpp"), Encoding::dpp, Category::dpp, Counter::none,
        {def("vdst", kV), use("src0", kV)}, m_dpp);
  for (const char* n : {"v_add_f32_dpp", "v_max_f32_dpp", "v_min_f32_dpp", "v_add_u32_dpp", "v_mul_f32_dpp"})
    t.add(n, all(n), Encoding::dpp, Category::dpp, Counter::none,
          {def("vdst", kV), use("src0", kV), use("src1", kV)}, m_dpp);
}

void mfma(Table& t) {
  struct M {
    const char* name;    // gfx942/950 spelling
    const char* name90a; // gfx90a spelling, "" when absent
    bool on942;
    MfmaClass cls;
    uint8_t ab, cd;
    std::array<uint8_t, 3> passes;
  };
  const M ms[] = {
      {"v_mfma_f32_32x32x8_f16", "v_mfma_f32_32x32x8f16", true, MfmaClass::xdl, 2, 16, {16, 8, 8}},
      {"v_mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x16f16", true, MfmaClass::xdl, 2, 4, {8, 4, 4}},
      {"v_mfma_f32_32x32x8_bf16", "v_mfma_f32_32x32x8bf16_1k", true, MfmaClass::xdl, 2, 16, {16, 8, 8}},
      {"v_mfma_f32_16x16x16_bf16", "v_mfma_f32_16x16x16bf16_1k", true, MfmaClass::xdl, 2, 4, {8, 4, 4}},
      {"v_mfma_f32_32x32x2_f32", "v_mfma_f32_32x32x2f32", true, MfmaClass::f32, 1, 16, {16, 16, 16}},
      {"v_mfma_f32_16x16x4_f32", "v_mfma_f32_16x16x4f32", true, MfmaClass::f32, 1, 4, {8, 8, 8}},
      {"v_mfma_f64_16x16x4_f64", "v_mfma_f64_16x16x4f64", true, MfmaClass::f64, 2, 8, {8, 8, 16}},
      {"v_mfma_f32_16x16x32_f16", "", false, MfmaClass::xdl, 4, 4, {0, 0, 4}},
      {"v_mfma_f32_16x16x32_bf16", "", false, MfmaClass::xdl, 4, 4, {0, 0, 4}},
      {"v_mfma_f32_32x32x16_f16", "", false, MfmaClass::xdl, 4, 16, {0, 0, 8}},
      {"v_mfma_f32_32x32x16_bf16", "", false, MfmaClass::xdl, 4, 16, {0, 0, 8}},
  };
  for (const auto& m : ms) {
    Names sp{m.name90a, m.on942 ? m.name : "", m.name};
    uint16_t cdk = kV | kA;
    auto& f = t.add(m.name, sp, Encoding::mfma, Category::mfma, Counter::none,
                    {def("vdst", cdk, m.cd), use("src0", kV | kA, m.ab), use("src1", kV | kA, m.ab),
                     use("src2", cdk | k_inline, m.cd)},
                    m.cls == MfmaClass::f64 ? 0u : uint32_t{m_mfma});
    f.mfma_class = m.cls;
    f.passes = m.passes;
  }
  for (const char* a : {"fp8", "bf8"})
    for (const char* b : {"fp8", "bf8"}) {
      auto n16 = keep(std::string("v_mfma_f32_16x16x32_") + a + "_" + b);
      auto& f16 = t.add(n16, from942(n16), Encoding::mfma, Category::mfma, Counter::none,
                        {def("vdst", kV | kA, 4), use("src0", kV | kA, 2), use("src1", kV | kA, 2),
                         use("src2", kV | kA | k_inline, 4)},
                        m_mfma);
      f16.mfma_class = MfmaClass::xdl;
      f16.passes = {0, 4, 4};
      auto n32 = keep(std::string("v_mfma_f32_32x32x16_") + a + "_" + b);
      auto& f32 = t.add(n32, from942(n32), Encoding::mfma, Category::mfma, Counter::none,
                        {def("vdst", kV | kA, 16), use("src0", kV | kA, 2), use("src1", kV | kA, 2),
                         use("src2", kV | kA | k_inline, 16)},
                        m_mfma);
      f32.mfma_class = MfmaClass::xdl;
      f32.passes = {0, 8, 8};
    }
}

void memory(Table& t) {
  const int64_t gmin = -4096, gmax = 4095;
  struct L {
    const char* n;
    uint8_t w;
    bool keeps; // d16 loads keep the other half of the register
  };
  const L gl[] = {{"dword", 1, false},      {"dwordx2", 2, false}, {"dwordx3", 3, false},
                  {"dwordx4", 4, false},    {"ubyte", 1, false},   {"sbyte", 1, false},
                  {"ushort", 1, false},     {"sshort", 1, false},  {"short_d16", 1, true},
                  {"short_d16_hi", 1, true}};
  for (const auto& l : gl) {
    auto n = keep(std::string("global_load_") + l.n);
    Slot d = l.keeps ? defuse("vdst", kV | kA, l.w) : def("vdst", kV | kA, l.w);
    auto& f = t.add(n, all(n), Encoding::global, Category::vmem_load, Counter::vm,
                    {d, use("vaddr", kV), use("saddr", kS | k_off, 2)}, m_offset | m_cache);
    f.simm_min = gmin, f.simm_max = gmax;
  }
  const std::pair<const char*, uint8_t> gs[] = {{"dword", 1},       {"dwordx2", 2}, {"dwordx3", 3},
                                                {"dwordx4", 4},     {"byte", 1},    {"short", 1},
                                                {"short_d16_hi", 1}};
  for (auto [s, w] : gs) {
    auto n = keep(std::string("global_store_") + s);
    auto& f =
        t.add(n, all(n), Encoding::global, Category::vmem_store, Counter::vm,
              {use("vaddr", kV), use("vdata", kV | kA, w), use("saddr", kS | k_off, 2)}, m_offset | m_cache);
    f.simm_min = gmin, f.simm_max = gmax;
  }
  const std::pair<const char*, uint8_t> bl[] = {{"dword", 1},   {"dwordx2", 2}, {"dwordx3", 3},
                                                {"dwordx4", 4}, {"ubyte", 1},   {"ushort", 1}};
  for (auto [s, w] : bl) {
    auto n = keep(std::string("buffer_load_") + s);
    auto& f = t.add(n, all(n), Encoding::mubuf, Category::vmem_load, Counter::vm,
                    {def("vdata", kV | kA, w), use("vaddr", kV | k_off), use("srsrc", kS, 4),
                     use("soffset", kS | k_inline)},
                    m_offset | m_cache | m_offen_idxen);
    f.simm_min = 0, f.simm_max = 4095;
  }
  // LDS-DMA (shared/notes/cdna.md section 3): the data goes to LDS at M0 + offset + lane * size and is
  // counted by vmcnt; the canonical names carry `_lds`, the spelling is the plain load's plus ` lds`.
  for (auto [n, sp] : {std::pair<const char*, Names>{"buffer_load_dword_lds", all("buffer_load_dword")},
                       {"buffer_load_dwordx4_lds", only950("buffer_load_dwordx4")}}) {
    auto& f = t.add(n, sp, Encoding::mubuf, Category::vmem_load, Counter::vm,
                    {use("vaddr", kV | k_off), use("srsrc", kS, 4), use("soffset", kS | k_inline)},
                    m_offset | m_offen_idxen);
    f.simm_min = 0, f.simm_max = 4095;
    f.implicit_uses = {m0()};
  }
  const std::pair<const char*, uint8_t> bs[] = {{"dword", 1},   {"dwordx2", 2}, {"dwordx3", 3},
                                                {"dwordx4", 4}, {"byte", 1},    {"short", 1}};
  for (auto [s, w] : bs) {
    auto n = keep(std::string("buffer_store_") + s);
    auto& f = t.add(n, all(n), Encoding::mubuf, Category::vmem_store, Counter::vm,
                    {use("vdata", kV | kA, w), use("vaddr", kV | k_off), use("srsrc", kS, 4),
                     use("soffset", kS | k_inline)},
                    m_offset | m_cache | m_offen_idxen);
    f.simm_min = 0, f.simm_max = 4095;
  }

  // LDS
  auto ds = [&](std::string_view n, Names sp, std::vector<Slot> sl, uint32_t mods) -> Form& {
    auto& f = t.add(n, sp, Encoding::ds, Category::ds, Counter::lgkm, std::move(sl), mods);
    f.simm_min = 0, f.simm_max = 65535;
    return f;
  };
  const std::pair<const char*, uint8_t> dsw[] = {{"b32", 1}, {"b64", 2}, {"b96", 3}, {"b128", 4}};
  for (auto [s, w] : dsw) {
    auto r = keep(std::string("ds_read_") + s);
    ds(r, all(r), {def("vdst", kV | kA, w), use("vaddr", kV)}, m_offset);
    auto wr = keep(std::string("ds_write_") + s);
    ds(wr, all(wr), {use("vaddr", kV), use("vdata", kV | kA, w)}, m_offset);
  }
  for (auto [s, w] : {std::pair<const char*, uint8_t>{"b32", 1}, {"b64", 2}}) {
    auto r = keep(std::string("ds_read2_") + s);
    ds(r, all(r), {def("vdst", kV | kA, static_cast<uint8_t>(2 * w)), use("vaddr", kV)}, m_offset01);
    auto wr = keep(std::string("ds_write2_") + s);
    ds(wr, all(wr), {use("vaddr", kV), use("data0", kV | kA, w), use("data1", kV | kA, w)}, m_offset01);
  }
  ds("ds_read_u16_d16_hi", all("ds_read_u16_d16_hi"), {defuse("vdst", kV), use("vaddr", kV)}, m_offset);
  ds("ds_write_b16_d16_hi", all("ds_write_b16_d16_hi"), {use("vaddr", kV), use("vdata", kV)}, m_offset);
  ds("ds_write_b16", all("ds_write_b16"), {use("vaddr", kV), use("vdata", kV)}, m_offset);
  ds("ds_write_b8", all("ds_write_b8"), {use("vaddr", kV), use("vdata", kV)}, m_offset);
  ds("ds_swizzle_b32", all("ds_swizzle_b32"), {def("vdst", kV), use("vaddr", kV)}, m_swizzle);
  ds("ds_bpermute_b32", all("ds_bpermute_b32"), {def("vdst", kV), use("vaddr", kV), use("vdata", kV)},
     m_offset);
  ds("ds_permute_b32", all("ds_permute_b32"), {def("vdst", kV), use("vaddr", kV), use("vdata", kV)},
     m_offset);
  ds("ds_add_u32", all("ds_add_u32"), {use("vaddr", kV), use("vdata", kV)}, m_offset);
  ds("ds_add_rtn_u32", all("ds_add_rtn_u32"), {def("vdst", kV), use("vaddr", kV), use("vdata", kV)},
     m_offset);
  ds("ds_read_b64_tr_b16", only950("ds_read_b64_tr_b16"), {def("vdst", kV, 2), use("vaddr", kV)}, m_offset);
}

Table build() {
  Table t;
  t.forms.reserve(512); // references returned by add() stay valid
  scalar(t);
  vector_alu(t);
  mfma(t);
  memory(t);
  return t;
}

} // namespace

bool Form::is_vector() const {
  switch (encoding) {
  case Encoding::sop1:
  case Encoding::sop2:
  case Encoding::sopk:
  case Encoding::sopc:
  case Encoding::sopp:
  case Encoding::smem:
    return false;
  default:
    return true;
  }
}

const std::vector<Form>& all_forms() {
  static const std::vector<Form> forms = build().forms;
  return forms;
}

const Form* find_form(std::string_view name) {
  static const auto index = [] {
    std::unordered_map<std::string_view, const Form*> m;
    for (const auto& f : all_forms())
      m.emplace(f.name, &f);
    for (const auto& f : all_forms())
      for (auto sp : f.spelling)
        if (!sp.empty())
          m.emplace(sp, &f);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

std::string_view to_string(Encoding e) {
  static const char* n[] = {"SOP1",  "SOP2", "SOPK",     "SOPC", "SOPP", "SMEM",  "VOP1",   "VOP2", "VOP3",
                            "VOP3P", "VOPC", "VOPC_E64", "DPP",  "DS",   "MUBUF", "GLOBAL", "MFMA"};
  return n[static_cast<int>(e)];
}

std::string_view to_string(Category c) {
  static const char* n[] = {"salu",   "smem",    "branch", "waitcnt",   "barrier",    "nop",
                            "endpgm", "sched",   "valu",   "trans",     "dot",        "dpp",
                            "lane",   "accvgpr", "mfma",   "vmem_load", "vmem_store", "ds"};
  return n[static_cast<int>(c)];
}

std::string_view to_string(Counter c) {
  static const char* n[] = {"none", "vm", "lgkm", "vm_lgkm"};
  return n[static_cast<int>(c)];
}

} // namespace isatune::cdna
