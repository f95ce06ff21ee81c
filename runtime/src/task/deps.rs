//! Task dependences between sibling tasks, matched by address.
//!
//! Each generating task keeps a map from address to the *frontier* of accesses to it:
//! `last`, the node every later access must follow (the last `out`, or a join node), and an
//! open *group* of concurrent accessors of one kind (`in`, `inoutset` or `mutexinoutset`),
//! each of which follows `last`:
//!
//! | new access | predecessors | frontier afterwards |
//! |---|---|---|
//! | `out`/`inout` | the group if open, else `last` | last = new, no group |
//! | group kind K, group of K open | `last` | group += new |
//! | group kind K, other group open | join J (after the group) | last = J, group = {new} of K |
//! | group kind K, no group | `last` | group = {new} of K |
//! | `omp_all_memory` | every frontier, and the previous all-memory node | map cleared; new addresses start after it |
//!
//! So a chain of 1e6 `inout` tasks on one address holds one map reference at a time, and a
//! group of n readers followed by an `out` costs n edges once. Completed group members are
//! pruned as the group grows, so a map holds at most the live accessors plus one node per
//! address.
//!
//! # Release protocol
//! The edges follow `sync/release.rs` (its proof and loom models are there): an edge p -> s is
//! added under p's successor lock only while p has not completed, a node waits for a
//! registration guard plus its edges, and the last of those to be released makes it ready.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::NonNull;
use std::sync::Arc;

use super::descriptor::{Kind, Task, alloc_node, release_ref};
use crate::sync::atomic::{AtomicBool, Ordering};
use oxiomp_instrument::ToolEvent;

/// Dependence kinds (the flag byte of `kmp_depend_info`).
pub mod kind {
    pub const IN: u8 = 0x01;
    pub const OUT: u8 = 0x02;
    pub const MUTEXINOUTSET: u8 = 0x04;
    pub const INOUTSET: u8 = 0x08;
    pub const ALL_MEMORY: u8 = 0x80;
}

/// One dependence: an address and the access kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    pub addr: usize,
    pub kind: Access,
}

impl Dep {
    /// The dependence a `kmp_depend_info` record says, if any. `omp_all_memory` has two
    /// encodings: the all-memory flag (address 0), and address `(size_t)-1` whatever the flags
    /// (the older one, still emitted); a record of address 0 without that flag names nothing
    /// (a null pointer's storage: ignored, as libomp does).
    pub fn from_record(addr: usize, flags: u8) -> Option<Dep> {
        let kind = if addr == usize::MAX { Access::AllMemory } else { Access::from_flags(flags) };
        (addr != 0 || kind == Access::AllMemory).then_some(Dep { addr, kind })
    }
}

/// The access a task makes to an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    In,
    Out,
    /// `inout` (the in and out flags; clang passes `out` so too): to the runtime the same
    /// access as `out`, told to a tool as the flags say.
    InOut,
    InOutSet,
    MutexInOutSet,
    AllMemory,
}

impl Access {
    /// From `kmp_depend_info.flags`; unknown bits count as `out` (the safe choice).
    pub fn from_flags(f: u8) -> Access {
        if f & kind::ALL_MEMORY != 0 {
            Access::AllMemory
        } else if f == kind::IN | kind::OUT {
            Access::InOut
        } else if f & kind::OUT != 0 {
            Access::Out
        } else if f == kind::IN {
            Access::In
        } else if f == kind::INOUTSET {
            Access::InOutSet
        } else if f == kind::MUTEXINOUTSET {
            Access::MutexInOutSet
        } else {
            Access::Out
        }
    }
}

/// The lock of one `mutexinoutset` group: members run one at a time.
#[derive(Default)]
pub(crate) struct MutexSlot {
    pub(crate) addr: usize,
    held: AtomicBool,
}

impl MutexSlot {
    fn try_lock(&self) -> bool {
        // Acquire/Release: the holder's writes are visible to the next holder.
        !self.held.swap(true, Ordering::Acquire)
    }
    fn unlock(&self) {
        self.held.store(false, Ordering::Release);
    }
}

