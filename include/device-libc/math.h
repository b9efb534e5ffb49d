// What the device library defines of <math.h>: C99's math functions from
// the device's C math library (the `neuron-libm` crate, libm/: musl's libm
// ported to Rust, which the simulator also computes a kernel's calls with),
// in double and float (`sinf`, ...), with the classification macros as
// compiler builtins. Floats are soft-float on
// the Q7's configuration: a float call is cheaper than a double one.
#pragma once

#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VAL (__builtin_huge_val())
#define HUGE_VALF (__builtin_huge_valf())
#define M_E 2.71828182845904523536
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_SQRT2 1.41421356237309504880
// fpclassify's results (libc++'s std::fpclassify passes them to the
// compiler's builtin).
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
#define FP_ILOGB0 (-2147483647 - 1)
#define FP_ILOGBNAN (-2147483647 - 1)
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf(x)
#define isfinite(x) __builtin_isfinite(x)
#define signbit(x) __builtin_signbit(x)

#ifdef __cplusplus
extern "C" {
#endif
double acos(double x);
float acosf(float x);
double acosh(double x);
float acoshf(float x);
double asin(double x);
float asinf(float x);
double asinh(double x);
float asinhf(float x);
double atan(double x);
float atanf(float x);
double cbrt(double x);
float cbrtf(float x);
double ceil(double x);
float ceilf(float x);
double cos(double x);
float cosf(float x);
double cosh(double x);
float coshf(float x);
double erf(double x);
float erff(float x);
double erfc(double x);
float erfcf(float x);
double exp(double x);
float expf(float x);
double exp2(double x);
float exp2f(float x);
double expm1(double x);
float expm1f(float x);
double fabs(double x);
float fabsf(float x);
double floor(double x);
float floorf(float x);
double log(double x);
float logf(float x);
double log10(double x);
float log10f(float x);
double log1p(double x);
float log1pf(float x);
double log2(double x);
float log2f(float x);
double rint(double x);
float rintf(float x);
double round(double x);
float roundf(float x);
double sin(double x);
float sinf(float x);
double sinh(double x);
float sinhf(float x);
double sqrt(double x);
float sqrtf(float x);
double tan(double x);
float tanf(float x);
double tanh(double x);
float tanhf(float x);
double tgamma(double x);
float tgammaf(float x);
double trunc(double x);
float truncf(float x);
double atan2(double x, double y);
float atan2f(float x, float y);
double copysign(double x, double y);
float copysignf(float x, float y);
double fdim(double x, double y);
float fdimf(float x, float y);
double fmax(double x, double y);
float fmaxf(float x, float y);
double fmin(double x, double y);
float fminf(float x, float y);
double fmod(double x, double y);
float fmodf(float x, float y);
double hypot(double x, double y);
float hypotf(float x, float y);
double pow(double x, double y);
float powf(float x, float y);
double fma(double x, double y, double z);
float fmaf(float x, float y, float z);
double ldexp(double x, int e);
float ldexpf(float x, int e);
// The rest, so that every std:: function of libc++'s <cmath> links.
double atanh(double x);
float atanhf(float x);
double lgamma(double x);
float lgammaf(float x);
double frexp(double x, int* e);
float frexpf(float x, int* e);
double modf(double x, double* i);
float modff(float x, float* i);
double remquo(double x, double y, int* q);
float remquof(float x, float y, int* q);
double remainder(double x, double y);
float remainderf(float x, float y);
double nearbyint(double x);
float nearbyintf(float x);
long lrint(double x);
long lrintf(float x);
long long llrint(double x);
long long llrintf(float x);
long lround(double x);
long lroundf(float x);
long long llround(double x);
long long llroundf(float x);
double scalbn(double x, int n);
float scalbnf(float x, int n);
double scalbln(double x, long n);
float scalblnf(float x, long n);
int ilogb(double x);
int ilogbf(float x);
double logb(double x);
float logbf(float x);
double nextafter(double x, double y);
float nextafterf(float x, float y);
double nexttoward(double x, long double y);
float nexttowardf(float x, long double y);
double nan(const char* tag);
float nanf(const char* tag);
// Beyond C99, as glibc declares them for g++ (the simulator's compiler):
// sincos (which g++ calls for a sin and a cos of one argument), exp10,
// lgamma_r, C23's roundeven and fmaximum/fminimum(_num), and the Bessel
// functions.
void sincos(double x, double* s, double* c);
void sincosf(float x, float* s, float* c);
double exp10(double x);
float exp10f(float x);
double lgamma_r(double x, int* sign);
float lgammaf_r(float x, int* sign);
double roundeven(double x);
float roundevenf(float x);
double fmaximum(double x, double y);
float fmaximumf(float x, float y);
double fminimum(double x, double y);
float fminimumf(float x, float y);
double fmaximum_num(double x, double y);
float fmaximum_numf(float x, float y);
double fminimum_num(double x, double y);
float fminimum_numf(float x, float y);
double j0(double x);
float j0f(float x);
double j1(double x);
float j1f(float x);
double jn(int n, double x);
float jnf(int n, float x);
double y0(double x);
float y0f(float x);
double y1(double x);
float y1f(float x);
double yn(int n, double x);
float ynf(int n, float x);
#ifdef __cplusplus
}
#endif

