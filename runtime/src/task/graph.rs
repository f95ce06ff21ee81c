//! The dependence graph as libomp lets tests and tools inspect it: a task's node
//! (`kmp_base_depnode_t`, whose first field is its successor list) and its successors (a
//! `kmp_depnode_list_t` of nodes). Not a path the engine takes: the views are made on request.
//!
//! A node view is the same pointer for a task block for the life of the process, so that a
//! successor list of one task can be compared with the node of another. Join nodes (which the
//! engine places after a group of `in`, `inoutset` or `mutexinoutset` accessors, see `deps`)
//! are not tasks: a successor list shows the tasks after them instead, as if every member of
//! the group had an edge to each.

use std::collections::HashMap;
use std::ptr::NonNull;

use super::descriptor::{Kind, Task};

/// libomp's `kmp_base_depnode_t`, as far as its layout is public: the successor list first.
#[repr(C)]
pub struct DepnodeView {
    pub successors: *mut DepnodeList,
}

/// libomp's `kmp_depnode_list_t`.
#[repr(C)]
pub struct DepnodeList {
    pub node: *mut DepnodeView,
    pub next: *mut DepnodeList,
}

/// A task block's view, and every successor list handed out for it (kept: a caller may still
/// hold an earlier one).
struct Entry {
    view: DepnodeView,
    lists: Vec<Box<[DepnodeList]>>,
}

// SAFETY: an entry's pointers lead only to other entries of the same map and to its own list
// cells; they are written and followed only under the map's lock (or by the program, which
// reads what a call returned as libomp's would be read).
unsafe impl Send for Entry {}

/// Views by task block address. Boxed entries: their addresses are the pointers handed out.
static VIEWS: parking_lot::Mutex<Option<HashMap<usize, Box<Entry>>>> = parking_lot::Mutex::new(None);

fn entry(views: &mut HashMap<usize, Box<Entry>>, t: &Task) -> *mut Entry {
    let e = views.entry(t as *const Task as usize).or_insert_with(|| {
        Box::new(Entry { view: DepnodeView { successors: std::ptr::null_mut() }, lists: Vec::new() })
    });
    &mut **e
}

/// The node view of `t`.
pub fn depnode(t: &Task) -> *mut DepnodeView {
    let mut views = VIEWS.lock();
    let e = entry(views.get_or_insert_with(HashMap::new), t);
    // SAFETY: `e` points into a boxed entry of the map, which is never removed; the lock is held.
    unsafe { &raw mut (*e).view }
}

/// The successors `t` has now, as a list of node views (null when it has none).
pub fn successors(t: &Task) -> *mut DepnodeList {
    let mut tasks = Vec::new();
    collect(t, &mut tasks);
    let mut views = VIEWS.lock();
    let views = views.get_or_insert_with(HashMap::new);
    let nodes: Vec<*mut DepnodeView> = tasks
        .iter()
        // SAFETY: as in `depnode`; each task waits for `t` (see `collect`).
        .map(|s| unsafe { &raw mut (*entry(views, s.as_ref())).view })
        .collect();
    let mut cells: Box<[DepnodeList]> =
        nodes.iter().map(|&node| DepnodeList { node, next: std::ptr::null_mut() }).collect();
    for i in 1..cells.len() {
        let next: *mut DepnodeList = &mut cells[i];
        cells[i - 1].next = next;
    }
    let head = cells.first_mut().map_or(std::ptr::null_mut(), |c| c as *mut DepnodeList);
    let e = entry(views, t);
    // SAFETY: as in `depnode`; the cells move into the entry with their heap addresses.
    unsafe {
        (*e).view.successors = head;
        (*e).lists.push(cells);
    }
    head
}

/// The tasks after `t`: its successors, with each join node replaced by the tasks after it;
/// each once.
fn collect(t: &Task, out: &mut Vec<NonNull<Task>>) {
    for s in t.rest.dep.successors() {
        // SAFETY: a successor stays allocated while it waits for `t`, which has not released
        // it (it is still in `t`'s list).
        let st = unsafe { s.as_ref() };
        match st.head.kind {
            Kind::Join => collect(st, out),
            Kind::Waiter => {}
            _ if !out.contains(&s) => out.push(s),
            _ => {}
        }
    }
}
