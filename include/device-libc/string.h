// What the device library defines of <string.h> (Rust's
// compiler_builtins: the same routines the runtime copies with).
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
void* memcpy(void* dst, const void* src, size_t n);
void* memmove(void* dst, const void* src, size_t n);
void* memset(void* dst, int c, size_t n);
int memcmp(const void* a, const void* b, size_t n);
size_t strlen(const char* s);
#ifdef __cplusplus
}
#endif
