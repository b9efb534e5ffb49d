//! Code addresses named in the kernel author's terms, for customop's
//! reports: a sanitizer finding's line and a host crash's site (code of
//! this process), an emulated core's exception, the device check's
//! findings and `run --profile`'s lines (code of a device image).
//!
//! - [`Frame`]: one source frame (function, file, line), the one type of
//!   both resolvers; a stack of them is always innermost first.
//! - [`is_authors_file`]: the one rule for which source files are the
//!   kernel author's rather than the product's, the system's, Rust's or
//!   the build's generated ones (every report charges an address to the
//!   author's frame by it).
//! - [`process`]: the frames of an address mapped in this process
//!   (`dladdr`, then the object's debug information).
//! - [`Lines`]: the frames of an address of a device image (its DWARF,
//!   else its ELF symbol).

mod authors;
mod dwarf;
mod frame;
mod image;
pub mod process;

pub use authors::{is_authors_file, GENERATED_DIR, PRODUCT_HEADERS, PRODUCT_HEADER_FILES};
pub use frame::Frame;
pub use image::{Lines, UnreadableDebugInfo};
