// <time.h> on the device: the types libc++'s <ctime> and <chrono> name.
// No clock and no calendar functions: the core has no time of day.
#pragma once

typedef long long time_t;
typedef long clock_t;
