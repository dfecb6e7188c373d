// What the sanitizer probes share: a driver call that fails ends the probe
// with exit status 1, naming the probe, the call and the driver's error.
// Each probe defines PROBE, its name in messages, before including this.
#pragma once
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PROBE
#error "define PROBE (the probe's name in its messages) before including check.h"
#endif

#define CHECK(call)                                                            \
    do {                                                                       \
        CUresult status_ = (call);                                             \
        if (status_ != CUDA_SUCCESS) {                                         \
            const char *text_ = "?";                                           \
            cuGetErrorName(status_, &text_);                                   \
            fprintf(stderr, PROBE " probe: %s failed: %s\n", #call, text_);    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)
