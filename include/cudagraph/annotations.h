/* annotations.h - marks for cudagraph-tidy in the analyzed code.
 *
 * CUDAGRAPH_CAPTURE_SAFE before a function declares it safe to run under
 * CUDA graph capture: cudagraph-tidy does not follow calls into it, so what
 * it calls is not reported through it. Use it for helpers that test the
 * capture status themselves, or whose forbidden calls never run while a
 * capture is open. The macro expands to nothing for compilers other than
 * clang (nvcc, gcc), so the header costs nothing in the build.
 *
 *   #include <cudagraph/annotations.h>
 *   CUDAGRAPH_CAPTURE_SAFE void sync_if_not_capturing(cudaStream_t s);
 *
 * The check option CaptureSafeFunctions does the same without touching the
 * code (globs of qualified names).
 */
#ifndef CUDAGRAPH_ANNOTATIONS_H
#define CUDAGRAPH_ANNOTATIONS_H

#if defined(__clang__)
#define CUDAGRAPH_CAPTURE_SAFE __attribute__((annotate("cudagraph::capture_safe")))
#else
#define CUDAGRAPH_CAPTURE_SAFE
#endif

#endif /* CUDAGRAPH_ANNOTATIONS_H */
