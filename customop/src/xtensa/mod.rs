//! The device side of `customop build`: the same vendor-style sources
//! compiled for the Xtensa cores with an open toolchain ([`toolchain`]).

pub mod toolchain;
