// What the device library defines of <stdlib.h>: the core's libc heap
// (64-byte aligned blocks; null when full) and abort (the abort report).
#pragma once

#include <stddef.h>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1

#ifdef __cplusplus
extern "C" {
#endif
void* malloc(size_t n);
void* calloc(size_t n, size_t size);
void* realloc(void* p, size_t n);
void free(void* p);
__attribute__((noreturn)) void abort(void);
#ifdef __cplusplus
}
#endif

static inline int abs(int v) { return v < 0 ? -v : v; }
static inline long labs(long v) { return v < 0 ? -v : v; }
static inline long long llabs(long long v) { return v < 0 ? -v : v; }

// div/ldiv/lldiv as C's (libc++'s <cstdlib> names them; inline, as abs).
typedef struct {
    int quot, rem;
} div_t;
typedef struct {
    long quot, rem;
} ldiv_t;
typedef struct {
    long long quot, rem;
} lldiv_t;
static inline div_t div(int a, int b) {
    div_t r = {a / b, a % b};
    return r;
}
static inline ldiv_t ldiv(long a, long b) {
    ldiv_t r = {a / b, a % b};
    return r;
}
static inline lldiv_t lldiv(long long a, long long b) {
    lldiv_t r = {a / b, a % b};
    return r;
}
