//! Kernel-facing data access (SPEC §8): the coherency enforcer, the index
//! math of the per-element accessor, the stream accessors over a pool of
//! data-RAM buffers, and the TCM accessor and pool.

pub mod coherency;
pub mod coherency_table;
pub mod index;
pub mod state;
pub mod stream;
pub mod stream_pool;
pub mod tcm;

pub use coherency::{AccessorKind, Admission, CoherencePolicy, CoherencyEnforcer};
pub use state::AccessState;
pub use stream::{StreamGrant, StreamMode, StreamState};
