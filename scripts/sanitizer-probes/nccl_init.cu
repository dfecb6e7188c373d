// What NCCL's own initialisation reports under a tool, with no other code: makes
// one communicator per visible GPU in one process (ncclCommInitAll, as the
// runtime's Communicator::all does), runs one all-reduce on them (NCCL
// connects its transports at the first collective, and that is where it
// enables peer access itself), then destroys them. Peer access between
// the GPUs is enabled first, as the runtime's peer copies do before NCCL runs
// in the same process: NCCL then finds it enabled, and its own check of
// cudaDeviceEnablePeerAccess's result (cudaGetLastError, from NCCL's threads)
// reports cudaErrorPeerAccessAlreadyEnabled, which NCCL handles. The library is the one
// the runtime loads: `libnccl.so.2` as dlopen finds it, else the path given as
// the first argument (scripts/sanitize.sh passes the nvidia.nccl Python
// package's, the runtime's last resort), or only GPU_NCCL_LIBRARY when set.
//
// scripts/sanitize.sh runs it under each tool: the reports it makes come from
// inside NCCL and are set apart, by their exact text, in the binaries that use
// NCCL.
//
//   nvcc -O2 -o nccl-init-probe nccl_init.cu -ldl && ./nccl-init-probe
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <vector>

typedef int (*CommInitAll)(void **comms, int count, const int *devices);
typedef int (*CommDestroy)(void *comm);
typedef int (*Group)(void);
// ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream)
typedef int (*AllReduce)(const void *, void *, size_t, int, int, void *, cudaStream_t);
const int NCCL_FLOAT32 = 7, NCCL_SUM = 0;

static void *open_nccl(const char *fallback) {
    const char *chosen = getenv("GPU_NCCL_LIBRARY");
    if (chosen != nullptr && *chosen != '\0') {
        struct stat info;
        static char path[4096];
        if (stat(chosen, &info) == 0 && S_ISDIR(info.st_mode)) {
            snprintf(path, sizeof path, "%s/libnccl.so.2", chosen);
            chosen = path;
        }
        return dlopen(chosen, RTLD_NOW);
    }
    void *library = dlopen("libnccl.so.2", RTLD_NOW);
    if (library == nullptr && fallback != nullptr) library = dlopen(fallback, RTLD_NOW);
    return library;
}

int main(int argc, char **argv) {
    setenv("NCCL_NVLS_ENABLE", "0", 1); // as every communicator of the runtime
    void *library = open_nccl(argc > 1 ? argv[1] : nullptr);
    if (library == nullptr) {
        fprintf(stderr, "nccl-init probe: libnccl.so.2 could not be loaded: %s\n", dlerror());
        return 1;
    }
    auto init_all = (CommInitAll)dlsym(library, "ncclCommInitAll");
    auto destroy = (CommDestroy)dlsym(library, "ncclCommDestroy");
    if (init_all == nullptr || destroy == nullptr) {
        fprintf(stderr, "nccl-init probe: ncclCommInitAll or ncclCommDestroy missing\n");
        return 1;
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        fprintf(stderr, "nccl-init probe: no CUDA device\n");
        return 1;
    }
    for (int i = 0; i < count; i++) {
        for (int j = 0; j < count; j++) {
            int can = 0;
            if (i == j || cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess || !can) continue;
            cudaSetDevice(i);
            cudaDeviceEnablePeerAccess(j, 0);
        }
    }
    cudaSetDevice(0);
    std::vector<int> devices(count);
    for (int i = 0; i < count; i++) devices[i] = i;
    std::vector<void *> comms(count);
    int status = init_all(comms.data(), count, devices.data());
    if (status != 0) {
        fprintf(stderr, "nccl-init probe: ncclCommInitAll returned %d\n", status);
        return 1;
    }
    auto group_start = (Group)dlsym(library, "ncclGroupStart");
    auto group_end = (Group)dlsym(library, "ncclGroupEnd");
    auto all_reduce = (AllReduce)dlsym(library, "ncclAllReduce");
    if (group_start == nullptr || group_end == nullptr || all_reduce == nullptr) {
        fprintf(stderr, "nccl-init probe: ncclGroupStart, ncclGroupEnd or ncclAllReduce missing\n");
        return 1;
    }
    const size_t elements = 1 << 16;
    std::vector<float *> buffers(count);
    for (int i = 0; i < count; i++) {
        cudaSetDevice(i);
        cudaMalloc(&buffers[i], elements * sizeof(float));
        cudaMemset(buffers[i], 0, elements * sizeof(float));
    }
    group_start();
    for (int i = 0; i < count; i++) {
        cudaSetDevice(i);
        all_reduce(buffers[i], buffers[i], elements, NCCL_FLOAT32, NCCL_SUM, comms[i], 0);
    }
    status = group_end();
    for (int i = 0; i < count; i++) {
        cudaSetDevice(i);
        if (cudaDeviceSynchronize() != cudaSuccess || status != 0) {
            fprintf(stderr, "nccl-init probe: the all-reduce failed (ncclGroupEnd %d)\n", status);
            return 1;
        }
        cudaFree(buffers[i]);
    }
    for (void *comm : comms) destroy(comm);
    Dl_info where;
    dladdr((void *)init_all, &where);
    printf("nccl-init probe: ncclCommInitAll and one all-reduce over %d device(s) of %s\n", count, where.dli_fname);
    return 0;
}
