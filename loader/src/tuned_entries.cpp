// The entry of every tuned problem (TunedEntry): the one query `isatune db best`, the loader's select and
// Python's isatune.best() share, so they cannot disagree on which variant a problem has or on the vendor flag.
#include "isatune/db/database.h"
#include "sqlite_stmt.h"

namespace isatune::db {

using detail::Stmt;

std::vector<TunedEntry> Database::tuned_entries(const TunedEntryFilter& f) {
  // The re-ranking's winner replaces the fastest single median unless a later search found something faster
  // than what was re-ranked; the vendor library's time (real devices only) rides along.
  Stmt s(db_, R"sql(
SELECT b.generator, b.signature, b.target_id, b.compute_units, b.device_kind, b.problem,
       coalesce(w.measurement_id, b.measurement_id), coalesce(w.variant_id, b.variant_id),
       coalesce(w.median_ms, b.median_ms), v.parameters, v.code_object, v.kernel, v.launch, g.version_hash,
       w.variant_id IS NOT NULL, w.rerank_median_ms, w.rerank_lo_ms, w.rerank_hi_ms, w.flip_rate, w.rounds,
       vt.median_ms, vt.library, vt.source
FROM best b
LEFT JOIN rerank_winners w ON w.generator = b.generator AND w.signature = b.signature AND w.target_id = b.target_id
     AND w.compute_units = b.compute_units AND w.device_kind = b.device_kind AND w.problem = b.problem
     AND b.median_ms >= w.search_best_ms
LEFT JOIN vendor_times vt ON b.device_kind = 'real' AND vt.generator = b.generator AND vt.signature = b.signature
     AND vt.target_id = b.target_id AND vt.compute_units = b.compute_units AND vt.problem = b.problem
JOIN variants v ON v.id = coalesce(w.variant_id, b.variant_id) JOIN generators g ON g.id = v.generator_id
WHERE (?1 = '' OR b.generator = ?1) AND (?2 = '' OR b.signature = ?2) AND (?3 = '' OR b.target_id = ?3)
      AND (?4 = 0 OR b.compute_units = ?4) AND (?5 = '' OR b.device_kind = ?5)
ORDER BY b.generator, b.signature, b.target_id, b.compute_units, b.device_kind, b.problem)sql");
  s.bind(1, f.generator).bind(2, f.signature).bind(3, f.target_id).bind(4, int64_t(f.compute_units))
      .bind(5, f.device_kind);
  std::vector<TunedEntry> out;
  while (s.step()) {
    TunedEntry e;
    e.generator = s.text(0);
    e.signature = s.text(1);
    e.target_id = s.text(2);
    e.compute_units = uint32_t(s.int64(3));
    e.device_kind = s.text(4);
    e.problem = s.text(5);
    e.measurement_id = s.int64(6);
    e.variant_id = s.int64(7);
    e.median_ms = s.real(8);
    e.parameters = s.text(9);
    e.code_object = s.is_null(10) ? "" : s.text(10);
    e.kernel = s.text(11);
    e.launch = s.text(12);
    e.generator_version = s.text(13);
    e.rerank_winner = s.int64(14) != 0;
    if (e.rerank_winner) {
      e.rerank_median_ms = s.real(15);
      e.rerank_lo_ms = s.real(16);
      e.rerank_hi_ms = s.real(17);
      e.flip_rate = s.real(18);
      e.rounds = s.int64(19);
    }
    if (!s.is_null(20)) {
      e.vendor_ms = s.real(20);
      e.vendor_library = s.text(21);
      e.vendor_source = s.text(22);
    }
    out.push_back(std::move(e));
  }
  return out;
}

} // namespace isatune::db
