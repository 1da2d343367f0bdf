/*===--- HarnessControl.h - the injection library's C interface -*- C -*-===*\
|*                                                                          *|
|* The probe (C++ or Python through ctypes) talks to the injection library  *|
|* through these functions: it names the region that later reports belong   *|
|* to, writes its verdict into the same report stream, and asks what the    *|
|* injection saw in the region. The driver loads the injection with dlopen, *|
|* so callers look the functions up on the library named by                 *|
|* CUDA_INJECTION64_PATH (dlopen with RTLD_NOLOAD) instead of linking it.   *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/

#ifndef CUDAGRAPH_HARNESS_HARNESSCONTROL_H
#define CUDAGRAPH_HARNESS_HARNESSCONTROL_H

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAGRAPH_HARNESS_CONTROL_VERSION 1

typedef struct CudagraphRegionStats {
  unsigned CaptureErrors;   /* Root causes seen in the region. */
  unsigned Escapes;         /* Work that missed the capture. */
  unsigned FrameworkErrors; /* Exceptions thrown during capture. */
  int RootCauseResult;      /* Error code of the first root cause. */
  char RootCauseApi[128];   /* API of the first root cause. */
  char EscapeApi[128];      /* API of the first escape. */
} CudagraphRegionStats;

/* CUDAGRAPH_HARNESS_CONTROL_VERSION of the loaded library. */
int cudagraphHarnessControlVersion(void);
/* Names the region later reports belong to; NULL or "" ends it. */
void cudagraphHarnessSetRegion(const char *Name);
/* Writes one JSON object (no newline) as a report line. */
void cudagraphHarnessWrite(const char *JsonObject);
/* Fills Out with what the current region saw; returns 0 on success. */
int cudagraphHarnessRegionStats(CudagraphRegionStats *Out);

#ifdef __cplusplus
}
#endif

#endif /* CUDAGRAPH_HARNESS_HARNESSCONTROL_H */
