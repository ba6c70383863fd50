#include "common/thread_slot.h"

#include <atomic>
#include <cstdint>

namespace blockbloom {
namespace internal {

__thread int tls_thread_slot __attribute__((tls_model("initial-exec"))) = -1;

namespace {

static_assert(kOwnedThreadSlots == 64, "the lease is one 64-bit word");
std::atomic<uint64_t> g_leased{0};  // bit i: slot i leased by a live thread

// Returns the thread's slot when the thread exits.
struct Lease {
  unsigned slot = kSharedThreadSlot;
  ~Lease() {
    if (slot != kSharedThreadSlot) {
      g_leased.fetch_and(~(uint64_t{1} << slot), std::memory_order_acq_rel);
    }
    tls_thread_slot = -1;
  }
};
thread_local Lease lease;

}  // namespace

unsigned LeaseThreadSlot() {
  unsigned slot = kSharedThreadSlot;
  uint64_t leased = g_leased.load(std::memory_order_relaxed);
  while (~leased != 0) {
    const unsigned i = static_cast<unsigned>(__builtin_ctzll(~leased));
    if (g_leased.compare_exchange_weak(leased, leased | (uint64_t{1} << i),
                                       std::memory_order_acq_rel)) {
      slot = i;
      break;
    }
  }
  lease.slot = slot;
  tls_thread_slot = static_cast<int>(slot);
  return slot;
}

}  // namespace internal
}  // namespace blockbloom
