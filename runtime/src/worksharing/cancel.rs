//! Cancellation of parallel regions and worksharing constructs (`OMP_CANCELLATION`).
//!
//! A cancelled worksharing construct is recorded by its number (every implicit task counts the
//! worksharing constructs it starts, and all members count alike), so the request never has to
//! be cleared: the next construct has another number. A parallel cancellation lasts until the
//! team's next fork.

/// The `kind` argument of `__kmpc_cancel` and friends.
pub const PARALLEL: i32 = 1;
pub const LOOP: i32 = 2;
pub const SECTIONS: i32 = 3;
pub const TASKGROUP: i32 = 4;
