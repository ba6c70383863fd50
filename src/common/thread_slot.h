// Per-thread slots for statistics and reader announcements without a shared
// cache line: a thread leases one of kOwnedThreadSlots slot numbers on its
// first ThreadSlot() call and keeps it until it exits, so while it holds slot
// s it is the only thread that writes shard s of any structure indexed by
// slot (the LevelDB policies' probe counters, FilteredDB's reader slots):
// such writes may be a plain load and store. Threads that find every slot
// leased share kSharedThreadSlot, where writes must be read-modify-writes.
// One process-wide lease serves every user.
//
// Thread-safety: any thread may call ThreadSlot() at any time; the lease is a
// lock-free bitmap, returned by the thread's exit.
#ifndef BLOCKBLOOM_COMMON_THREAD_SLOT_H_
#define BLOCKBLOOM_COMMON_THREAD_SLOT_H_

namespace blockbloom {
namespace internal {

inline constexpr unsigned kOwnedThreadSlots = 64;
inline constexpr unsigned kSharedThreadSlot = kOwnedThreadSlots;
inline constexpr unsigned kThreadSlots = kOwnedThreadSlots + 1;  // shards to allocate

// The calling thread's slot, or -1 before its first ThreadSlot() (and again
// once its lease is returned at exit). Read on hot paths: one TLS load.
// Initial-exec, so that the load is a TLS-relative move in a shared library
// too (libblockbloom.so, the preload library), not a __tls_get_addr call
// per probe; GNU __thread (never dynamically initialised), so no TLS init
// check either. It takes 4 bytes of the static TLS block, which glibc keeps a
// surplus of for libraries loaded later with dlopen.
extern __thread int tls_thread_slot __attribute__((tls_model("initial-exec")));

// Leases the calling thread's slot (out of line: once per thread).
unsigned LeaseThreadSlot();

// The calling thread's slot in [0, kThreadSlots).
inline unsigned ThreadSlot() {
  const int slot = tls_thread_slot;
  return slot >= 0 ? static_cast<unsigned>(slot) : LeaseThreadSlot();
}

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_THREAD_SLOT_H_
