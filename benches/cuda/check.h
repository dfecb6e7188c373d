// What the CUDA C helpers of the benchmarks share.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

// Exits with the call and the runtime's message when a CUDA runtime call fails.
#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_)); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

// The same for a driver API call.
#define CHECK_CU(call)                                           \
    do {                                                         \
        CUresult err_ = (call);                                  \
        if (err_ != CUDA_SUCCESS) {                              \
            const char* msg_ = "";                               \
            cuGetErrorString(err_, &msg_);                       \
            fprintf(stderr, "%s failed: %s\n", #call, msg_);     \
            exit(1);                                             \
        }                                                        \
    } while (0)
