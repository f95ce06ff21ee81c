//! State the members of a worksharing construct share (a doacross loop's, the compiler
//! layer's): the team keeps a list of it by construct number (`Team::shared_join`), each
//! member holds a reference while it is in the construct.

use std::any::Any;
use std::sync::Arc;

/// What a construct's shared state is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    Doacross,
    /// The compiler layer's own (gcc's task reductions and scratch memory).
    Abi,
}

/// A construct's shared state, counted by its users.
pub type SharedState = Arc<dyn Any + Send + Sync>;

/// One entry of a team's list of shared construct state.
pub(crate) struct SharedEntry {
    pub(crate) key: u32,
    pub(crate) what: Shared,
    pub(crate) state: SharedState,
    /// Members still in the construct.
    pub(crate) users: u32,
}
