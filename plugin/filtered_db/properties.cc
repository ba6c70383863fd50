// FilteredDB's statistics: index_stats() (the per-thread reader slots
// summed) and the "blockbloom.*" properties of GetProperty.
#include "filtered_db/filtered_db_impl.h"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "blockbloom/filter_stats.h"

namespace blockbloom {

using namespace filtered_db;  // NOLINT: this library's own internals

FilteredDBStats FilteredDB::index_stats() const {
  Impl& m = *impl_;
  FilteredDBStats s;
  for (const ReaderSlot& slot : m.slots) {
    s.gets_ruled_out += slot.ruled_out.load(std::memory_order_relaxed);
    s.filter_passes += slot.passes.load(std::memory_order_relaxed);
    s.passes_not_found += slot.passes_not_found.load(std::memory_order_relaxed);
    s.counting_probes_skipped += slot.counting_skipped.load(std::memory_order_relaxed);
  }
  s.gets_checked = s.gets_ruled_out + s.filter_passes;
  std::lock_guard<std::mutex> lock(m.write_mu);
  s.index_active = m.current != nullptr;
  s.opened_from = m.opened_from;
  if (m.current != nullptr) {
    s.keys = m.current->keys();
    s.capacity = m.current->capacity();
    s.memory_bytes = m.current->memory_bytes();
    s.estimated_fpr = m.current->estimated_fpr();
  }
  for (const Retired& old : m.retired) s.memory_bytes += old.index->memory_bytes();
  s.rebuilds = m.rebuilds;
  s.insert_refusals = m.insert_refusals;
  s.failed_writes = m.failed_writes;
  s.index_saves = m.saves;
  return s;
}

bool FilteredDB::GetProperty(const leveldb::Slice& property, std::string* value) {
  const leveldb::Slice prefix("blockbloom.");
  if (!property.starts_with(prefix)) return impl_->db->GetProperty(property, value);
  const FilteredDBStats s = index_stats();
  const uint64_t absent = s.gets_ruled_out + s.passes_not_found;
  const double measured_fpr = absent ? static_cast<double>(s.passes_not_found) / absent : 0.0;
  char buf[768];
  if (property == "blockbloom.stats" || property == "blockbloom.index-stats") {
    std::snprintf(buf, sizeof(buf),
                  "index-active: %d\nopened-from: %s\nkeys: %" PRIu64 "\ncapacity: %" PRIu64
                  "\nmemory-bytes: %" PRIu64
                  "\nbytes-per-live-key: %.2f\nestimated-fpr: %.6g\n"
                  "gets-checked: %" PRIu64 "\ngets-ruled-out: %" PRIu64 "\nfilter-passes: %" PRIu64
                  "\npasses-not-found: %" PRIu64 "\ncounting-probes-skipped: %" PRIu64
                  "\nmeasured-fpr: %.6g\nrebuilds: %" PRIu64 "\ninsert-refusals: %" PRIu64
                  "\nfailed-writes: %" PRIu64 "\nindex-saves: %" PRIu64 "\n",
                  s.index_active ? 1 : 0, s.opened_from == IndexSource::kFile ? "file" : "scan",
                  s.keys, s.capacity, s.memory_bytes,
                  s.keys ? static_cast<double>(s.memory_bytes) / s.keys : 0.0, s.estimated_fpr,
                  s.gets_checked, s.gets_ruled_out, s.filter_passes, s.passes_not_found,
                  s.counting_probes_skipped, measured_fpr, s.rebuilds, s.insert_refusals,
                  s.failed_writes, s.index_saves);
  } else if (property == "blockbloom.filter-policy-stats") {
    // The table filters' own counters (blockbloom/filter_stats.h): with the
    // index's passes-not-found they give the filters' live FPR.
    const FilterPolicyStats p = GetFilterPolicyStats(impl_->filter_policy);
    if (!p.available) return false;
    std::snprintf(buf, sizeof(buf),
                  "probes: %" PRIu64 "\nnegatives: %" PRIu64 "\npositives: %" PRIu64 "\n", p.probes,
                  p.negatives, p.probes - p.negatives);
  } else if (property == "blockbloom.index-keys") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.keys);
  } else if (property == "blockbloom.index-memory-bytes") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.memory_bytes);
  } else if (property == "blockbloom.index-estimated-fpr") {
    std::snprintf(buf, sizeof(buf), "%.6g", s.estimated_fpr);
  } else if (property == "blockbloom.index-gets-ruled-out") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.gets_ruled_out);
  } else if (property == "blockbloom.index-filter-passes") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.filter_passes);
  } else if (property == "blockbloom.index-passes-not-found") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.passes_not_found);
  } else if (property == "blockbloom.index-measured-fpr") {
    std::snprintf(buf, sizeof(buf), "%.6g", measured_fpr);
  } else {
    return false;
  }
  *value = buf;
  return true;
}

}  // namespace blockbloom
