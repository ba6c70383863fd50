// The blocked Bloom filter's kernel lives in simd/blocked_kernel.h (the bottom
// layer, shared with every Highway target). This header forwards to it for
// code in src/ that includes it by its old name.
#ifndef BLOCKBLOOM_BLOCKED_KERNEL_H_
#define BLOCKBLOOM_BLOCKED_KERNEL_H_

#include "blocked_kernel.h"  // IWYU pragma: export

#endif  // BLOCKBLOOM_BLOCKED_KERNEL_H_
