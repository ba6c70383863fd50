#include "blocked/format.h"

#include "blocked_kernel.h"

namespace blockbloom {
namespace blocked {

void AppendTrailer(int num_probes, std::string* dst) {
  const char trailer[kTrailerSize] = {
      static_cast<char>(num_probes),    // reserved:3 = 0, k:5
      static_cast<char>(kVersionByte),  // version:4, geometry:4
      static_cast<char>(kMarker),
  };
  dst->append(trailer, kTrailerSize);
}

}  // namespace blocked
}  // namespace blockbloom
