// The sm_90a warp-specialised GEMM kernel, emitted with the PTX builder (structure: gemm_sm90a_kernel.h;
// instruction facts: shared/notes/ptx.md section 4).
#include "gemm_sm90a_kernel.h"

#include <algorithm>
#include <array>

#include "isatune/error.h"
#include "isatune/ptx/module.h"
#include "sm90a_pieces.h"

namespace isatune::gen::gemm {

namespace {

int int_param(const Params& p, const char* name) {
  return int(param_int(p, name));
}

} // namespace

Sm90aConfig decode_sm90a(const Params& p, const GemmSig& sig) {
  Sm90aConfig c;
  c.cd = sig.cd;
  c.in_bytes = sig.in_bytes();
  c.tn_layout = sig.a_trans && !sig.b_trans;
  c.tile_m = int_param(p, "tile_m"), c.tile_n = int_param(p, "tile_n"), c.tile_k = int_param(p, "tile_k");
  c.stages = int_param(p, "stages"), c.consumers = int_param(p, "consumers");
  std::tie(c.producer_regs, c.consumer_regs) =
      sm90a::parse_reg_split(param_str(p, "reg_split"), "gemm sm_90a");
  c.persistent = param_int(p, "persistent") != 0;
  c.group_m = int_param(p, "group_m");
  c.cluster = int_param(p, "cluster");
  const std::string loader = param_str(p, "loader");
  if (loader != "tma" && loader != "ldst")
    throw InputError("gemm sm_90a: loader='" + loader + "' is tma or ldst");
  c.tma = loader == "tma";
  const std::string epilogue = param_str(p, "epilogue");
  if (epilogue != "direct" && epilogue != "tma")
    throw InputError("gemm sm_90a: epilogue='" + epilogue + "' is direct or tma");
  c.tma_store = epilogue == "tma";
  return c;
}

Sm90aPlan plan_sm90a(const Sm90aConfig& c) {
  Sm90aPlan pl;
  pl.threads = 128 * (1 + c.consumers);
  pl.rows_per_consumer = c.tile_m / std::max(1, c.consumers);
  pl.subtiles = pl.rows_per_consumer / 64;
  pl.accumulators = pl.subtiles * c.tile_n / 2;
  pl.a_stage_bytes = uint32_t(c.tile_m * c.tile_k * c.in_bytes);
  pl.b_stage_bytes = uint32_t(c.tile_n * c.tile_k * c.in_bytes);
  pl.stage_bytes = pl.a_stage_bytes + pl.b_stage_bytes;
  pl.barrier_offset = uint32_t(c.stages) * pl.stage_bytes;
  pl.staging_offset = (pl.barrier_offset + 16 * uint32_t(c.stages) + 127) / 128 * 128;
  pl.staging_bytes = c.tma_store ? uint32_t(64 * kSm90aStoreColumns) * size_of(c.cd) : 0;
  pl.dynamic_shared_bytes = pl.staging_offset + pl.staging_bytes * uint32_t(c.consumers) + 1024;
  pl.tx_bytes = pl.stage_bytes;
  pl.entry_regs = sm90a::entry_registers(pl.threads);
  return pl;
}

std::string why_invalid_sm90a(const Sm90aConfig& c) {
  const Sm90aPlan pl = plan_sm90a(c);
  if (c.consumers != 1 && c.consumers != 2)
    return "consumers is 1 or 2";
  if (c.tile_m != 64 * c.consumers && c.tile_m != 128)
    return "tile_m is 64 * consumers or 128 (each consumer owns whole m64 wgmma blocks)";
  if (c.tile_n % 64 || c.tile_n < 64 || c.tile_n > 256)
    return "tile_n is 64, 128, 192 or 256 (the wgmma N; MN-major boxes are 64 wide)";
  if (c.tile_k * c.in_bytes != 128)
    return "tile_k * input bytes is 128 (one 128-byte swizzle row: 64 for f16/bf16, 128 for fp8)";
  if (c.in_bytes == 1 && c.tma && !c.tn_layout)
    return "fp8 with loader=tma needs layout TN (fp8 wgmma reads K-major operands only; the ldst producer "
           "transposes)";
  if (c.stages < 2 || c.stages > 5)
    return "stages is 2..5";
  if (std::string why =
          sm90a::reg_split_invalid(c.producer_regs, c.consumer_regs, c.consumers, pl.entry_regs);
      !why.empty())
    return why;
  if (pl.accumulators + kSm90aConsumerOverheadRegs > c.consumer_regs)
    return "accumulators per consumer thread (tile_m / consumers / 64 * tile_n / 2 = " +
           std::to_string(pl.accumulators) + ") + " + std::to_string(kSm90aConsumerOverheadRegs) +
           " fit the consumer's " + std::to_string(c.consumer_regs) +
           " registers (else ptxas serialises wgmma: C7511)";
  if (pl.dynamic_shared_bytes > kSm90aMaxSharedBytes)
    return "shared memory stages * (tile_m + tile_n) * 128 + 16 * stages (+ the TMA-store staging) + "
           "1024 = " +
           std::to_string(pl.dynamic_shared_bytes) + " bytes exceeds 227 KiB";
  if (c.group_m < 1)
    return "group_m >= 1";
  if (c.cluster != 1 && c.cluster != 2)
    return "cluster is 1 or 2 (CTAs sharing B through TMA multicast)";
  if (c.cluster > 1 && !c.tma)
    return "cluster=2 needs loader=tma (it shares B through TMA multicast)";
  return "";
}

std::string sm90a_kernel_name(const GemmSig& s, const Sm90aConfig& c) {
  return "gemm_sm90a_" + s.layout + "_" + std::string(to_string(s.a)) + "_" + std::string(to_string(s.cd)) +
         "_" + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + "x" + std::to_string(c.tile_k) +
         "_s" + std::to_string(c.stages) + "_c" + std::to_string(c.consumers) + "_r" +
         std::to_string(c.producer_regs) + "_" + std::to_string(c.consumer_regs) +
         (c.persistent ? "_p" : "") + "_g" + std::to_string(c.group_m) +
         (c.cluster > 1 ? "_x" + std::to_string(c.cluster) : "") + (c.tma ? "" : "_ldst") +
         (c.tma_store ? "_es" : "");
}

namespace {

using ptx::Address;
using ptx::Cmp;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::SpecialReg;
using ptx::Type;

constexpr uint32_t kBoxBytes = 64 * 128; // one 64-row x 128-byte swizzled box (an m64 / n64 chunk)

struct Emitter {
  Emitter(const GemmSig& sig, const Sm90aConfig& config, ptx::Kernel& kernel)
      : s(sig), c(config), pl(plan_sm90a(config)), k(kernel), a_kmajor(sig.a_trans || sig.fp8()),
        b_kmajor(!sig.b_trans || sig.fp8()) {}
  const GemmSig& s;
  const Sm90aConfig& c;
  Sm90aPlan pl;
  ptx::Kernel& k;
  // operands in shared memory: K-major when K is the stored contiguous dimension
  bool a_kmajor, b_kmajor;
  // kernel arguments (loaded once)
  Reg tma_a, tma_b, c_ptr, d_ptr, m, n, kdim, ldc, ldd, tiles_m, tiles_n, k_iters, total_tiles, alpha, beta;
  Reg base, bars, tid, rank, peer, a_ptr, b_ptr, lda, ldb, tma_d;
  // TMA-store epilogue: this consumer's staging buffer, its named barrier, its leader
  Reg staging, second_consumer, store_leader, row_in_block, stmatrix_at;

