#pragma once
#include <fftw3.h>

// The build's version ("fftw-3.3.10-sse2-avx"): the wisdom file records it. A function, since
// Swift does not import an extern array of unknown size.
static inline const char *ribbit_fftwf_version(void) { return fftwf_version; }
