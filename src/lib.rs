//! C-ABI surface (filled below).
#![no_std]
