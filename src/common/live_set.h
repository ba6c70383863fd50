// The set of live objects of one kind, so code handed a base-class pointer
// can tell whether it points at one of ours without dynamic_cast (upstream
// LevelDB builds with -fno-rtti: a dynamic_cast on one of its objects would
// crash). Objects add themselves when constructed and remove themselves when
// destroyed.
//
// Thread-safety: every member may be called concurrently (one mutex).
#ifndef BLOCKBLOOM_COMMON_LIVE_SET_H_
#define BLOCKBLOOM_COMMON_LIVE_SET_H_

#include <mutex>
#include <unordered_set>

namespace blockbloom {
namespace internal {

template <typename T>
class LiveSet {
 public:
  // May throw std::bad_alloc.
  void Add(const T* p) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(p);
  }
  void Remove(const T* p) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(p);
  }
  // fn() under the lock if `p` is live (so no Remove completes meanwhile);
  // whether it was.
  template <typename Fn>
  bool IfLive(const T* p, Fn&& fn) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (live_.count(p) == 0) return false;
    fn();
    return true;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_set<const T*> live_;
};

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_LIVE_SET_H_
