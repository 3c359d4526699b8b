// The schema, one migration step per version. A fresh file runs every step; an older file runs the steps it
// lacks, all inside the caller's single transaction.
#include "isatune/error.h"
#include "sqlite_stmt.h"

namespace isatune::db::detail {

namespace {
// Version 1: the tables.
const char* kStep1 = R"sql(
CREATE TABLE devices(
  id INTEGER PRIMARY KEY,
  vendor TEXT NOT NULL CHECK(vendor IN ('amd','nvidia')),
  target_id TEXT NOT NULL,
  isa TEXT NOT NULL,
  name TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  driver_version TEXT NOT NULL,
  runtime_version TEXT NOT NULL,
  emulated INTEGER NOT NULL CHECK(emulated IN (0,1)),
  UNIQUE(vendor, target_id, name, compute_units, memory_bytes, driver_version, runtime_version, emulated));
CREATE TABLE toolchains(
  id INTEGER PRIMARY KEY,
  assembler TEXT NOT NULL,
  version TEXT NOT NULL,
  UNIQUE(assembler, version));
CREATE TABLE generators(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  version_hash TEXT NOT NULL,
  UNIQUE(name, version_hash));
CREATE TABLE code_objects(
  sha256 TEXT PRIMARY KEY CHECK(length(sha256) = 64),
  vendor TEXT NOT NULL CHECK(vendor IN ('amd','nvidia')),
  isa TEXT NOT NULL,
  target_id TEXT NOT NULL,
  size INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  toolchain_id INTEGER REFERENCES toolchains(id),
  created_at TEXT NOT NULL);
CREATE TABLE kernels(
  code_object TEXT NOT NULL REFERENCES code_objects(sha256) ON DELETE CASCADE,
  name TEXT NOT NULL,
  symbol TEXT NOT NULL,
  kernarg_size INTEGER NOT NULL,
  kernarg_align INTEGER NOT NULL,
  lds_bytes INTEGER NOT NULL,
  scratch_bytes INTEGER NOT NULL,
  vgprs INTEGER NOT NULL,
  agprs INTEGER NOT NULL,
  sgprs INTEGER NOT NULL,
  max_workgroup_size INTEGER NOT NULL,
  wave_size INTEGER NOT NULL,
  code_offset INTEGER NOT NULL,
  code_size INTEGER NOT NULL,
  args TEXT NOT NULL,
  descriptor TEXT,
  PRIMARY KEY(code_object, name));
CREATE TABLE variants(
  id INTEGER PRIMARY KEY,
  generator_id INTEGER NOT NULL REFERENCES generators(id),
  signature TEXT NOT NULL,
  parameters TEXT NOT NULL,
  code_object TEXT REFERENCES code_objects(sha256),
  kernel TEXT NOT NULL,
  launch TEXT NOT NULL DEFAULT '{}',
  UNIQUE(generator_id, signature, parameters, code_object, kernel));
CREATE TABLE runs(
  guid TEXT PRIMARY KEY,
  strategy TEXT NOT NULL,
  budget TEXT NOT NULL,
  host TEXT NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT);
CREATE TABLE measurements(
  id INTEGER PRIMARY KEY,
  variant_id INTEGER NOT NULL REFERENCES variants(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  problem TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK(status IN ('ok','constraint','compile','resource','runtime','wrong-answer','timeout')),
  median_ms REAL, p20_ms REAL, p80_ms REAL, min_ms REAL,
  count INTEGER NOT NULL DEFAULT 0,
  timing_method TEXT NOT NULL,
  device_kind TEXT NOT NULL CHECK(device_kind IN ('real','emulated')),
  measured_at TEXT NOT NULL,
  run_guid TEXT REFERENCES runs(guid),
  message TEXT NOT NULL DEFAULT '');
CREATE INDEX measurements_variant ON measurements(variant_id);
CREATE INDEX measurements_run ON measurements(run_guid);
CREATE INDEX variants_code_object ON variants(code_object);
)sql";

// Version 2: `best`, the fastest ok measurement per (generator, signature, device target, CU count, device
// kind, problem), kept by a trigger (kBestTrigger) so that select() reads one small table.
const char* kStep2 = R"sql(
CREATE TABLE best(
  generator TEXT NOT NULL,
  signature TEXT NOT NULL,
  target_id TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  device_kind TEXT NOT NULL,
  problem TEXT NOT NULL,
  isa TEXT NOT NULL,
  measurement_id INTEGER NOT NULL,
  variant_id INTEGER NOT NULL,
  median_ms REAL NOT NULL,
  PRIMARY KEY(generator, signature, target_id, compute_units, device_kind, problem)) WITHOUT ROWID;
)sql";
const char* kBestTrigger = R"sql(
CREATE TRIGGER measurements_best AFTER INSERT ON measurements
WHEN NEW.status = 'ok' AND NEW.median_ms IS NOT NULL
BEGIN
  INSERT INTO best(generator, signature, target_id, compute_units, device_kind, problem, isa, measurement_id,
                   variant_id, median_ms)
  SELECT g.name, v.signature, d.target_id, d.compute_units, NEW.device_kind, NEW.problem, d.isa, NEW.id,
         NEW.variant_id, NEW.median_ms
  FROM variants v JOIN generators g ON g.id = v.generator_id JOIN devices d ON d.id = NEW.device_id
  WHERE v.id = NEW.variant_id AND v.code_object IS NOT NULL
  ON CONFLICT(generator, signature, target_id, compute_units, device_kind, problem) DO UPDATE SET
    measurement_id = excluded.measurement_id, variant_id = excluded.variant_id, median_ms = excluded.median_ms
  WHERE excluded.median_ms < best.median_ms
     OR (excluded.median_ms = best.median_ms AND
         (SELECT parameters || '|' || ifnull(code_object, '') FROM variants WHERE id = excluded.variant_id) <
         (SELECT parameters || '|' || ifnull(code_object, '') FROM variants WHERE id = best.variant_id));
END;
)sql";