  Reg r32() { return k.reg(RegClass::b32); }
  Reg r64() { return k.reg(RegClass::b64); }
  Reg pred() { return k.reg(RegClass::pred); }

  void wait_parity(Reg bar, uint32_t offset, Reg parity) { sm90a::wait_parity(k, bar, offset, parity); }

  // The tile's origin in grouped raster order: groups of group_m tile rows, column by column inside a group.
  void tile_origin(Reg tile, Reg m0, Reg n0) {
    const int g = c.group_m;
    Reg width = r32(), gid = r32(), first = r32(), gsz = r32(), rest = r32(), tm = r32(), tn = r32();
    k.mul_lo(Type::u32, width, tiles_n, g);
    k.binary("div", Type::u32, gid, tile, width);
    k.mul_lo(Type::u32, first, gid, g);
    k.sub(Type::u32, gsz, tiles_m, first);
    k.binary("min", Type::u32, gsz, gsz, g);
    k.mul_lo(Type::u32, rest, gid, width);
    k.sub(Type::u32, rest, tile, rest);
    k.binary("rem", Type::u32, tm, rest, gsz);
    k.add(Type::u32, tm, tm, first);
    k.binary("div", Type::u32, tn, rest, gsz);
    // a cluster's CTAs take consecutive M tiles of one N tile (they share B)
    k.mul_lo(Type::u32, m0, tm, c.tile_m * c.cluster);
    if (c.cluster > 1)
      k.mad_lo(Type::u32, m0, rank, c.tile_m, m0);
    k.mul_lo(Type::u32, n0, tn, c.tile_n);
  }

  // The first tile (cluster) of this CTA and the stride of the tile loop.
  void tile_loop_start(Reg tile, Reg step) {
    k.mov_sreg(tile, SpecialReg::ctaid_x);
    k.mov_sreg(step, SpecialReg::nctaid_x);
    if (c.cluster > 1) {
      k.binary("div", Type::u32, tile, tile, c.cluster);
      k.binary("div", Type::u32, step, step, c.cluster);
    }
  }

  // stage index and phase of the ring: advance to the next slot
  void advance(Reg stage, Reg phase) { sm90a::advance_ring(k, stage, phase, c.stages); }

  // 64-bit wgmma descriptor of a 128B-swizzled operand at shared address `addr` (ptx.md section 4).
  Reg descriptor(Reg addr, uint32_t lbo, uint32_t sbo) { return sm90a::descriptor_128b(k, addr, lbo, sbo); }