/// Tries to take all of a task's mutexinoutset locks (sorted by address, all or none).
pub(crate) fn lock_all(ms: &[Arc<MutexSlot>]) -> bool {
    for (i, m) in ms.iter().enumerate() {
        if !m.try_lock() {
            for m in &ms[..i] {
                m.unlock();
            }
            return false;
        }
    }
    true
}

pub(crate) fn unlock_all(ms: &[Arc<MutexSlot>]) {
    for m in ms {
        m.unlock();
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum GroupKind {
    In,
    Set,
    Mutex,
}

/// A map slot's reference to a node (holds one of the node's `refs`).
struct NodeRef(*const Task);

impl NodeRef {
    fn new(t: &Task) -> NodeRef {
        // Relaxed: the map's owner holds another reference while taking this one.
        t.rest.refs.fetch_add(1, Ordering::Relaxed);
        NodeRef(t)
    }
    fn get(&self) -> &Task {
        // SAFETY: the reference held by this slot keeps the node alive.
        unsafe { &*self.0 }
    }
}

impl Clone for NodeRef {
    fn clone(&self) -> NodeRef {
        NodeRef::new(self.get())
    }
}

impl Drop for NodeRef {
    fn drop(&mut self) {
        release_ref(self.0);
    }
}

struct Entry {
    last: Option<NodeRef>,
    group: Vec<NodeRef>,
    group_kind: GroupKind,
    mutex: Option<Arc<MutexSlot>>,
    /// While `last` is a join node and a tool listens: the members of the group it closed, so
    /// that a tool is told the edges from them a task following the join gets (the join is
    /// the runtime's own node, which a tool does not see). Empty otherwise.
    joined: Vec<NodeRef>,
}

impl Entry {
    /// Adds the edge that makes `t` follow `last` (if any) through the entry's address `addr`;
    /// a tool is told the edges from the members of the group a join `last` stands for.
    fn follow_last(&self, t: &Task, addr: usize) {
        if let Some(l) = &self.last {
            add_edge(l.get(), t, addr);
            tell_through_join(&self.joined, t, addr);
        }
    }

    /// Adds the edges that make `t` follow every access to the entry's address `addr` so far:
    /// the open group, or the last node when no group is open.
    fn follow(&self, t: &Task, addr: usize) {
        if self.group.is_empty() {
            self.follow_last(t, addr);
        } else {
            for g in &self.group {
                add_edge(g.get(), t, addr);
            }
        }
    }
}

/// A multiply-shift hasher for addresses.
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = ((n as u64) ^ (n as u64 >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The dependence frontier of one generating task's children.
#[derive(Default)]
pub(crate) struct DepMap {
    entries: HashMap<usize, Entry, BuildHasherDefault<AddrHasher>>,
    /// The last `omp_all_memory` node: addresses first seen later start after it.
    all: Option<NodeRef>,
}

/// The address a tool is told for an edge through `omp_all_memory` (clang's own encoding of
/// it).
pub const ALL_MEMORY_ADDR: usize = usize::MAX;

/// Adds the edge `pred -> succ`, through the storage at `addr` ([`ALL_MEMORY_ADDR`]: through
/// `omp_all_memory`), unless `pred` has completed.
fn add_edge(pred: &Task, succ: &Task, addr: usize) {
    if !std::ptr::eq(pred, succ)
        && pred.rest.dep.add_edge(NonNull::from(succ), &succ.rest.dep)
        && pred.head.kind == Kind::Explicit
    {
        // A tool is told of the dependences between tasks, and of those of the calling
        // thread's `taskwait depend` (not of the runtime's own nodes).
        tell_edge(pred, succ, addr);
    }
}

/// Tells a tool that `succ` (a task, or the calling thread's `taskwait depend`) follows task
/// `pred` through `addr`.
fn tell_edge(pred: &Task, succ: &Task, addr: usize) {
    let src = pred as *const Task as usize;
    match succ.head.kind {
        Kind::Explicit => oxiomp_instrument::tool(|| ToolEvent::TaskDependence {
            src,
            sink: succ as *const Task as usize,
            addr,
        }),
        Kind::Waiter => oxiomp_instrument::tool(|| ToolEvent::WaitDependence { src, addr }),
        _ => {}
    }
}

/// Task `t` (or a `taskwait depend`'s waiter) follows a join node that stands for the group
/// `members` (empty: `t` follows no join, or no tool listens), through `addr`: a tool is told
/// an edge from each member that has not completed, as if `t` followed it directly.
fn tell_through_join(members: &[NodeRef], t: &Task, addr: usize) {
    for m in members {
        let m = m.get();
        if !m.rest.dep.is_complete() && m.head.kind == Kind::Explicit {
            tell_edge(m, t, addr);
        }
    }
}

/// Drops completed members when a group grows large.
fn prune(group: &mut Vec<NodeRef>) {
    if group.len() >= 64 && group.len().is_power_of_two() {
        group.retain(|n| !n.get().rest.dep.is_complete());
    }
}

impl DepMap {
    /// Registers `t`'s dependences (addresses deduplicated by the caller) and adds its edges.
    /// Returns the mutexinoutset locks the task must hold, sorted by address.
    pub(crate) fn register(&mut self, t: &Task, deps: &[Dep]) -> Vec<Arc<MutexSlot>> {
        t.rest.dep_tracked.store(true, Ordering::Relaxed); // Relaxed: read by the same thread later.
        let mut mutexes = Vec::new();
        if deps.iter().any(|d| d.kind == Access::AllMemory) {
            self.register_all(t);
            return mutexes;
        }
        for d in deps {
            let all = &self.all;
            let e = self.entries.entry(d.addr).or_insert_with(|| Entry {
                last: all.clone(),
                group: Vec::new(),
                group_kind: GroupKind::In,
                mutex: None,
                joined: Vec::new(),
            });
            let gk = match d.kind {
                Access::In => GroupKind::In,
                Access::InOutSet => GroupKind::Set,
                Access::MutexInOutSet => GroupKind::Mutex,
                Access::Out | Access::InOut | Access::AllMemory => {
                    // out / inout: after everything so far.
                    e.follow(t, d.addr);
                    e.group.clear();
                    e.joined.clear();
                    e.last = Some(NodeRef::new(t));
                    e.mutex = None;
                    continue;
                }
            };
            if !e.group.is_empty() && e.group_kind != gk {
                // Close the open group behind a join node.
                let j = alloc_node(Kind::Join, t.head.team);
                let told = oxiomp_instrument::enabled();
                e.joined.clear();
                for g in e.group.drain(..) {
                    add_edge(g.get(), j, d.addr);
                    if told {
                        e.joined.push(g);
                    }
                }
                e.last = Some(NodeRef::new(j));
                e.mutex = None;
                finish_registration(j);
                // The map's reference is the join's only one now; its own is dropped when it
                // completes (in `finish_registration` or by its last predecessor).
            }
            e.follow_last(t, d.addr);
            e.group_kind = gk;
            prune(&mut e.group);
            e.group.push(NodeRef::new(t));
            if gk == GroupKind::Mutex {
                let m =
                    e.mutex.get_or_insert_with(|| Arc::new(MutexSlot { addr: d.addr, ..Default::default() }));
                mutexes.push(m.clone());
            }
        }
        mutexes.sort_by_key(|m| m.addr);
        mutexes
    }

    fn register_all(&mut self, t: &Task) {
        for (addr, e) in self.entries.drain() {
            e.follow(t, addr);
        }
        if let Some(a) = &self.all {
            add_edge(a.get(), t, ALL_MEMORY_ADDR);
        }
        self.all = Some(NodeRef::new(t));
    }

    /// Adds the edges a `taskwait depend(...)` waiter needs, without changing the frontier.
    pub(crate) fn watch(&self, w: &Task, deps: &[Dep]) {
        let all_memory = deps.iter().any(|d| d.kind == Access::AllMemory);
        let add_frontier = |e: &Entry, addr: usize, reader: bool| {
            if reader && e.group_kind == GroupKind::In && !e.group.is_empty() {
                // A reader only waits for what the open readers wait for.
                e.follow_last(w, addr);
            } else {
                e.follow(w, addr);
            }
        };
        if all_memory {
            for (&addr, e) in &self.entries {
                add_frontier(e, addr, false);
            }
        } else {
            for d in deps {
                match self.entries.get(&d.addr) {
                    Some(e) => add_frontier(e, d.addr, d.kind == Access::In),
                    None => {
                        if let Some(a) = &self.all {
                            add_edge(a.get(), w, ALL_MEMORY_ADDR);
                        }
                    }
                }
            }
        }
        if let Some(a) = &self.all {
            add_edge(a.get(), w, ALL_MEMORY_ADDR);
        }
    }
}

/// Drops the registration guard of `t`; true if `t` is ready now (the caller then makes it
/// ready). For join nodes, completes them instead when ready.
pub(crate) fn finish_registration(t: &Task) -> bool {
    if !t.rest.dep.arrive() {
        return false;
    }
    if t.head.kind == Kind::Join {
        complete_join(t);
        return false;
    }
    true
}

/// A join node's predecessors are all complete: release its successors, drop its own
/// reference.
fn complete_join(j: &Task) {
    let p: *const Task = j;
    release_successors(j, &mut |s| super::make_ready(s));
    release_ref(p);
}

/// Marks `t` complete for dependence purposes and releases its successors: each one whose
/// last predecessor this was is handed to `ready`.
pub(crate) fn release_successors(t: &Task, ready: &mut dyn FnMut(&'static Task)) {
    for p in t.rest.dep.complete() {
        // SAFETY: a successor cannot complete (nor be freed) before this edge is released.
        let s: &'static Task = unsafe { &*p.as_ptr() };
        if s.rest.dep.arrive() {
            match s.head.kind {
                Kind::Join => complete_join(s),
                _ => ready(s),
            }
        }
    }
}

/// Merges duplicate addresses of a dependence list: a task that names an address twice
/// accesses it with the stronger kind (different kinds combine to `out`).
pub(crate) fn merge(deps: &mut Vec<Dep>) {
    if deps.len() < 2 {
        return;
    }
    deps.sort_by_key(|d| d.addr);
    let mut out: usize = 0;
    for i in 0..deps.len() {
        if out > 0 && deps[out - 1].addr == deps[i].addr {
            let (a, b) = (deps[out - 1].kind, deps[i].kind);
            if a != b {
                deps[out - 1].kind = if a == Access::AllMemory || b == Access::AllMemory {
                    Access::AllMemory
                } else {
                    Access::Out
                };
            }
        } else {
            deps[out] = deps[i];
            out += 1;
        }
    }
    deps.truncate(out);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn merge_dedups() {
        let mut v = vec![
            Dep { addr: 8, kind: Access::In },
            Dep { addr: 4, kind: Access::In },
            Dep { addr: 8, kind: Access::In },
            Dep { addr: 4, kind: Access::MutexInOutSet },
        ];
        merge(&mut v);
        assert_eq!(v, vec![Dep { addr: 4, kind: Access::Out }, Dep { addr: 8, kind: Access::In }]);
    }

    #[test]
    fn flags() {
        assert_eq!(Access::from_flags(1), Access::In);
        assert_eq!(Access::from_flags(3), Access::InOut);
        assert_eq!(Access::from_flags(2), Access::Out);
        assert_eq!(Access::from_flags(4), Access::MutexInOutSet);
        assert_eq!(Access::from_flags(8), Access::InOutSet);
        assert_eq!(Access::from_flags(0x80), Access::AllMemory);
        let all = Some(Dep { addr: usize::MAX, kind: Access::AllMemory });
        assert_eq!(Dep::from_record(usize::MAX, kind::OUT), all);
        assert_eq!(Dep::from_record(usize::MAX, kind::IN | kind::OUT), all);
        assert_eq!(Dep::from_record(0, kind::ALL_MEMORY), Some(Dep { addr: 0, kind: Access::AllMemory }));
        assert_eq!(Dep::from_record(0, kind::OUT), None);
        assert_eq!(Dep::from_record(64, kind::IN), Some(Dep { addr: 64, kind: Access::In }));
    }
}
