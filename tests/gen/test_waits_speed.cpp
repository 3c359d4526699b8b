// insert_waits on generated kernels: the output must stay what it was before the pass was made fast. Each
// kernel is generated, stripped of its s_waitcnt and s_nop, run through insert_waits again and printed; the
// FNV-1a hash of the text is compared with the hash the earlier (slow) implementation gave, recorded below.
// A second test prints the pass's time on the largest kernels (a figure for docs/performance.md, no limit).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>

#include "isatune/cdna/printer.h"
#include "isatune/cdna/waits.h"
#include "isatune/error.h"
#include "isatune/gen/generator.h"

using namespace isatune;

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

cdna::Kernel stripped(const cdna::Kernel& k) {
  cdna::Kernel out = k;
  std::erase_if(out.body, [](const cdna::Statement& s) {
    const auto* in = std::get_if<cdna::Instruction>(&s);
    return in && (in->category() == cdna::Category::waitcnt || in->category() == cdna::Category::nop);
  });
  return out;
}

struct Case {
  const gen::Generator* g;
  std::string isa;
  gen::Signature sig;
  gen::Params params;
  std::string label() const { return g->name() + " " + isa + " " + gen::format(sig) + " " + gen::format(params); }
};

// Per generator and target: 6 points, signature k sets every field to its k-th value (so a = b for GEMM),
// spread evenly through the valid space. Signatures a target cannot generate are left out.
std::vector<Case> golden_cases() {
  std::vector<Case> out;
  for (const gen::Generator* g : gen::all_generators())
    for (const std::string& isa : g->targets())
      for (size_t k = 0; k < 6; ++k) {
        gen::Signature sig;
        for (const auto& f : g->signature_schema())
          sig[f.name] = f.values[k % f.values.size()];
        std::optional<gen::Space> sp;
        try {
          sp = g->space(isa, sig);
        } catch (const InputError&) {
          continue;
        }
        if (sp->size() == 0)
          continue;
        const size_t pos = (k * sp->size() / 6 + sp->size() / 13) % sp->size();
        out.push_back({g, isa, sig, gen::params_of(*sp, sp->valid_config(pos))});
      }
  return out;
}