  void header() {
    auto tmA = k.param_tensor_map("tmA");
    auto tmB = k.param_tensor_map("tmB");
    auto tmD = k.param_tensor_map("tmD");
    auto pC = k.param("pC", Type::u64), pD = k.param("pD", Type::u64);
    auto pA = k.param("pA", Type::u64), pB = k.param("pB", Type::u64);
    auto pM = k.param("M", Type::u32), pN = k.param("N", Type::u32), pK = k.param("K", Type::u32);
    auto pldc = k.param("ldc", Type::u32), pldd = k.param("ldd", Type::u32);
    auto plda = k.param("lda", Type::u32), pldb = k.param("ldb", Type::u32);
    auto ptm = k.param("tiles_m", Type::u32), ptn = k.param("tiles_n", Type::u32);
    auto pki = k.param("k_iters", Type::u32);
    auto palpha = k.param("alpha", Type::f32), pbeta = k.param("beta", Type::f32);
    k.dynamic_shared("smem", 1024);
    k.reqntid(uint32_t(pl.threads));
    if (c.cluster > 1)
      k.reqnctapercluster(uint32_t(c.cluster));
    k.maxnreg(uint32_t(pl.entry_regs));

    tma_a = r64(), tma_b = r64();
    k.cvta_param(tma_a, tmA);
    k.cvta_param(tma_b, tmB);
    tma_d = r64();
    k.cvta_param(tma_d, tmD);
    c_ptr = r64(), d_ptr = r64();
    k.ld_param(Type::u64, c_ptr, pC);
    k.cvta_to_global(c_ptr, c_ptr);
    k.ld_param(Type::u64, d_ptr, pD);
    k.cvta_to_global(d_ptr, d_ptr);
    a_ptr = r64(), b_ptr = r64(), lda = r32(), ldb = r32();
    k.ld_param(Type::u64, a_ptr, pA);
    k.cvta_to_global(a_ptr, a_ptr);
    k.ld_param(Type::u64, b_ptr, pB);
    k.cvta_to_global(b_ptr, b_ptr);
    k.ld_param(Type::u32, lda, plda);
    k.ld_param(Type::u32, ldb, pldb);
    m = r32(), n = r32(), kdim = r32(), ldc = r32(), ldd = r32(), tiles_m = r32(), tiles_n = r32();
    k_iters = r32(), total_tiles = r32();
    k.ld_param(Type::u32, m, pM);
    k.ld_param(Type::u32, n, pN);
    k.ld_param(Type::u32, kdim, pK);
    k.ld_param(Type::u32, ldc, pldc);
    k.ld_param(Type::u32, ldd, pldd);
    k.ld_param(Type::u32, tiles_m, ptm);
    k.ld_param(Type::u32, tiles_n, ptn);
    k.ld_param(Type::u32, k_iters, pki);
    k.mul_lo(Type::u32, total_tiles, tiles_m, tiles_n);
    alpha = k.reg(RegClass::f32), beta = k.reg(RegClass::f32);
    k.ld_param(Type::f32, alpha, palpha);
    k.ld_param(Type::f32, beta, pbeta);

    tid = r32();
    k.mov_sreg(tid, SpecialReg::tid_x);
    rank = r32(), peer = r32();
    if (c.cluster > 1) {
      k.mov_sreg(rank, SpecialReg::cluster_ctarank);
      k.binary("xor", Type::b32, peer, rank, 1);
    }
    // the dynamic base rounded up to the 1024-byte swizzle repeat (its declared alignment is not assured)
    base = sm90a::aligned_dynamic_base(k, "smem"), bars = r32();
    k.add(Type::u32, bars, base, pl.barrier_offset);
  }

  void init_barriers() {
    const ptx::Label done = k.new_label("INIT_DONE");
    Reg not_first = pred();
    k.setp(Cmp::ne, Type::u32, not_first, tid, 0);
    k.bra(done).pred(not_first);
    for (int st = 0; st < c.stages; ++st) {
      // full: the producer's arrive.expect_tx (TMA), or every producer thread's arrive (ldst)
      k.mbarrier_init(Address(bars, 8 * st), c.tma ? 1 : 128);
      // empty: every consumer thread of the cluster (a stage's B lands in every CTA's copy)
      k.mbarrier_init(Address(bars, 8 * (c.stages + st)), 128 * c.consumers * c.cluster);
    }
    k.fence_mbarrier_init();
    k.place(done);
    if (c.cluster > 1) { // the peer's barriers are initialised before its multicasts and arrivals reach them
      const ptx::Requirement cluster_barrier{78, 90, false, "barrier.cluster"};
      k.raw("barrier.cluster.arrive.release.aligned", {}, cluster_barrier);
      k.raw("barrier.cluster.wait.acquire.aligned", {}, cluster_barrier);
    } else {
      k.bar_sync(0);
    }
  }

  // The ldst producer's copy of one operand tile (rows x 64 k) into its 128B-swizzled stage layout, by all
  // 128 producer threads, element by element (any leading dimension and alignment), zero outside the matrix.
  // kmajor: the stage layout; kcontig: the stored one (they differ for fp8, whose stage is always K-major).
  void copy_operand(Reg ptr, Reg ld, Reg rows_total, Reg row0, int rows, bool kmajor, bool kcontig, Reg dst,
                    Reg k0) {
    const int es = c.in_bytes, per_row = 128 / es, shift = es == 1 ? 7 : 6;
    const ptx::Label again = k.new_label("COPY");
    Reg e = r32();
    k.mov(Type::u32, e, tid);
    k.place(again);
    Reg r = r32(), kk = r32(), off = r32(), gr = r32(), gk = r32(), t = r32();
    if (kmajor) { // consecutive threads: consecutive k
      k.binary("and", Type::b32, kk, e, per_row - 1);
      k.binary("shr", Type::u32, r, e, shift);
      k.binary("shl", Type::b32, off, r, 7);
      k.mad_lo(Type::u32, off, kk, es, off);
    } else { // consecutive threads: consecutive rows; 64-row boxes of 64 k-rows of 128 bytes
      Reg mm = r32(), j = r32();
      k.binary("and", Type::b32, mm, e, 63);
      k.binary("shr", Type::u32, kk, e, 6);
      k.binary("and", Type::b32, kk, kk, 63);
      k.binary("shr", Type::u32, j, e, 12);
      k.mad_lo(Type::u32, r, j, 64, mm);
      k.mul_lo(Type::u32, off, j, kBoxBytes);
      k.mad_lo(Type::u32, off, kk, 128, off);
      k.mad_lo(Type::u32, off, mm, 2, off);
    }
    // the 128-byte swizzle: 16-byte chunk ^= row bits 7..9 (the stage is 1024-aligned)
    k.binary("shr", Type::u32, t, off, 7);
    k.binary("and", Type::b32, t, t, 7);
    k.binary("shl", Type::b32, t, t, 4);
    k.binary("xor", Type::b32, off, off, t);
    k.add(Type::u32, gr, row0, r);
    k.add(Type::u32, gk, k0, kk);
    Reg inside = pred();
    k.setp(Cmp::lt, Type::u32, inside, gr, rows_total);
    k.raw("setp.lt.and.u32", {inside, gk, kdim, inside});
    Reg idx = r64(), lin = r64(), addr = r64();
    if (kcontig) { // element (k, row) at k + row * ld
      k.cvt(ptx::Rounding::none, Type::u64, Type::u32, lin, gk);
      k.ternary("mad.wide", Type::u32, idx, gr, ld, lin);
    } else {
      k.cvt(ptx::Rounding::none, Type::u64, Type::u32, lin, gr);
      k.ternary("mad.wide", Type::u32, idx, gk, ld, lin);
    }
    if (es == 2)
      k.binary("shl", Type::b64, idx, idx, 1);
    k.add(Type::u64, addr, ptr, idx);
    const Type et = es == 2 ? Type::b16 : Type::b8;
    Reg v = k.reg(RegClass::b16);
    k.mov(Type::b16, v, 0);
    k.ld(ptx::Space::global, et, {v}, Address(addr)).pred(inside);
    Reg sa = r32();
    k.add(Type::u32, sa, dst, off);
    k.st(ptx::Space::shared, et, Address(sa), {v});
    k.add(Type::u32, e, e, 128);
    Reg more = pred();
    k.setp(Cmp::lt, Type::u32, more, e, rows * per_row);
    k.bra(again).pred(more);
  }