#if __SIZEOF_LONG_DOUBLE__ == __SIZEOF_DOUBLE__
// `long double` is `double` on the Xtensa core: the `l` functions are the
// double ones (libc++'s <complex> and <cmath> name some).
static inline long double acosl(long double x) { return acos((double)x); }
static inline long double acoshl(long double x) { return acosh((double)x); }
static inline long double asinl(long double x) { return asin((double)x); }
static inline long double asinhl(long double x) { return asinh((double)x); }
static inline long double atanl(long double x) { return atan((double)x); }
static inline long double cbrtl(long double x) { return cbrt((double)x); }
static inline long double ceill(long double x) { return ceil((double)x); }
static inline long double cosl(long double x) { return cos((double)x); }
static inline long double coshl(long double x) { return cosh((double)x); }
static inline long double erfl(long double x) { return erf((double)x); }
static inline long double erfcl(long double x) { return erfc((double)x); }
static inline long double expl(long double x) { return exp((double)x); }
static inline long double exp2l(long double x) { return exp2((double)x); }
static inline long double expm1l(long double x) { return expm1((double)x); }
static inline long double fabsl(long double x) { return fabs((double)x); }
static inline long double floorl(long double x) { return floor((double)x); }
static inline long double logl(long double x) { return log((double)x); }
static inline long double log10l(long double x) { return log10((double)x); }
static inline long double log1pl(long double x) { return log1p((double)x); }
static inline long double log2l(long double x) { return log2((double)x); }
static inline long double rintl(long double x) { return rint((double)x); }
static inline long double roundl(long double x) { return round((double)x); }
static inline long double sinl(long double x) { return sin((double)x); }
static inline long double sinhl(long double x) { return sinh((double)x); }
static inline long double sqrtl(long double x) { return sqrt((double)x); }
static inline long double tanl(long double x) { return tan((double)x); }
static inline long double tanhl(long double x) { return tanh((double)x); }
static inline long double tgammal(long double x) { return tgamma((double)x); }
static inline long double truncl(long double x) { return trunc((double)x); }
static inline long double atan2l(long double x, long double y) { return atan2((double)x, (double)y); }
static inline long double copysignl(long double x, long double y) { return copysign((double)x, (double)y); }
static inline long double fdiml(long double x, long double y) { return fdim((double)x, (double)y); }
static inline long double fmaxl(long double x, long double y) { return fmax((double)x, (double)y); }
static inline long double fminl(long double x, long double y) { return fmin((double)x, (double)y); }
static inline long double fmodl(long double x, long double y) { return fmod((double)x, (double)y); }
static inline long double hypotl(long double x, long double y) { return hypot((double)x, (double)y); }
static inline long double powl(long double x, long double y) { return pow((double)x, (double)y); }
static inline long double fmal(long double x, long double y, long double z) { return fma((double)x, (double)y, (double)z); }
static inline long double ldexpl(long double x, int e) { return ldexp((double)x, e); }
static inline long double atanhl(long double x) { return atanh((double)x); }
static inline long double lgammal(long double x) { return lgamma((double)x); }
static inline long double frexpl(long double x, int* e) { return frexp((double)x, e); }
static inline long double remquol(long double x, long double y, int* q) { return remquo((double)x, (double)y, q); }
static inline long double remainderl(long double x, long double y) { return remainder((double)x, (double)y); }
static inline long double nearbyintl(long double x) { return nearbyint((double)x); }
static inline long double scalbnl(long double x, int n) { return scalbn((double)x, n); }
static inline long double scalblnl(long double x, long n) { return scalbln((double)x, n); }
static inline long double logbl(long double x) { return logb((double)x); }
static inline long double nextafterl(long double x, long double y) { return nextafter((double)x, (double)y); }
#endif
