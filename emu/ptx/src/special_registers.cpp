// Special registers (#special-registers): thread, CTA, grid and cluster ids, lane masks, clocks.
#include "warp.h"

namespace isatune::emu::ptx {

uint64_t read_special(Warp& w, const Opnd& o, unsigned lane) {
  const Cta& c = *w.cta;
  const Launch& L = *c.launch;
  unsigned k = o.component % 3;
  switch (o.special) {
  case ast::Special::tid:
    return w.tid[lane][k];
  case ast::Special::ntid:
    return L.block[k];
  case ast::Special::ctaid:
    return c.id[k];
  case ast::Special::nctaid:
    return L.grid[k];
  case ast::Special::laneid:
    return lane;
  case ast::Special::warpid:
    return w.index;
  case ast::Special::nwarpid:
    return 64;
  case ast::Special::smid:
    return c.linear % L.sm_count;
  case ast::Special::nsmid:
    return L.sm_count;
  case ast::Special::gridid:
    return 1;
  case ast::Special::lanemask_eq:
    return 1u << lane;
  case ast::Special::lanemask_le:
    return uint32_t(width_mask(lane + 1));
  case ast::Special::lanemask_lt:
    return uint32_t(width_mask(lane));
  case ast::Special::lanemask_ge:
    return ~uint32_t(width_mask(lane));
  case ast::Special::lanemask_gt:
    return ~uint32_t(width_mask(lane + 1));
  case ast::Special::clock:
    return uint32_t(w.cycles);
  case ast::Special::clock64:
    return w.cycles;
  case ast::Special::globaltimer:
    return w.cycles; // ns at an emulated 1 GHz
  case ast::Special::cluster_ctarank: {
    uint32_t x = c.id[0] % L.cluster[0], y = c.id[1] % L.cluster[1], z = c.id[2] % L.cluster[2];
    return x + L.cluster[0] * (y + L.cluster[1] * z);
  }
  case ast::Special::cluster_nctarank:
    return L.cluster[0] * L.cluster[1] * L.cluster[2];
  case ast::Special::clusterid:
    return c.id[k] / L.cluster[k];
  case ast::Special::nclusterid:
    return L.grid[k] / L.cluster[k];
  case ast::Special::cluster_ctaid:
    return c.id[k] % L.cluster[k];
  case ast::Special::cluster_nctaid:
    return L.cluster[k];
  case ast::Special::is_explicit_cluster:
    return L.cluster[0] * L.cluster[1] * L.cluster[2] > 1;
  case ast::Special::dynamic_smem_size:
    return L.dynamic_shared;
  case ast::Special::total_smem_size:
    return L.shared_bytes;
  case ast::Special::envreg:
    return 0;
  case ast::Special::clock_hi:
    return uint32_t(w.cycles >> 32);
  case ast::Special::globaltimer_lo:
    return uint32_t(w.cycles);
  case ast::Special::globaltimer_hi:
    return uint32_t(w.cycles >> 32);
  case ast::Special::aggr_smem_size:
    return L.shared_bytes;
  case ast::Special::pm:
  case ast::Special::pm64:
    return 0; // performance counters count nothing here
  case ast::Special::current_graph_exec:
    return 0;
  case ast::Special::reserved_smem_offset_begin:
  case ast::Special::reserved_smem_offset_end:
  case ast::Special::reserved_smem_offset_cap:
  case ast::Special::reserved_smem_offset_0:
  case ast::Special::reserved_smem_offset_1:
    return 0; // no reserved shared memory in the emulator
  }
  return 0;
}

} // namespace isatune::emu::ptx