  void producer() {
    k.setmaxnreg(false, uint32_t(c.producer_regs));
    const ptx::Label done = k.new_label("PRODUCER_DONE"), tiles = k.new_label("PRODUCER_TILE"),
                     kloop = k.new_label("PRODUCER_K"), tail = k.new_label("PRODUCER_TAIL");
    if (c.tma) { // one thread issues the copies
      Reg not_leader = pred();
      k.setp(Cmp::ne, Type::u32, not_leader, tid, 0);
      k.bra(done).pred(not_leader);
    }
    Reg stage = r32(), phase = r32(), tile = r32(), step = r32();
    k.mov(Type::u32, stage, 0);
    k.mov(Type::u32, phase, 0);
    tile_loop_start(tile, step);
    k.place(tiles);
    Reg finished = pred();
    k.setp(Cmp::ge, Type::u32, finished, tile, total_tiles);
    k.bra(tail).pred(finished);
    Reg m0 = r32(), n0 = r32(), k0 = r32(), it = r32();
    tile_origin(tile, m0, n0);
    k.mov(Type::u32, k0, 0);
    k.mov(Type::u32, it, 0);
    k.place(kloop);
    {
      Reg slot = r32(), parity = r32(), sa = r32();
      k.mad_lo(Type::u32, slot, stage, 8, bars); // full[stage]; empty[stage] is stages * 8 further
      k.binary("xor", Type::b32, parity, phase, 1);
      wait_parity(slot, 8 * uint32_t(c.stages), parity);
      k.mad_lo(Type::u32, sa, stage, pl.stage_bytes, base);
      if (!c.tma) {
        copy_operand(a_ptr, lda, m, m0, c.tile_m, a_kmajor, s.a_trans, sa, k0);
        Reg sb = r32();
        k.add(Type::u32, sb, sa, pl.a_stage_bytes);
        copy_operand(b_ptr, ldb, n, n0, c.tile_n, b_kmajor, !s.b_trans, sb, k0);
        k.fence_proxy_async_shared(); // generic writes, read next by wgmma (the async proxy)
        k.mbarrier_arrive(std::nullopt, Address(slot));
      } else {
        k.mbarrier_arrive_expect_tx(Address(slot), pl.tx_bytes);
        auto load = [&](Reg map, uint32_t dst_offset, Reg inner, Reg outer) {
          k.tma_load(2, Address(sa, dst_offset), map, {inner, outer}, Address(slot));
        };
        auto mn_major_boxes = [&](Reg map, uint32_t at, Reg origin, int rows) {
          for (int j = 0; j < rows / 64; ++j) {
            Reg coord = origin;
            if (j) {
              coord = r32();
              k.add(Type::u32, coord, origin, 64 * j);
            }
            load(map, at + uint32_t(j) * kBoxBytes, coord, k0);
          }
        };
        if (a_kmajor)
          load(tma_a, 0, k0, m0);
        else
          mn_major_boxes(tma_a, 0, m0, c.tile_m);
        if (c.cluster == 1) {
          if (b_kmajor)
            load(tma_b, pl.a_stage_bytes, k0, n0);
          else
            mn_major_boxes(tma_b, pl.a_stage_bytes, n0, c.tile_n);
        } else {
          // B is shared by the cluster: each CTA loads its share and multicasts it into every CTA's stage
          Reg mask = k.reg(RegClass::b16);
          k.mov(Type::b16, mask, (1 << c.cluster) - 1);
          auto multicast = [&](uint32_t dst_offset, Reg inner, Reg outer) {
            Reg dst = r32();
            k.add(Type::u32, dst, sa, dst_offset);
            k.tma_load(2, Address(dst), tma_b, {inner, outer}, Address(slot), mask);
          };
          if (b_kmajor) { // rows rank * tile_n / cluster ... of the {64, tile_n / cluster} box
            const int share = c.tile_n / c.cluster;
            Reg n_share = r32(), dst = r32();
            k.mad_lo(Type::u32, n_share, rank, share, n0);
            k.mad_lo(Type::u32, dst, rank, share * 128, sa);
            k.tma_load(2, Address(dst, pl.a_stage_bytes), tma_b, {k0, n_share}, Address(slot), mask);
          } else { // 64-row boxes j with j % cluster == rank
            Reg mine = pred();
            for (int j = 0; j < c.tile_n / 64; ++j) {
              Reg coord = r32();
              k.add(Type::u32, coord, n0, 64 * j);
              k.setp(Cmp::eq, Type::u32, mine, rank, j % c.cluster);
              const ptx::Label skip = k.new_label("NOT_MINE");
              k.bra(skip).pred(mine, true);
              multicast(pl.a_stage_bytes + uint32_t(j) * kBoxBytes, coord, k0);
              k.place(skip);
            }
          }
        }
      }
    }
    k.add(Type::u32, k0, k0, c.tile_k);
    advance(stage, phase);
    k.add(Type::u32, it, it, 1);
    Reg more = pred();
    k.setp(Cmp::lt, Type::u32, more, it, k_iters);
    k.bra(kloop).pred(more);
    k.add(Type::u32, tile, tile, step);
    k.bra(tiles);
    // Exit only after the consumers released every stage: no TMA is in flight when the CTA ends.
    k.place(tail);
    for (int st = 0; st < c.stages; ++st) {
      Reg slot = r32(), parity = r32();
      k.mad_lo(Type::u32, slot, stage, 8, bars);
      k.binary("xor", Type::b32, parity, phase, 1);
      wait_parity(slot, 8 * uint32_t(c.stages), parity);
      advance(stage, phase);
    }
    k.place(done);
    k.ret();
  }

