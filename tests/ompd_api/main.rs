//! The OMPD library driven by a debugger of our own: this test starts a C program
//! (`tests/ompd/api.c`) that stops itself (SIGSTOP) inside an explicit task, reads its memory
//! with `process_vm_readv` and finds symbols with `nm`, as a debugger's callbacks would, and
//! calls every entry of `libompd` on it, the error paths included, checking the answers
//! against what the program printed from the OpenMP API where it stopped.

#[path = "../common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{clean_env, lib, profile_dir};
use ompd::types::{Address, Callbacks, FrameInfo, Rc, Size, ThreadContext, TypeSizes, scope, thread_id};
use ompd::{ParallelH, Space, TaskH, ThreadH};

/// The stopped program, as the callbacks see it.
struct Inferior {
    pid: i32,
    symbols: HashMap<String, u64>,
    /// Answer every read with an error (the callback-failure path).
    fail_reads: bool,
}

/// Symbol values of `file` (`nm`, dynamic symbols with `dynamic`), moved to `base`.
fn symbols(file: &Path, dynamic: bool, base: u64, into: &mut HashMap<String, u64>) {
    let mut c = Command::new("nm");
    if dynamic {
        c.arg("-D");
    }
    let out = c.arg("--defined-only").arg(file).output().expect("nm");
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let [v, _, name] = f[..]
            && let Ok(v) = u64::from_str_radix(v, 16)
        {
            let name = name.split('@').next().unwrap_or(name);
            into.entry(name.to_string()).or_insert(base + v);
        }
    }
}

/// Where `file` is loaded in `pid` (its mapping at file offset 0).
fn load_base(pid: i32, file: &Path) -> u64 {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let file = file.canonicalize().unwrap();
    maps.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let path = f.get(5)?;
            (Path::new(path).canonicalize().ok()? == file && f[2] == "00000000")
                .then(|| u64::from_str_radix(f[0].split('-').next()?, 16).ok())
                .flatten()
        })
        .unwrap_or_else(|| panic!("{} is not mapped in {pid}", file.display()))
}

fn ctx(c: *mut c_void) -> &'static Inferior {
    // SAFETY: the library passes back the context the test gave it: an `Inferior` that
    // outlives every call.
    unsafe { &*(c as *const Inferior) }
}

unsafe extern "C" fn sizes(_c: *mut c_void, s: *mut TypeSizes) -> Rc {
    // SAFETY: the library passes a place for the sizes.
    unsafe {
        s.write(TypeSizes {
            sizeof_char: 1,
            sizeof_short: 2,
            sizeof_int: 4,
            sizeof_long: 8,
            sizeof_long_long: 8,
            sizeof_pointer: 8,
        })
    };
    Rc::Ok
}

unsafe extern "C" fn symbol(
    c: *mut c_void,
    _t: *mut ThreadContext,
    name: *const c_char,
    out: *mut Address,
    _file: *const c_char,
) -> Rc {
    // SAFETY: the library passes a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    match ctx(c).symbols.get(name.as_ref()) {
        // SAFETY: the library passes a place for the address.
        Some(&a) => unsafe {
            out.write(Address { segment: 0, address: a });
            Rc::Ok
        },
        None => Rc::Error,
    }
}

unsafe extern "C" fn read(
    c: *mut c_void,
    _t: *mut ThreadContext,
    a: *const Address,
    n: Size,
    buf: *mut c_void,
) -> Rc {
    let inf = ctx(c);
    if inf.fail_reads {
        return Rc::Error;
    }
    // SAFETY: the library passes an address and a buffer of `n` bytes.
    let addr = unsafe { (*a).address };
    let local = libc::iovec { iov_base: buf, iov_len: n as usize };
    let remote = libc::iovec { iov_base: addr as *mut c_void, iov_len: n as usize };
    // SAFETY: one local and one remote vector, as process_vm_readv takes them.
    let got = unsafe { libc::process_vm_readv(inf.pid, &local, 1, &remote, 1, 0) };
    if got == n as isize { Rc::Ok } else { Rc::Error }
}

