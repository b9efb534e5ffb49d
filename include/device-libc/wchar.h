// <wchar.h> on the device: only mbstate_t, which libc++'s character
// traits name (std::char_traits<char>::state_type). No wide-character
// functions: the device's libc++ is built without wide characters.
#pragma once

typedef struct {
    unsigned __opaque[2];
} mbstate_t;
