// Where a launch's time goes: per stream, the time inside cuLaunchKernel and
// the host time between two consecutive launches on the stream (p10/p50/p90),
// printed when the process exits. The runtime loads the driver with dlopen and
// dlsym, so the shim also answers dlsym("cuLaunchKernel") with its own wrapper;
// programs linked against libcuda (cust) reach the wrapper through the loader.
//
//   gcc -O2 -shared -fPIC -o launch_shim.so launch_shim.c -ldl     # here
//   LD_PRELOAD=$PWD/launch_shim.so .gpu-bundle/benches/launch_and_bandwidth   # GPU machine
//
// The shim's own clock reads are in both launchers' figures alike (about
// 40 ns on an H200 machine). Used for benches/NOTES.md, "The tracked launch
// path against bare cust".
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef int CUresult;
typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
void *dlvsym(void *, const char *, const char *);
static launch_fn real;
#define CAP 400000
struct slot { void *stream; unsigned long n; double last_exit; float *inside, *outside; unsigned long n_out; };
static struct slot slots[8];
static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static CUresult timed(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, void *stream, void **params, void **extra) {
    if (!real) real = (launch_fn)dlsym(RTLD_NEXT, "cuLaunchKernel");
    struct slot *s = slots;
    while (s < slots + 7 && s->stream && s->stream != stream) s++;
    if (!s->stream) { s->stream = stream; s->inside = malloc(CAP * sizeof(float)); s->outside = malloc(CAP * sizeof(float)); }
    double t0 = now_ns();
    if (s->n && s->n_out < CAP) s->outside[s->n_out++] = (float)(t0 - s->last_exit);
    CUresult r = real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
    double t1 = now_ns();
    if (s->n < CAP) s->inside[s->n] = (float)(t1 - t0);
    s->n++;
    s->last_exit = t1;
    return r;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
    return timed(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym;
void *dlsym(void *handle, const char *name) {
    if (!real_dlsym) {
        real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!real_dlsym) real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    }
    if (strcmp(name, "cuLaunchKernel") == 0 && handle != RTLD_NEXT) {
        if (!real) real = (launch_fn)real_dlsym(handle, name);
        return (void *)cuLaunchKernel;
    }
    return real_dlsym(handle, name);
}
static int cmp(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return (x > y) - (x < y); }
static float pct(float *v, unsigned long n, double p) { return n ? v[(unsigned long)(p * (n - 1))] : 0; }
__attribute__((destructor)) static void report(void) {
    for (struct slot *s = slots; s < slots + 8 && s->stream; s++) {
        unsigned long n = s->n < CAP ? s->n : CAP;
        if (n < 1000) continue;
        qsort(s->inside, n, sizeof(float), cmp);
        qsort(s->outside, s->n_out, sizeof(float), cmp);
        fprintf(stderr, "launch-shim: stream %p: %lu launches; inside cuLaunchKernel p10/p50/p90 %.0f/%.0f/%.0f ns; outside (host code between launches) p10/p50/p90 %.0f/%.0f/%.0f ns\n",
                s->stream, s->n, pct(s->inside, n, .1), pct(s->inside, n, .5), pct(s->inside, n, .9),
                pct(s->outside, s->n_out, .1), pct(s->outside, s->n_out, .5), pct(s->outside, s->n_out, .9));
    }
}