unsafe extern "C" fn read_string(
    c: *mut c_void,
    t: *mut ThreadContext,
    a: *const Address,
    n: Size,
    buf: *mut c_void,
) -> Rc {
    // A byte at a time up to the NUL (a string may end just before unmapped memory).
    // SAFETY: as in `read`.
    let base = unsafe { (*a).address };
    for i in 0..n {
        let at = Address { segment: 0, address: base + i };
        // SAFETY: one byte of the caller's buffer.
        let b = unsafe { (buf as *mut u8).add(i as usize) };
        // SAFETY: as in `read`.
        if unsafe { read(c, t, &at, 1, b as *mut c_void) } != Rc::Ok {
            return Rc::Error;
        }
        // SAFETY: just written.
        if unsafe { *b } == 0 {
            return Rc::Ok;
        }
    }
    Rc::Ok
}

fn callbacks() -> Callbacks {
    Callbacks {
        alloc_memory: None,
        free_memory: None,
        print_string: None,
        sizeof_type: Some(sizes),
        symbol_addr_lookup: Some(symbol),
        read_memory: Some(read),
        write_memory: None,
        read_string: Some(read_string),
        device_to_host: None,
        host_to_device: None,
        get_thread_context_for_thread_id: None,
    }
}

/// The stopped program; killed when dropped.
struct Stopped {
    child: std::process::Child,
    expect: HashMap<String, i64>,
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Stopped {
    let out = profile_dir().join("ompd-tests");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join("api");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ompd/api.c");
    common::clang(&src, &exe, &["-fopenmp", "-g", "-O0", "-Wall"]);
    let mut c = Command::new(&exe);
    clean_env(&mut c);
    let child = c
        .env("LD_LIBRARY_PATH", &lib().dir)
        .env("OMP_DEBUG", "enabled")
        .env("OMP_NUM_THREADS", "2")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed and waited for when dropped, whatever happens next.
    let mut stopped = Stopped { child, expect: HashMap::new() };
    let mut line = String::new();
    BufReader::new(stopped.child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    stopped.expect = line
        .strip_prefix("expect ")
        .unwrap_or_else(|| panic!("{line}"))
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect();
    // Until the whole process is stopped.
    let pid = stopped.child.id();
    for _ in 0..5000 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        if stat.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('T')) {
            return stopped;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    panic!("the program did not stop");
}

fn inferior(pid: i32, exe: &Path) -> Inferior {
    let mut symbols_map = HashMap::new();
    symbols(&lib().so, true, load_base(pid, &lib().so), &mut symbols_map);
    symbols(exe, false, load_base(pid, exe), &mut symbols_map);
    Inferior { pid, symbols: symbols_map, fail_reads: false }
}

fn ok(rc: Rc, what: &str) {
    assert_eq!(rc, Rc::Ok, "{what}");
}

/// The numeric ICV `name` at `handle` of `sc`: its id and value (or the error).
fn icv(space: *mut Space, name: &str) -> (u64, c_int) {
    let mut cur = 0;
    loop {
        let (mut next, mut n, mut sc, mut more) = (0u64, std::ptr::null(), 0, 0);
        ok(ompd::ompd_enumerate_icvs(space, cur, &mut next, &mut n, &mut sc, &mut more), "enumerate_icvs");
        // SAFETY: the library gives NUL-terminated names.
        if unsafe { CStr::from_ptr(n) }.to_str().unwrap() == name {
            return (next, sc);
        }
        assert_ne!(more, 0, "no ICV {name}");
        cur = next;
    }
}

fn get_icv(h: *mut c_void, sc: c_int, id: u64) -> Result<i64, Rc> {
    let mut v = 0;
    match ompd::ompd_get_icv_from_scope(h, sc, id, &mut v) {
        Rc::Ok => Ok(v),
        e => Err(e),
    }
}

#[test]
fn every_entry_on_a_stopped_program() {
    let stopped = start();
    let pid = stopped.child.id() as i32;
    let exe: PathBuf = profile_dir().join("ompd-tests/api");
    let mut inf = inferior(pid, &exe);
    let cx = &mut inf as *mut Inferior as *mut c_void;
    let e = &stopped.expect;

    // Versions and initialisation.
    let cb = callbacks();
    assert_eq!(unsafe_init(1, &cb), Rc::Unsupported, "an API version before OMPD's");
    ok(unsafe_init(ompd::API_VERSION, &cb), "initialize");
    let mut v = 0;
    ok(ompd::ompd_get_api_version(&mut v), "api version");
    assert_eq!(v, ompd::API_VERSION);
    let mut s: *const c_char = std::ptr::null();
    ok(ompd::ompd_get_version_string(&mut s), "version string");
    // SAFETY: a NUL-terminated static string.
    assert!(unsafe { CStr::from_ptr(s) }.to_str().unwrap().starts_with("oxiomp OMPD"));
    assert_eq!(ompd::ompd_get_api_version(std::ptr::null_mut()), Rc::BadInput);

    // The process: refused without our runtime's table, and when reads fail.
    let mut none = Inferior { pid, symbols: HashMap::new(), fail_reads: false };
    let mut space: *mut Space = std::ptr::null_mut();
    let r = ompd::ompd_process_initialize(&mut none as *mut Inferior as *mut c_void, &mut space);
    assert_eq!(r, Rc::Incompatible, "a process without oxiomp");
    inf.fail_reads = true;
    assert_ne!(ompd::ompd_process_initialize(cx, &mut space), Rc::Ok, "unreadable memory");
    inf.fail_reads = false;
    assert_eq!(ompd::ompd_process_initialize(std::ptr::null_mut(), &mut space), Rc::BadInput);
    ok(ompd::ompd_process_initialize(cx, &mut space), "process_initialize");
    let mut dev: *mut Space = std::ptr::null_mut();
    let r = ompd::ompd_device_initialize(space, cx, 0, 0, std::ptr::null_mut(), &mut dev);
    assert_eq!(r, Rc::Unsupported);
    ok(ompd::ompd_get_omp_version(space, &mut v), "omp version");
    assert_eq!(v, 202011);
    ok(ompd::ompd_get_omp_version_string(space, &mut s), "omp version string");

    // States.
    let (mut cur, mut names) = (0x102i64, Vec::new());
    loop {
        let (mut next, mut n, mut more) = (0i64, std::ptr::null(), 0i64);
        ok(ompd::ompd_enumerate_states(space, cur, &mut next, &mut n, &mut more), "enumerate_states");
        // SAFETY: a NUL-terminated static string.
        names.push((next, unsafe { CStr::from_ptr(n) }.to_string_lossy().into_owned()));
        if more == 0 {
            break;
        }
        cur = next;
    }
    assert_eq!(names.len(), 22);
    assert!(names.contains(&(0x041, "ompt_state_wait_lock".to_string())));
    assert_eq!(ompd::ompd_enumerate_states(space, 0x7777, &mut v, &mut s, &mut v), Rc::BadInput);

    // Threads: every LWP of the program is an OpenMP thread (the initial thread, a worker).
    let tid = e["tid"];
    let mut th: *mut ThreadH = std::ptr::null_mut();
    let lwps: Vec<u64> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().parse().unwrap())
        .collect();
    assert!(lwps.len() >= 2);
    for lwp in &lwps {
        let mut h: *mut ThreadH = std::ptr::null_mut();
        let r = ompd::ompd_get_thread_handle(
            space,
            thread_id::LWP,
            8,
            lwp as *const u64 as *const c_void,
            &mut h,
        );
        ok(r, &format!("thread handle of LWP {lwp} of {lwps:?}"));
        let mut back = 0u64;
        ok(ompd::ompd_get_thread_id(h, thread_id::LWP, 8, &mut back as *mut u64 as *mut c_void), "thread id");
        assert_eq!(back, *lwp);
        let (mut state, mut wait) = (0i64, 0u64);
        ok(ompd::ompd_get_state(h, &mut state, &mut wait), "state");
        assert!(names.iter().any(|(v, _)| *v == state), "state {state:#x}");
        ok(ompd::ompd_rel_thread_handle(h), "release");
    }
    let tid32 = tid as u32;
    let r = ompd::ompd_get_thread_handle(
        space,
        thread_id::LWP,
        4,
        &tid32 as *const u32 as *const c_void,
        &mut th,
    );
    ok(r, "thread handle from a 4-byte LWP id");
    let unknown = 1u64 << 40;
    let r = ompd::ompd_get_thread_handle(
        space,
        thread_id::LWP,
        8,
        &unknown as *const u64 as *const c_void,
        &mut th,
    );
    assert_eq!(r, Rc::Unavailable, "no such thread");
    let r =
        ompd::ompd_get_thread_handle(space, thread_id::LWP, 3, &tid as *const i64 as *const c_void, &mut th);
    assert_eq!(r, Rc::BadInput, "a 3-byte id");
    let r = ompd::ompd_get_thread_handle(space, 7, 8, &tid as *const i64 as *const c_void, &mut th);
    assert_eq!(r, Rc::Unsupported, "an id kind OMPD does not define");
    ok(
        ompd::ompd_get_thread_handle(space, thread_id::LWP, 8, &tid as *const i64 as *const c_void, &mut th),
        "me",
    );
    // Its pthread_t leads back to it.
    let mut pt = 0u64;
    ok(ompd::ompd_get_thread_id(th, thread_id::PTHREAD, 8, &mut pt as *mut u64 as *mut c_void), "pthread id");
    assert_eq!(Some(pt), e.get("pthread").map(|&p| p as u64));
    let mut th3: *mut ThreadH = std::ptr::null_mut();
    let r = ompd::ompd_get_thread_handle(
        space,
        thread_id::PTHREAD,
        8,
        &pt as *const u64 as *const c_void,
        &mut th3,
    );
    ok(r, "thread handle from a pthread_t");
    let mut cmp = 9;
    ok(ompd::ompd_thread_handle_compare(th, th3, &mut cmp), "compare");
    assert_eq!(cmp, 0, "the same thread");
    ok(ompd::ompd_rel_thread_handle(th3), "release");
    let (mut state, mut wait) = (0i64, 0u64);
    ok(ompd::ompd_get_state(th, &mut state, &mut wait), "state");
    assert_eq!((state, wait), (0x001, 0), "the stopped thread works in a parallel region");
    ok(ompd::ompd_thread_handle_compare(th, th, &mut cmp), "compare");
    assert_eq!(cmp, 0);
    for (name, want) in
        [("thread-num-var", "thread-num-var"), ("nthreads-var", "nthreads-var"), ("dyn-var", "dyn-var")]
    {
        let (id, sc) = icv(space, name);
        assert_eq!(sc, scope::THREAD);
        assert_eq!(get_icv(th as *mut c_void, sc, id), Ok(e[want]), "{name}");
    }

    // The region: level 1 of 2 threads, enclosed by the initial thread's (level 0), which
    // nothing encloses.
    let mut par: *mut ParallelH = std::ptr::null_mut();
    ok(ompd::ompd_get_curr_parallel_handle(th, &mut par), "current parallel");
    for name in ["levels-var", "active-levels-var", "team-size-var"] {
        let (id, sc) = icv(space, name);
        assert_eq!(sc, scope::PARALLEL);
        assert_eq!(get_icv(par as *mut c_void, sc, id), Ok(e[name]), "{name}");
        // At another scope's handle: refused.
        assert_eq!(get_icv(th as *mut c_void, scope::THREAD, id), Err(Rc::BadInput), "{name} at a thread");
    }
    let mut outer: *mut ParallelH = std::ptr::null_mut();
    ok(ompd::ompd_get_enclosing_parallel_handle(par, &mut outer), "enclosing");
    let (levels, _) = icv(space, "levels-var");
    assert_eq!(get_icv(outer as *mut c_void, scope::PARALLEL, levels), Ok(0));
    let mut none_p: *mut ParallelH = std::ptr::null_mut();
    assert_eq!(ompd::ompd_get_enclosing_parallel_handle(outer, &mut none_p), Rc::Unavailable);
    ok(ompd::ompd_parallel_handle_compare(par, outer, &mut cmp), "compare");
    assert_ne!(cmp, 0);
    let me = e["thread-num-var"] as c_int;
    let mut th2: *mut ThreadH = std::ptr::null_mut();
    ok(ompd::ompd_get_thread_in_parallel(par, me, &mut th2), "thread in parallel");
    ok(ompd::ompd_thread_handle_compare(th, th2, &mut cmp), "compare");
    assert_eq!(cmp, 0, "thread {me} of the region is the stopped thread");
    assert_eq!(ompd::ompd_get_thread_in_parallel(par, 2, &mut th2), Rc::BadInput, "only 2 threads");
    assert_eq!(ompd::ompd_get_thread_in_parallel(par, -1, &mut th2), Rc::BadInput);

    // Tasks: the explicit task, generated by the single thread's implicit task.
    let mut task: *mut TaskH = std::ptr::null_mut();
    ok(ompd::ompd_get_curr_task_handle(th, &mut task), "current task");
    for name in ["implicit-task-var", "final-task-var", "max-active-levels-var"] {
        let (id, sc) = icv(space, name);
        assert_eq!(sc, scope::TASK);
        assert_eq!(get_icv(task as *mut c_void, sc, id), Ok(e[name]), "{name}");
    }
    let (sched, sc) = icv(space, "run-sched-var");
    let mut text: *const c_char = std::ptr::null();
    ok(ompd::ompd_get_icv_string_from_scope(task as *mut c_void, sc, sched, &mut text), "run-sched-var");
    // SAFETY: a NUL-terminated string the library made.
    assert_eq!(unsafe { CStr::from_ptr(text) }.to_str().unwrap(), "dynamic,7");
    assert_eq!(get_icv(task as *mut c_void, sc, sched), Err(Rc::Incompatible), "a string ICV as a number");
    assert_eq!(get_icv(task as *mut c_void, sc, 9999), Err(Rc::BadInput), "no such ICV");
    for name in ["debug-var", "num-procs-var"] {
        let (id, sc) = icv(space, name);
        assert_eq!(sc, scope::ADDRESS_SPACE);
        assert_eq!(get_icv(space as *mut c_void, sc, id), Ok(e[name]), "{name}");
    }
    let mut entry = Address::default();
    ok(ompd::ompd_get_task_function(task, &mut entry), "task function");
    let task_entry = inf.symbols.iter().find(|(k, _)| k.starts_with(".omp_task_entry.")).map(|(_, v)| *v);
    assert_eq!(Some(entry.address), task_entry, "the task's entry");
    let (mut exit, mut enter) = (FrameInfo::default(), FrameInfo::default());
    ok(ompd::ompd_get_task_frame(task, &mut exit, &mut enter), "frames");
    assert_ne!(exit.frame_address.address, 0, "a running task has an exit frame");
    assert_eq!(exit.frame_flag, 0x20, "ompt_frame_runtime | ompt_frame_framepointer");
    let mut gen_: *mut TaskH = std::ptr::null_mut();
    ok(ompd::ompd_get_generating_task_handle(task, &mut gen_), "generating");
    let (implicit, _) = icv(space, "implicit-task-var");
    assert_eq!(get_icv(gen_ as *mut c_void, scope::TASK, implicit), Ok(1), "generated by an implicit task");
    let mut sched_t: *mut TaskH = std::ptr::null_mut();
    ok(ompd::ompd_get_scheduling_task_handle(task, &mut sched_t), "scheduling");
    ok(ompd::ompd_task_handle_compare(task, gen_, &mut cmp), "compare");
    assert_ne!(cmp, 0);
    let mut tpar: *mut ParallelH = std::ptr::null_mut();
    ok(ompd::ompd_get_task_parallel_handle(task, &mut tpar), "task's parallel");
    ok(ompd::ompd_parallel_handle_compare(par, tpar, &mut cmp), "compare");
    assert_eq!(cmp, 0, "the task is of the region");
    let mut itask: *mut TaskH = std::ptr::null_mut();
    ok(ompd::ompd_get_task_in_parallel(par, 0, &mut itask), "implicit task 0");
    assert_eq!(get_icv(itask as *mut c_void, scope::TASK, implicit), Ok(1));
    assert_eq!(ompd::ompd_get_task_in_parallel(par, 5, &mut itask), Rc::BadInput);
    let (mut word, mut at) = (0i64, Address::default());
    ok(ompd::ompd_get_tool_data(task as *mut c_void, scope::TASK, &mut word, &mut at), "tool data");
    assert_ne!(at.address, 0);

    // The display, then handles released: a released handle is stale.
    let mut vars: *const *const c_char = std::ptr::null();
    ok(ompd::ompd_get_display_control_vars(space, &mut vars), "display");
    let mut lines = Vec::new();
    // SAFETY: a NULL-terminated list of NUL-terminated strings.
    unsafe {
        let mut i = 0;
        while !(*vars.add(i)).is_null() {
            lines.push(CStr::from_ptr(*vars.add(i)).to_string_lossy().into_owned());
            i += 1;
        }
    }
    assert_eq!(lines.first().map(String::as_str), Some("OPENMP DISPLAY ENVIRONMENT BEGIN"));
    assert!(lines.iter().any(|l| l.contains("OMP_DEBUG='enabled'")), "{lines:?}");
    // SAFETY: the list the library gave.
    ok(unsafe { ompd::ompd_rel_display_control_vars(&mut vars) }, "release display");
    ok(ompd::ompd_rel_task_handle(task), "release task");
    assert_eq!(ompd::ompd_get_task_function(task, &mut entry), Rc::StaleHandle);
    assert_eq!(ompd::ompd_rel_task_handle(task), Rc::StaleHandle);
    assert_eq!(ompd::ompd_get_task_function(std::ptr::null_mut(), &mut entry), Rc::BadInput);
    // A handle of another kind.
    assert_eq!(ompd::ompd_get_task_function(th as *mut TaskH, &mut entry), Rc::BadInput);
    for h in [gen_, sched_t, itask] {
        ok(ompd::ompd_rel_task_handle(h), "release task");
    }
    for p in [par, outer, tpar] {
        ok(ompd::ompd_rel_parallel_handle(p), "release parallel");
    }
    for t in [th, th2] {
        ok(ompd::ompd_rel_thread_handle(t), "release thread");
    }
    ok(ompd::ompd_rel_address_space_handle(space), "release space");
    assert_eq!(ompd::ompd_get_omp_version(space, &mut v), Rc::StaleHandle);
    ok(ompd::ompd_finalize(), "finalize");
    assert_eq!(ompd::ompd_finalize(), Rc::Unsupported, "finalized twice");
}

fn unsafe_init(version: i64, cb: &Callbacks) -> Rc {
    // SAFETY: the table outlives the library's use (the test's end).
    unsafe { ompd::ompd_initialize(version, cb) }
}