  // One element's epilogue: v = alpha * acc (+ beta * C), stored as cd under `p`. Only the memory accesses
  // are predicated: a register written under a predicate stays live from the kernel's entry for ptxas (its
  // old value may survive), which for every element of a tile spills; a C load writes a register zeroed
  // first.
  void element(Reg p, Reg acc, Reg dptr, Reg cptr, int64_t offset, bool with_c) {
    const Type cd = s.cd == DType::f32 ? Type::f32 : s.cd == DType::bf16 ? Type::bf16 : Type::f16;
    Reg v = k.reg(RegClass::f32);
    k.binary("mul.rn", Type::f32, v, alpha, acc);
    if (with_c) {
      Reg cv = k.reg(RegClass::f32);
      if (cd == Type::f32) {
        k.mov(Type::f32, cv, Operand::f32(0.0f));
        k.ld(ptx::Space::global, Type::f32, {cv}, Address(cptr, offset)).pred(p);
      } else {
        Reg h = k.reg(RegClass::b16);
        k.mov(Type::b16, h, 0);
        k.ld(ptx::Space::global, Type::b16, {h}, Address(cptr, offset)).pred(p);
        k.cvt(ptx::Rounding::none, Type::f32, cd, cv, h);
      }
      k.fma_rn(Type::f32, v, beta, cv, v);
    }
    if (cd == Type::f32) {
      k.st(ptx::Space::global, Type::f32, Address(dptr, offset), {v}).pred(p);
    } else {
      Reg h = k.reg(RegClass::b16);
      k.cvt(ptx::Rounding::rn, cd, Type::f32, h, v);
      k.st(ptx::Space::global, Type::b16, Address(dptr, offset), {h}).pred(p);
    }
  }

  // Column-major pointer of element (row, col) of a matrix at `ptr` with leading dimension `ld`.
  Reg element_pointer(Reg ptr, Reg row, Reg col, Reg ld) {
    const uint32_t es = size_of(s.cd);
    Reg row64 = r64(), off = r64(), out = r64();
    k.cvt(ptx::Rounding::none, Type::u64, Type::u32, row64, row);
    k.ternary("mad.wide", Type::u32, off, col, ld, row64);
    k.binary("shl", Type::b64, off, off, es == 4 ? 2 : 1);
    k.add(Type::u64, out, ptr, off);
    return out;
  }

  // Direct predicated stores of the consumer's accumulators (wgmma D layout, ptx.md section 3): thread
  // (warp w, g, t) holds rows 16w + g (+8) and columns 8q + 2t (+1) of each m64 block.
  void epilogue(const std::vector<std::vector<Reg>>& acc, Reg row_base, Reg col_base, bool with_c) {
    const uint32_t es = size_of(s.cd);
    Reg dstep1 = r64(), dstep8 = r64(), cstep1 = r64(), cstep8 = r64();
    k.mul_wide(Type::u32, dstep1, ldd, es);
    k.mul_wide(Type::u32, dstep8, ldd, 8 * es);
    if (with_c) {
      k.mul_wide(Type::u32, cstep1, ldc, es);
      k.mul_wide(Type::u32, cstep8, ldc, 8 * es);
    }
    for (int j = 0; j < pl.subtiles; ++j) {
      Reg r0 = r32(), r1 = r32();
      k.add(Type::u32, r0, row_base, 64 * j);
      k.add(Type::u32, r1, r0, 8);
      Reg in0 = pred(), in1 = pred();
      k.setp(Cmp::lt, Type::u32, in0, r0, m);
      k.setp(Cmp::lt, Type::u32, in1, r1, m);
      Reg dq = element_pointer(d_ptr, r0, col_base, ldd);
      Reg cq = with_c ? element_pointer(c_ptr, r0, col_base, ldc) : dq;
      for (int q = 0; q < c.tile_n / 8; ++q) {
        for (int b = 0; b < 2; ++b) {
          Reg col = r32(), p0 = pred(), p1 = pred();
          k.add(Type::u32, col, col_base, 8 * q + b);
          k.raw("setp.lt.and.u32", {p0, col, n, in0});
          k.raw("setp.lt.and.u32", {p1, col, n, in1});
          Reg dp = dq, cp = cq;
          if (b) {
            dp = r64();
            k.add(Type::u64, dp, dq, dstep1);
            if (with_c) {
              cp = r64();
              k.add(Type::u64, cp, cq, cstep1);
            }
          }
          element(p0, acc[size_t(j)][size_t(4 * q + b)], dp, cp, 0, with_c);
          element(p1, acc[size_t(j)][size_t(4 * q + 2 + b)], dp, cp, 8 * es, with_c);
        }
        if (q + 1 < c.tile_n / 8) {
          Reg nd = r64();
          k.add(Type::u64, nd, dq, dstep8);
          dq = nd;
          if (with_c) {
            Reg nc = r64();
            k.add(Type::u64, nc, cq, cstep8);
            cq = nc;
          }
        }
      }
    }
  }