// Version 3: the device key also holds the SM clock, memory clock, memory bus width and L2 size (the same name
// with other clocks, such as a power-limited variant, is another device). SQLite cannot change a UNIQUE
// constraint in place, so the table is rebuilt with the same ids (SQLite's documented procedure: foreign keys
// off, which Database::open does around a migration, and the trigger that reads `devices` dropped and made
// again). Old rows get 0: unknown.
const char* kStep3 = R"sql(
DROP TRIGGER measurements_best;
CREATE TABLE devices_v3(
  id INTEGER PRIMARY KEY,
  vendor TEXT NOT NULL CHECK(vendor IN ('amd','nvidia')),
  target_id TEXT NOT NULL,
  isa TEXT NOT NULL,
  name TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  driver_version TEXT NOT NULL,
  runtime_version TEXT NOT NULL,
  emulated INTEGER NOT NULL CHECK(emulated IN (0,1)),
  clock_khz INTEGER NOT NULL DEFAULT 0,
  memory_clock_khz INTEGER NOT NULL DEFAULT 0,
  memory_bus_bits INTEGER NOT NULL DEFAULT 0,
  l2_bytes INTEGER NOT NULL DEFAULT 0,
  UNIQUE(vendor, target_id, name, compute_units, memory_bytes, driver_version, runtime_version, emulated, clock_khz,
         memory_clock_khz, memory_bus_bits, l2_bytes));
INSERT INTO devices_v3(id, vendor, target_id, isa, name, compute_units, memory_bytes, driver_version,
                       runtime_version, emulated)
  SELECT id, vendor, target_id, isa, name, compute_units, memory_bytes, driver_version, runtime_version, emulated
  FROM devices;
DROP TABLE devices;
ALTER TABLE devices_v3 RENAME TO devices;
)sql";

// Version 4: every run row records the physical device it ran on (a heterogeneous cluster's results stay apart
// and a shard's GPU can be traced): the device row, UUID and PCI bus id, CU/SM count, clocks and driver, and
// for distributed tuning the shard ("I/N") and the scheduler's job id. Old rows get '' / 0 / NULL: unknown.
// The `best` trigger is remade with a content tie-break (equal median: the smaller parameters text, then code
// object), so a merged database picks the same winner as one that measured the same rows in another order.
const char* kStep4 = R"sql(
DROP TRIGGER measurements_best;
ALTER TABLE runs ADD COLUMN device_id INTEGER REFERENCES devices(id);
ALTER TABLE runs ADD COLUMN device_uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN pci_bus_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN compute_units INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN clock_khz INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN memory_clock_khz INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN driver_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN shard TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN scheduler_job TEXT NOT NULL DEFAULT '';
)sql";