// Recorded from the implementation before the speed-up: per case, the hash of the stripped kernel (the pass's
// input) and of the printed result. A case whose label or input changed (a generator changed) is not compared.
// Record again with ISATUNE_PRINT_WAIT_HASHES=1 only for changed generators, never to make a difference in the
// pass's output go away.
struct Golden {
  const char* label;
  uint64_t input, output;
};
const Golden kGolden[] = {
    {"gemm gfx90a a=f16,b=f16,cd=f32,layout=NN depth=32,lds_pad=0,mfma=16x16x16,prefetch_global=1,prefetch_local=1,split_k=2,tile_m=32,tile_n=64,vw=2,waves_m=1,waves_n=1,wg_order=row",
     0x644652ede952e73bull, 0x0d8f24bb6f823d5cull},
    {"gemm gfx90a a=bf16,b=bf16,cd=f16,layout=NT depth=32,lds_pad=8,mfma=32x32x8,prefetch_global=1,prefetch_local=1,split_k=1,tile_m=64,tile_n=32,vw=2,waves_m=1,waves_n=1,wg_order=col",
     0x87f6d083c596ffe0ull, 0xbee5fb380bd962a8ull},
    {"gemm gfx942 a=f16,b=f16,cd=f32,layout=NN depth=32,lds_pad=0,mfma=16x16x16,prefetch_global=1,prefetch_local=1,split_k=2,tile_m=32,tile_n=64,vw=2,waves_m=1,waves_n=1,wg_order=row",
     0x92ee6238e0343361ull, 0xc75a8bdd8cf19db1ull},
    {"gemm gfx942 a=bf16,b=bf16,cd=f16,layout=NT depth=32,lds_pad=8,mfma=32x32x8,prefetch_global=1,prefetch_local=1,split_k=1,tile_m=64,tile_n=32,vw=2,waves_m=1,waves_n=1,wg_order=col",
     0x18a8d0cc7471f0f5ull, 0x01c9c002ba4dbcbaull},
    {"gemm gfx942 a=fp8_e4m3_fnuz,b=fp8_e4m3_fnuz,cd=f16,layout=NN depth=64,lds_pad=0,mfma=16x16x32,prefetch_global=1,prefetch_local=1,split_k=1,tile_m=128,tile_n=64,vw=1,waves_m=4,waves_n=1,wg_order=col",
     0x5b123196f08f9650ull, 0x17ae53410e53fb2eull},
    {"gemm gfx942 a=fp8_e5m2_fnuz,b=fp8_e5m2_fnuz,cd=bf16,layout=NT depth=64,lds_pad=8,mfma=32x32x16,prefetch_global=1,prefetch_local=0,split_k=1,tile_m=256,tile_n=32,vw=2,waves_m=4,waves_n=1,wg_order=row",
     0x593cbeec2867acc1ull, 0xbbd157ae01f2796cull},
    {"gemm gfx950 a=f16,b=f16,cd=f32,layout=NN depth=32,lds_pad=8,mfma=16x16x32,prefetch_global=0,prefetch_local=0,split_k=2,tile_m=32,tile_n=64,vw=2,waves_m=1,waves_n=1,wg_order=row",
     0x2288fc688bd2eb80ull, 0x584e93c853b0d2bdull},
    {"gemm gfx950 a=bf16,b=bf16,cd=f16,layout=NT depth=32,lds_pad=8,mfma=16x16x16,prefetch_global=1,prefetch_local=0,split_k=1,tile_m=64,tile_n=32,vw=2,waves_m=1,waves_n=1,wg_order=row",
     0x35f870b7529024a3ull, 0x40ec7a371cb05d9full},
    {"gemm gfx950 a=fp8_e4m3,b=fp8_e4m3,cd=bf16,layout=TN depth=64,lds_pad=0,mfma=16x16x32,prefetch_global=0,prefetch_local=1,split_k=1,tile_m=64,tile_n=64,vw=2,waves_m=4,waves_n=1,wg_order=col",
     0x6b3db0de31478cddull, 0x54c7ad16024614c8ull},
    {"gemm gfx950 a=fp8_e5m2,b=fp8_e5m2,cd=f32,layout=TT depth=32,lds_pad=8,mfma=32x32x16,prefetch_global=0,prefetch_local=0,split_k=1,tile_m=128,tile_n=32,vw=1,waves_m=1,waves_n=1,wg_order=row",
     0x8f6831b93b44b63dull, 0x05fc51ce2ee505f0ull},
    {"softmax gfx90a dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0x84a9872b6d140016ull, 0x767cf62b804be919ull},
    {"softmax gfx90a dtype=f16 row_chunk=8,rows_per_wg=4,unroll=2,vec=2,waves_per_row=1",
     0xb1676f778bd78b9cull, 0x07e018574aa4c73dull},
    {"softmax gfx90a dtype=bf16 row_chunk=16,rows_per_wg=1,unroll=4,vec=4,waves_per_row=2",
     0x0126f6ecf4d12d21ull, 0x7bcd2d0552583466ull},
    {"softmax gfx90a dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0x1a272ed08897c294ull, 0x8d6b1eea78f9e77bull},
    {"softmax gfx90a dtype=f16 row_chunk=128,rows_per_wg=1,unroll=2,vec=8,waves_per_row=2",
     0x00f28d7fea3449e1ull, 0xa260ca28b5051e43ull},
    {"softmax gfx90a dtype=bf16 row_chunk=0,rows_per_wg=4,unroll=2,vec=8,waves_per_row=1",
     0x6109986ecb6cc7dcull, 0x8bff68bc267c3201ull},
    {"softmax gfx942 dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0x38dbbaddaead915cull, 0xd20bfe177148932cull},
    {"softmax gfx942 dtype=f16 row_chunk=8,rows_per_wg=4,unroll=2,vec=2,waves_per_row=1",
     0x24398e03001bfc08ull, 0xe56c758c53856220ull},
    {"softmax gfx942 dtype=bf16 row_chunk=16,rows_per_wg=1,unroll=4,vec=4,waves_per_row=2",
     0x6e8e88b399ceab6full, 0x6477b5ab09b88a8bull},
    {"softmax gfx942 dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0x08b1cf6dfd282492ull, 0x96abbe9b07d40c14ull},
    {"softmax gfx942 dtype=f16 row_chunk=128,rows_per_wg=1,unroll=2,vec=8,waves_per_row=2",
     0x8c7de9b120b9022bull, 0xfe7227d09365336eull},
    {"softmax gfx942 dtype=bf16 row_chunk=0,rows_per_wg=4,unroll=2,vec=8,waves_per_row=1",
     0x5dfc6013bdc8622cull, 0x215d3024132e3706ull},
    {"softmax gfx950 dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0xdaa9737e49e98016ull, 0x28f7fc5e8b2ae4e0ull},
    {"softmax gfx950 dtype=f16 row_chunk=8,rows_per_wg=4,unroll=2,vec=2,waves_per_row=1",
     0x6a1b7803fb560f64ull, 0xde22311c47303676ull},
    {"softmax gfx950 dtype=bf16 row_chunk=16,rows_per_wg=1,unroll=4,vec=4,waves_per_row=2",
     0x75791f3755afdcfcull, 0x5dcd8329b889759aull},
    {"softmax gfx950 dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0xf82aced29bef5390ull, 0x484ed3a04f10f6fcull},
    {"softmax gfx950 dtype=f16 row_chunk=128,rows_per_wg=1,unroll=2,vec=8,waves_per_row=2",
     0xc1ac4aacf351b32bull, 0xa8592438d6d7dbfaull},
    {"softmax gfx950 dtype=bf16 row_chunk=0,rows_per_wg=4,unroll=2,vec=8,waves_per_row=1",
     0xbb8f54b2cb579f57ull, 0x59711f5fee8fd1fdull},
    {"rmsnorm gfx90a dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0xa0cea2243a8c2600ull, 0x097aa782c0fcd90cull},
    {"rmsnorm gfx90a dtype=f16 row_chunk=32,rows_per_wg=4,unroll=1,vec=2,waves_per_row=1",
     0xb3958509bb8d1d85ull, 0x8fba2625ebf5138cull},
    {"rmsnorm gfx90a dtype=bf16 row_chunk=16,rows_per_wg=1,unroll=2,vec=4,waves_per_row=2",
     0x07d704a650322d34ull, 0x08e543fd833fcf83ull},
    {"rmsnorm gfx90a dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0x73015c28336841f7ull, 0x72abc669eeb32cfcull},
    {"rmsnorm gfx90a dtype=f16 row_chunk=64,rows_per_wg=1,unroll=1,vec=8,waves_per_row=2",
     0x9abb2865596b982full, 0x42f51195c5c6ab43ull},
    {"rmsnorm gfx90a dtype=bf16 row_chunk=32,rows_per_wg=4,unroll=1,vec=8,waves_per_row=1",
     0xec27aa1f47b0758eull, 0x0b5a80ea236cbcf4ull},
    {"rmsnorm gfx942 dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0xf0a277690280c168ull, 0x6289d34a94dec967ull},
    {"rmsnorm gfx942 dtype=f16 row_chunk=32,rows_per_wg=4,unroll=1,vec=2,waves_per_row=1",
     0x7983c61452728925ull, 0xf17d24c9fe14426bull},
    {"rmsnorm gfx942 dtype=bf16 row_chunk=16,rows_per_wg=1,unroll=2,vec=4,waves_per_row=2",
     0xad7e89b8efd8b8f2ull, 0x78b1a8964667f6a6ull},
    {"rmsnorm gfx942 dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0xe4a4ac0e288def0bull, 0xe26916e09f9f84a5ull},
    {"rmsnorm gfx942 dtype=f16 row_chunk=64,rows_per_wg=1,unroll=1,vec=8,waves_per_row=2",
     0x4a04d5bab89e79fcull, 0x1f6f636d75940b9dull},
    {"rmsnorm gfx942 dtype=bf16 row_chunk=32,rows_per_wg=4,unroll=1,vec=8,waves_per_row=1",
     0x298b5b7f7252f5cdull, 0xeeb094c115dbbaa0ull},
    {"rmsnorm gfx950 dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0xaade1ef1a1be9e40ull, 0xc7b3b65146f33191ull},
    {"rmsnorm gfx950 dtype=f16 row_chunk=32,rows_per_wg=4,unroll=1,vec=2,waves_per_row=1",
     0x1a7f3b34d9d4abc1ull, 0xa2b618b9294017b7ull},
    {"rmsnorm gfx950 dtype=bf16 row_chunk=16,rows_per_wg=1,unroll=2,vec=4,waves_per_row=2",
     0x629e3741a1c55ce2ull, 0x18517c4ce36c44e4ull},
    {"rmsnorm gfx950 dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0x7d2887c61167fe25ull, 0xd1504b940d7ed3a3ull},
    {"rmsnorm gfx950 dtype=f16 row_chunk=64,rows_per_wg=1,unroll=1,vec=8,waves_per_row=2",
     0xdc67d0cd1aba0d62ull, 0xd4f064c848e5fa1dull},
    {"rmsnorm gfx950 dtype=bf16 row_chunk=32,rows_per_wg=4,unroll=1,vec=8,waves_per_row=1",
     0x89831844edc45dbeull, 0x2ad10fd524bcbf95ull},
    {"layernorm gfx90a dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0x3d0686f1b697c170ull, 0x38e12d74cbed8ce5ull},
    {"layernorm gfx90a dtype=f16 row_chunk=16,rows_per_wg=4,unroll=1,vec=2,waves_per_row=1",
     0xbf5b0d9085c34d8cull, 0x956c914c1f674f67ull},
    {"layernorm gfx90a dtype=bf16 row_chunk=8,rows_per_wg=1,unroll=2,vec=4,waves_per_row=2",
     0xcc89ff14d2cc21abull, 0x45541455618a18a6ull},
    {"layernorm gfx90a dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0xffd58da82e91e72full, 0xe625bd20546d5bbfull},
    {"layernorm gfx90a dtype=f16 row_chunk=16,rows_per_wg=1,unroll=2,vec=8,waves_per_row=2",
     0xd6e9190302c4368bull, 0xa0827369fe80c46aull},
    {"layernorm gfx90a dtype=bf16 row_chunk=128,rows_per_wg=4,unroll=1,vec=8,waves_per_row=1",
     0x1c07d9b6fc929f40ull, 0xdc065c16ccc37f7eull},
    {"layernorm gfx942 dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0xd1c5c3291f5b49b7ull, 0x5f2ed5febf5503aaull},
    {"layernorm gfx942 dtype=f16 row_chunk=16,rows_per_wg=4,unroll=1,vec=2,waves_per_row=1",
     0x544395d245f2f311ull, 0x5943b49e3c228147ull},
    {"layernorm gfx942 dtype=bf16 row_chunk=8,rows_per_wg=1,unroll=2,vec=4,waves_per_row=2",
     0x2ceb33182f1c436dull, 0x7a8d1b97f795d78full},
    {"layernorm gfx942 dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0x89cafdf18d1662c6ull, 0xe9f7a180f226dcf1ull},
    {"layernorm gfx942 dtype=f16 row_chunk=16,rows_per_wg=1,unroll=2,vec=8,waves_per_row=2",
     0x31cac802d3df50cfull, 0x03237653a47631d5ull},
    {"layernorm gfx942 dtype=bf16 row_chunk=128,rows_per_wg=4,unroll=1,vec=8,waves_per_row=1",
     0xcefbea2ab70e732aull, 0xbe934ef8301a742dull},
    {"layernorm gfx950 dtype=f32 row_chunk=64,rows_per_wg=1,unroll=1,vec=1,waves_per_row=4",
     0xd208dceac9dfc9e9ull, 0x1ba4070115612652ull},
    {"layernorm gfx950 dtype=f16 row_chunk=16,rows_per_wg=4,unroll=1,vec=2,waves_per_row=1",
     0x4f611340680d011dull, 0x6f199e461ee05b4full},
    {"layernorm gfx950 dtype=bf16 row_chunk=8,rows_per_wg=1,unroll=2,vec=4,waves_per_row=2",
     0x6d7f9cf06e65352dull, 0xb2e3e15fc65a50d9ull},
    {"layernorm gfx950 dtype=f32 row_chunk=64,rows_per_wg=4,unroll=4,vec=2,waves_per_row=1",
     0xaed9ae25cce12e68ull, 0x3d301be97508032dull},
    {"layernorm gfx950 dtype=f16 row_chunk=16,rows_per_wg=1,unroll=2,vec=8,waves_per_row=2",
     0xf058a3657e6a0483ull, 0xc1ac9d968da2a35full},
    {"layernorm gfx950 dtype=bf16 row_chunk=128,rows_per_wg=4,unroll=1,vec=8,waves_per_row=1",
     0x0fe4b7a4439c0ed6ull, 0x1c47bf8eccd77867ull},
    {"selftest gfx90a t=f32 behaviour=ok,unroll=2",
     0x6ba2fba06809e42full, 0x2aa53eed78966e90ull},
    {"selftest gfx90a t=f32 behaviour=slow,unroll=2",
     0x4ad01e62d94f1c5dull, 0x7e925cd5b364eb70ull},
    {"selftest gfx90a t=f32 behaviour=wrong,unroll=4",
     0x9569fe354c058d3aull, 0xa87897a7b3c51a15ull},
    {"selftest gfx90a t=f32 behaviour=hang,unroll=4",
     0x8ad404ab8999a7f2ull, 0x6b0a570495c29f5aull},
    {"selftest gfx942 t=f32 behaviour=ok,unroll=2",
     0xf59575bbaac35b4cull, 0xf9565dbd4ae23bcbull},
    {"selftest gfx942 t=f32 behaviour=slow,unroll=2",
     0x36740199f7c47a8aull, 0xa6ea3792f1bd6227ull},
    {"selftest gfx942 t=f32 behaviour=wrong,unroll=4",
     0xde98b6fdc78f229full, 0xef3841a1fa130ef0ull},
    {"selftest gfx942 t=f32 behaviour=hang,unroll=4",
     0x6401ae577d45dd13ull, 0x3498ab7851da834full},
    {"selftest gfx950 t=f32 behaviour=ok,unroll=2",
     0x22d16465e683088eull, 0xc36251585abc5647ull},
    {"selftest gfx950 t=f32 behaviour=slow,unroll=2",
     0x3358a3e5d276b960ull, 0xe9f9e7bdcf2223ffull},
    {"selftest gfx950 t=f32 behaviour=wrong,unroll=4",
     0x237d25f9e1260875ull, 0xd2f7eadae875f148ull},
    {"selftest gfx950 t=f32 behaviour=hang,unroll=4",
     0xb3052e128c9dd551ull, 0x44657554165bd209ull},
};

TEST(WaitsSpeed, GoldenOutput) {
  std::map<std::string, const Golden*> recorded;
  for (const Golden& g : kGolden)
    recorded[g.label] = &g;
  size_t compared = 0, total = 0;
  for (const Case& c : golden_cases()) {
    SCOPED_TRACE(c.label());
    gen::Generated gd = c.g->generate(c.isa, c.sig, c.params);
    if (!gd.cdna)
      continue; // not a CDNA kernel (the self-test generator writes text)
    ++total;
    cdna::Kernel k = stripped(*gd.cdna);
    const uint64_t input = fnv1a(cdna::print(k));
    cdna::insert_waits(k);
    const uint64_t output = fnv1a(cdna::print(k));
    cdna::WaitStats again = cdna::insert_waits(k); // idempotent
    EXPECT_EQ(again.waitcnts_inserted + again.nops_inserted, 0u);
    if (std::getenv("ISATUNE_PRINT_WAIT_HASHES"))
      std::printf("    {\"%s\",\n     0x%016llxull, 0x%016llxull},\n", c.label().c_str(),
                  static_cast<unsigned long long>(input), static_cast<unsigned long long>(output));
    auto it = recorded.find(c.label());
    if (it == recorded.end() || it->second->input != input)
      continue; // a new case or a changed kernel: nothing to compare with
    ++compared;
    EXPECT_EQ(output, it->second->output);
  }
  std::printf("insert_waits golden: %zu of %zu kernels compared (the others are new or changed)\n", compared,
              total);
  EXPECT_GE(compared * 2, std::size(kGolden)) << "most recorded kernels changed: record the hashes again";
}

// This thread's CPU time: the machine is shared, so wall time says more about the neighbours than the pass.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The pass's time on the largest kernels (stripped of their waits first): printed, not checked. The GEMM is
// the largest of a sample of its space; the first layernorm has 5,892 statements with its waits, the second
// is the largest row kernel.
TEST(WaitsSpeed, Timing) {
  struct Big {
    const char* generator;
    const char* isa;
    gen::Signature sig;
    const char* params;
  };
  const Big bigs[] = {
      {"gemm", "gfx942", {{"a", "bf16"}, {"b", "bf16"}, {"cd", "f32"}, {"layout", "NT"}},
       "tile_m=128,tile_n=256,depth=32,waves_m=2,waves_n=2,mfma=32x32x8,vw=2,lds_pad=8,prefetch_global=1,"
       "prefetch_local=0,split_k=4,wg_order=row"},
      {"layernorm", "gfx942", {{"dtype", "f32"}}, "vec=4,rows_per_wg=1,waves_per_row=2,unroll=1,row_chunk=128"},
      {"layernorm", "gfx90a", {{"dtype", "f32"}}, "vec=2,rows_per_wg=1,waves_per_row=4,unroll=1,row_chunk=128"},
  };
  for (const Big& b : bigs) {
    const gen::Generator& g = gen::find_generator(b.generator);
    std::vector<std::string> words{b.params};
    gen::Params params = gen::parse_params(g.space(b.isa, b.sig), words);
    const cdna::Kernel k = stripped(*g.generate(b.isa, b.sig, params).cdna);
    double best_wall = 1e9, best_cpu = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      cdna::Kernel copy = k;
      const double c0 = cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      cdna::insert_waits(copy);
      best_wall = std::min(best_wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      best_cpu = std::min(best_cpu, cpu_seconds() - c0);
    }
    std::printf("insert_waits %s %s %s: %zu statements, %.2f ms CPU (%.2f us per statement), %.2f ms wall, "
                "best of 5\n",
                b.generator, b.isa, gen::format(b.sig).c_str(), k.body.size(), best_cpu * 1e3,
                best_cpu * 1e6 / double(k.body.size()), best_wall * 1e3);
  }
}

} // namespace