  // The TMA-store epilogue: per m64 block, chunks of kSm90aStoreColumns columns are written to this
  // consumer's staging buffer (column-major 64 x columns, cd), fenced for the async proxy, and stored by one
  // thread with a TMA tensor store, which clips the rows and columns outside D. Named barrier per consumer
  // warpgroup: the staging is free again (the last store read it) before anyone writes the next chunk.
  void epilogue_tma(const std::vector<std::vector<Reg>>& acc, Reg row_base, Reg col_base, Reg n0,
                    bool with_c) {
    const uint32_t es = size_of(s.cd);
    const Type cd = s.cd == DType::f32 ? Type::f32 : s.cd == DType::bf16 ? Type::bf16 : Type::f16;
    const int cols = kSm90aStoreColumns;
    Reg cstep1 = r64(), cstep8 = r64();
    if (with_c) {
      k.mul_wide(Type::u32, cstep1, ldc, es);
      k.mul_wide(Type::u32, cstep8, ldc, 8 * es);
    }
    // this thread's first element in a chunk: row 16w + g, column 2t
    Reg thread_at = r32();
    k.mul_lo(Type::u32, thread_at, row_in_block, es);
    k.add(Type::u32, thread_at, thread_at, staging);
    Reg t2 = r32();
    k.sub(Type::u32, t2, col_base, n0);
    k.mul_lo(Type::u32, t2, t2, 64 * es);
    k.add(Type::u32, thread_at, thread_at, t2);
    for (int j = 0; j < pl.subtiles; ++j) {
      Reg r0 = r32(), r1 = r32(), block_row = r32();
      k.add(Type::u32, r0, row_base, 64 * j);
      k.add(Type::u32, r1, r0, 8);
      k.sub(Type::u32, block_row, r0, row_in_block);
      Reg in0 = pred(), in1 = pred();
      k.setp(Cmp::lt, Type::u32, in0, r0, m);
      k.setp(Cmp::lt, Type::u32, in1, r1, m);
      Reg cq = with_c ? element_pointer(c_ptr, r0, col_base, ldc) : Reg{};
      for (int ch = 0; ch < c.tile_n / cols; ++ch) {
        consumer_barrier();
        std::array<Reg, 8> pair{}; // 16-bit cd: the values of columns 8q..8q+15, [dq][h][b], for stmatrix
        for (int q = ch * cols / 8; q < (ch + 1) * cols / 8; ++q) {
          for (int b = 0; b < 2; ++b) {
            Reg cp = cq;
            Reg p0 = pred(), p1 = pred();
            if (with_c) {
              Reg col = r32();
              k.add(Type::u32, col, col_base, 8 * q + b);
              k.raw("setp.lt.and.u32", {p0, col, n, in0});
              k.raw("setp.lt.and.u32", {p1, col, n, in1});
              if (b) {
                cp = r64();
                k.add(Type::u64, cp, cq, cstep1);
              }
            }
            for (int h = 0; h < 2; ++h) {
              Reg v = k.reg(RegClass::f32);
              k.binary("mul.rn", Type::f32, v, alpha, acc[size_t(j)][size_t(4 * q + 2 * h + b)]);
              if (with_c) {
                Reg cv = k.reg(RegClass::f32);
                if (cd == Type::f32) {
                  k.mov(Type::f32, cv, Operand::f32(0.0f));
                  k.ld(ptx::Space::global, Type::f32, {cv}, Address(cp, 8 * es * h)).pred(h ? p1 : p0);
                } else {
                  Reg hc = k.reg(RegClass::b16);
                  k.mov(Type::b16, hc, 0);
                  k.ld(ptx::Space::global, Type::b16, {hc}, Address(cp, 8 * es * h)).pred(h ? p1 : p0);
                  k.cvt(ptx::Rounding::none, Type::f32, cd, cv, hc);
                }
                k.fma_rn(Type::f32, v, beta, cv, v);
              }
              const int64_t at = (int64_t(8 * q - ch * cols + b) * 64 + 8 * h) * es;
              if (cd == Type::f32)
                k.st(ptx::Space::shared, Type::f32, Address(thread_at, at), {v});
              else
                pair[size_t(4 * (q % 2) + 2 * h + b)] = v;
            }
          }
          if (cd != Type::f32 && q % 2 == 1) {
            // four 8x8 blocks (rows 16w + 8h, columns 8q' .. 8q' + 7) transposed into the column-major
            // staging: memory row i of a block = column i, 8 consecutive rows (16 bytes)
            std::vector<Reg> packed;
            for (int mtx = 0; mtx < 4; ++mtx) { // matrix mtx = 2 * dq + h
              Reg r = r32();
              k.cvt_pack(cd == Type::bf16 ? Type::bf16x2 : Type::f16x2, r, pair[size_t(2 * mtx + 1)],
                         pair[size_t(2 * mtx)]);
              packed.push_back(r);
            }
            const int64_t at = int64_t(8 * (q - 1) - ch * cols) * 64 * es;
            k.stmatrix(4, true, Address(stmatrix_at, at), packed);
          }
          if (with_c && q + 1 < c.tile_n / 8) {
            Reg nc = r64();
            k.add(Type::u64, nc, cq, cstep8);
            cq = nc;
          }
        }
        k.fence_proxy_async_shared(); // generic writes, read next by the TMA store (the async proxy)
        consumer_barrier();
        const ptx::Label skip = k.new_label("NOT_STORE_LEADER");
        k.bra(skip).pred(store_leader, true);
        Reg col0 = r32();
        k.add(Type::u32, col0, n0, ch * cols);
        k.tma_store(2, tma_d, {block_row, col0}, Address(staging));
        k.bulk_commit_group();
        k.bulk_wait_group(0, true); // the staging may be written again
        k.place(skip);
      }
    }
  }