// Version 5: the vendor library's time for a tuned problem (cuBLAS, rocBLAS), per (generator, signature, device
// target and CU count, problem) as `best` keys it (vendor libraries run on real devices only), measured by the
// tuner through the loader (loader/vendor_gemm.h) or set by hand (`isatune db vendor-time`); and the re-ranking's
// winner (tuner/rerank.h) per key of `best`, which readers prefer to the fastest single median while the search
// has found nothing faster than what was re-ranked (search_best_ms: `best`'s median when the winner was decided).
// New tables only: every older row stays as it was (the trigger is dropped and made again, as by every step).
const char* kStep5 = R"sql(
DROP TRIGGER measurements_best;
CREATE TABLE vendor_times(
  generator TEXT NOT NULL,
  signature TEXT NOT NULL,
  target_id TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  problem TEXT NOT NULL,
  library TEXT NOT NULL,
  median_ms REAL NOT NULL CHECK(median_ms > 0),
  p20_ms REAL, p80_ms REAL, min_ms REAL,
  count INTEGER NOT NULL DEFAULT 0,
  timing_method TEXT NOT NULL,
  source TEXT NOT NULL CHECK(source IN ('measured','manual')),
  device_id INTEGER REFERENCES devices(id),
  measured_at TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(generator, signature, target_id, compute_units, problem)) WITHOUT ROWID;
CREATE TABLE rerank_winners(
  generator TEXT NOT NULL,
  signature TEXT NOT NULL,
  target_id TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  device_kind TEXT NOT NULL,
  problem TEXT NOT NULL,
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  variant_id INTEGER NOT NULL REFERENCES variants(id),
  median_ms REAL NOT NULL,
  search_best_ms REAL NOT NULL,
  rerank_median_ms REAL NOT NULL, rerank_lo_ms REAL NOT NULL, rerank_hi_ms REAL NOT NULL,
  candidates INTEGER NOT NULL,
  rounds INTEGER NOT NULL,
  separated INTEGER NOT NULL CHECK(separated IN (0,1)),
  flip_rate REAL NOT NULL,
  run_guid TEXT REFERENCES runs(guid),
  decided_at TEXT NOT NULL,
  PRIMARY KEY(generator, signature, target_id, compute_units, device_kind, problem)) WITHOUT ROWID;
)sql";

// Rebuilds `best` from every measurement (the v1 -> v2 migration, and after gc or merge).
const char* kRebuildBest = R"sql(
DELETE FROM best;
INSERT INTO best(generator, signature, target_id, compute_units, device_kind, problem, isa, measurement_id,
                 variant_id, median_ms)
SELECT g.name, v.signature, d.target_id, d.compute_units, m.device_kind, m.problem, d.isa, m.id, m.variant_id,
       m.median_ms
FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN generators g ON g.id = v.generator_id
     JOIN devices d ON d.id = m.device_id
WHERE m.status = 'ok' AND m.median_ms IS NOT NULL AND v.code_object IS NOT NULL
ORDER BY m.median_ms, v.parameters || '|' || ifnull(v.code_object, ''), m.id
ON CONFLICT(generator, signature, target_id, compute_units, device_kind, problem) DO NOTHING;
)sql";
} // namespace

void rebuild_best(sqlite3* db, const std::string& context) { exec(db, kRebuildBest, context); }

void migrate(sqlite3* db, int from_version, int target, const std::string& context) {
  static const char* steps[] = {kStep1, kStep2, kStep3, kStep4, kStep5};
  if (target > static_cast<int>(std::size(steps))) throw Error("internal: no migration to version " + std::to_string(target));
  for (int v = from_version; v < target; ++v) {
    const std::string what = context + ": migrating to schema version " + std::to_string(v + 1);
    exec(db, steps[v], what);
    if (v + 1 >= 2) exec(db, kBestTrigger, what); // step 3 dropped it (it reads `devices`)
    if (v + 1 == 2 && from_version >= 1) rebuild_best(db, context);
    if (v + 1 == 4 && from_version >= 2) rebuild_best(db, context); // the tie-break may pick other winners
  }
  // A rebuilt table keeps every id, so nothing may dangle (foreign keys are off during a migration).
  Stmt fk(db, "PRAGMA foreign_key_check");
  if (fk.step()) throw Error(context + ": migration left a dangling reference in table " + fk.text(0));
  exec(db, ("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str(), context);
  exec(db, ("PRAGMA user_version = " + std::to_string(target)).c_str(), context);
}

} // namespace isatune::db::detail