  // The named barrier of this consumer warpgroup (1 or 2; 0 is the CTA's), with immediate ids so that ptxas
  // reserves 3 barriers, not all 16 as for an id in a register.
  void consumer_barrier() {
    if (c.consumers == 1) {
      k.bar_sync(1, 128);
      return;
    }
    k.bar_sync(1, 128).pred(second_consumer, true);
    k.bar_sync(2, 128).pred(second_consumer);
  }

  // Releases a stage: the local empty barrier, and the peer's (its producer multicasts into our stage too).
  void release(Reg empty, std::optional<Reg> guard) {
    auto& local = k.mbarrier_arrive(std::nullopt, Address(empty));
    if (guard)
      local.pred(*guard);
    if (c.cluster == 1)
      return;
    Reg remote = r32();
    k.raw("mapa.shared::cluster.u32", {remote, empty, peer}, {78, 90, false, "mapa"});
    auto& far =
        k.raw("mbarrier.arrive.release.cluster.shared::cluster.b64",
              {Operand::sink(), Operand::sym("[" + remote.name() + "]")}, {80, 90, false, "mbarrier"});
    if (guard)
      far.pred(*guard);
  }

  void consumer() {
    k.setmaxnreg(true, uint32_t(c.consumer_regs));
    const ptx::Label done = k.new_label("CONSUMER_DONE"), tiles = k.new_label("CONSUMER_TILE"),
                     kloop = k.new_label("CONSUMER_K");
    Reg ct = r32(), cw = r32(), wl = r32(), warp = r32(), lane = r32(), g = r32(), t = r32();
    k.sub(Type::u32, ct, tid, 128);
    k.binary("shr", Type::u32, cw, ct, 7);
    k.binary("and", Type::b32, wl, ct, 127);
    k.binary("shr", Type::u32, warp, wl, 5);
    k.binary("and", Type::b32, lane, wl, 31);
    k.binary("shr", Type::u32, g, lane, 2);
    k.binary("and", Type::b32, t, lane, 3);
    // this consumer's rows: cw * rows_per_consumer (128-byte rows in both operand majors)
    Reg a_offset = r32(), row_in_tile = r32(), col_in_tile = r32();
    k.mul_lo(Type::u32, a_offset, cw, pl.rows_per_consumer * 128);
    k.mul_lo(Type::u32, row_in_tile, cw, pl.rows_per_consumer);
    k.mad_lo(Type::u32, row_in_tile, warp, 16, row_in_tile);
    k.add(Type::u32, row_in_tile, row_in_tile, g);
    k.mul_lo(Type::u32, col_in_tile, t, 2);
    Reg beta_nonzero = pred();
    k.setp(Cmp::ne, Type::f32, beta_nonzero, beta, Operand::f32(0.0f));
    if (c.tma_store) {
      staging = r32(), second_consumer = pred(), store_leader = pred(), row_in_block = r32();
      k.mad_lo(Type::u32, staging, cw, pl.staging_bytes, base);
      k.add(Type::u32, staging, staging, pl.staging_offset);
      k.setp(Cmp::eq, Type::u32, second_consumer, cw, 1);
      k.setp(Cmp::eq, Type::u32, store_leader, wl, 0);
      k.mad_lo(Type::u32, row_in_block, warp, 16, g);
      if (s.cd != DType::f32) { // stmatrix row address of this lane: lanes 8j..8j+7 give matrix j's rows
        Reg mtx = r32(), row = r32(), col = r32(), x = r32();
        stmatrix_at = r32();
        k.binary("shr", Type::u32, mtx, lane, 3);
        k.binary("and", Type::b32, col, lane, 7); // column of the block = memory row
        k.binary("shr", Type::u32, x, mtx, 1);
        k.mad_lo(Type::u32, col, x, 8, col); // + 8 for the second column block
        k.binary("and", Type::b32, x, mtx, 1);
        k.mul_lo(Type::u32, row, warp, 16);
        k.mad_lo(Type::u32, row, x, 8, row); // + 8 for the lower row half
        k.mad_lo(Type::u32, row, col, 64, row);
        k.mad_lo(Type::u32, stmatrix_at, row, 2, staging);
      }
    }

    std::vector<std::vector<Reg>> acc;
    for (int j = 0; j < pl.subtiles; ++j)
      acc.push_back(k.regs(RegClass::f32, uint32_t(c.tile_n / 2)));

    Reg stage = r32(), phase = r32(), tile = r32(), step = r32(), released = r32();
    k.mov(Type::u32, stage, 0);
    k.mov(Type::u32, phase, 0);
    k.mov(Type::u32, released, 0);
    tile_loop_start(tile, step);
    k.place(tiles);
    Reg finished = pred();
    k.setp(Cmp::ge, Type::u32, finished, tile, total_tiles);
    k.bra(done).pred(finished);
    Reg m0 = r32(), n0 = r32(), it = r32();
    tile_origin(tile, m0, n0);
    k.mov(Type::u32, it, 0);
    k.place(kloop);
    {
      Reg slot = r32(), sa = r32(), aa = r32(), ba = r32(), accumulate = pred();
      k.mad_lo(Type::u32, slot, stage, 8, bars);
      wait_parity(slot, 0, phase);
      k.mad_lo(Type::u32, sa, stage, pl.stage_bytes, base);
      k.add(Type::u32, aa, sa, a_offset);
      k.add(Type::u32, ba, sa, pl.a_stage_bytes);
      // K-major: LBO unused (16), SBO 8 rows of 128 B; MN-major: LBO = the next 64-row box, SBO 8 k-rows.
      Reg da = descriptor(aa, a_kmajor ? 16 : kBoxBytes, 1024);
      Reg db = descriptor(ba, b_kmajor ? 16 : kBoxBytes, 1024);
      k.setp(Cmp::ne, Type::u32, accumulate, it, 0);
      // per wgmma k step (16 elements, fp8 32): 32 bytes along a K-major row, 16 rows of 128 B MN-major
      const uint32_t a_step = a_kmajor ? 32 : 16 * 128, b_step = b_kmajor ? 32 : 16 * 128;
      const int kstep = 32 / c.in_bytes;
      const ptx::MmaType type = s.a == DType::bf16 ? ptx::MmaType::bf16 : ptx::MmaType::f16;
      k.wgmma_fence();
      for (int kk = 0; kk < c.tile_k / kstep; ++kk) {
        Reg dbk = db;
        if (kk) {
          dbk = r64();
          k.add(Type::u64, dbk, db, (kk * b_step) >> 4);
        }
        for (int j = 0; j < pl.subtiles; ++j) {
          Reg dak = da;
          const uint32_t off = uint32_t(j) * kBoxBytes + uint32_t(kk) * a_step;
          if (off) {
            dak = r64();
            k.add(Type::u64, dak, da, off >> 4);
          }
          const Operand scale_d = kk == 0 ? Operand(accumulate) : Operand(1);
          if (s.fp8()) { // wgmma m64nNk32 .e4m3/.e5m2: K-major descriptors only, no imm-trans operands
            auto name = [](DType t) { return t == DType::fp8_e4m3 ? "e4m3" : "e5m2"; };
            k.raw("wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.tile_n) + "k32.f32." + name(s.a) +
                      "." + name(s.b),
                  {Operand::vec(acc[size_t(j)]), dak, dbk, scale_d, 1, 1}, {80, 90, true, "wgmma"});
          } else {
            k.wgmma_mma_async(type, uint32_t(c.tile_n), acc[size_t(j)], dak, dbk, scale_d, 1, 1,
                              a_kmajor ? 0 : 1, b_kmajor ? 0 : 1);
          }
        }
      }
      k.wgmma_commit_group();
      // one group stays in flight: the previous stage's wgmmas are done, release it
      k.wgmma_wait_group(1);
      release(released, accumulate);
      k.add(Type::u32, released, slot, 8 * c.stages);
    }
    advance(stage, phase);
    k.add(Type::u32, it, it, 1);
    Reg more = pred();
    k.setp(Cmp::lt, Type::u32, more, it, k_iters);
    k.bra(kloop).pred(more);
    k.wgmma_wait_group(0);
    release(released, std::nullopt);

    Reg row_base = r32(), col_base = r32();
    k.add(Type::u32, row_base, m0, row_in_tile);
    k.add(Type::u32, col_base, n0, col_in_tile);
    const ptx::Label without_c = k.new_label("EPILOGUE_NO_C"), epilogue_done = k.new_label("EPILOGUE_DONE");
    k.bra(without_c).pred(beta_nonzero, true);
    if (c.tma_store)
      epilogue_tma(acc, row_base, col_base, n0, true);
    else
      epilogue(acc, row_base, col_base, true);
    k.bra(epilogue_done);
    k.place(without_c);
    if (c.tma_store) // beta = 0: C is not read (it may hold NaN)
      epilogue_tma(acc, row_base, col_base, n0, false);
    else
      epilogue(acc, row_base, col_base, false);
    k.place(epilogue_done);
    k.add(Type::u32, tile, tile, step);
    k.bra(tiles);
    k.place(done);
    if (c.tma_store) { // the last tensor stores have written D before the CTA ends
      const ptx::Label skip = k.new_label("NOT_STORE_LEADER");
      k.bra(skip).pred(store_leader, true);
      k.bulk_wait_group(0);
      k.place(skip);
    }
    k.ret();
  }

  void body() {
    header();
    init_barriers();
    Reg wg = r32(), is_consumer = pred();
    const ptx::Label consumer_start = k.new_label("CONSUMER");
    k.binary("shr", Type::u32, wg, tid, 7);
    k.setp(Cmp::ne, Type::u32, is_consumer, wg, 0);
    k.bra(consumer_start).pred(is_consumer);
    producer();
    k.place(consumer_start);
    consumer();
  }
};

} // namespace

std::string emit_sm90a_gemm(const GemmSig& s, const Sm90aConfig& c) {
  const std::string why = why_invalid_sm90a(c);
  if (!why.empty())
    throw InputError("gemm sm_90a: " + why);
  ptx::Module mod("sm_90a");
  ptx::Kernel& k = mod.add_kernel(sm90a_kernel_name(s, c));
  Emitter e(s, c, k);
  e.body();
  return ptx::print(mod);
}

} // namespace isatune::gen::gemm
