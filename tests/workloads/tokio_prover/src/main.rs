// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//! tokio_prover: a Rust/tokio prover-shaped workload on a simulated GPU that
//! injects known, measured delays into the GPU idle gaps and writes the
//! ground truth (schema gaptrace.truth/1, as tests/workloads/prover_sim does).
//!
//! Shaped like an async proving daemon: the GPU driver is a tokio task that
//! takes a `tokio::sync::Mutex` job tracker once per partition and makes the
//! GPU call through `spawn_blocking`; the blocking-pool thread launches the
//! kernels and waits for them.  Threads:
//!   tokio-worker  the runtime's two workers (the driver and holder tasks)
//!   gpu-call      the one blocking-pool thread: unit_begin, launches,
//!                 waits for the device, unit_end (the gaps' critical thread)
//!   gpu-sim       simulated device 0: runs ops back to back, fires gpu_op
//!   heap-prep     fragments the heap for the next trim while the GPU runs
//!
//! Scenarios (every gap between consecutive units is injected; D =
//! --inject-ms scaled by 0.75, 1.0 or 1.25 from gap to gap):
//!   amutex    a holder task takes the tracker's tokio Mutex during the
//!             unit and keeps it across an .await into the gap; when the
//!             driver task comes for it, the holder computes D ms before
//!             releasing it: the waits are hand-offs (the task parks, the
//!             runtime parks its thread), followed to the holder's CPU -> cpu
//!   trim      the driver task calls malloc_trim(0) on heap-prep's
//!             fragmented heap while it holds a std::sync::Mutex  -> allocator
//!   timer     tokio::time::sleep(D) in the driver task: the runtime parks in
//!             epoll_wait until its timeout, nobody wakes it       -> sleep
//!   blocking  D ms of CPU work in the spawn_blocking GPU call before its
//!             launches (the pool thread woke from its idle Condvar) -> cpu
//!
//! Every window is bracketed by CLOCK_MONOTONIC reads and by the measuring
//! thread's run_delay (/proc/thread-self/schedstat): amount_ns is the window
//! less the time that thread waited for a CPU.  run_delay_ns is the wait for
//! a CPU of every thread on the gap's hand-off path, each over the gap:
//! gpu-sim's (from the unit's last op's end to its wakeup of gpu-call, a late
//! wakeup for an earlier op included),
//! gpu-call's (from its wait for the device to its next launch), the driver
//! task's thread's (from its await of the GPU call to the next one, when the
//! task resumed on the same thread), each runtime worker's wait for a CPU
//! after an unpark inside the gap (tokio's park/unpark hooks) and the
//! measuring thread's, the largest reading per thread; gaptrace
//! counts each as scheduler time where it is on the path.  Each injection
//! names the thread that did the work ("tid"); the truth's worker_tid is
//! gpu-call, the thread that launches, so the gap's chain must reach any other.

use std::collections::VecDeque;
use std::ffi::CString;
use std::fmt::Write as _;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

extern "C" {
    fn gt_unit_begin(unit: u64);
    fn gt_unit_end(unit: u64);
    fn gt_gpu_launch(device: u32, stream: u32, op: u64);
    fn gt_gpu_op(device: u32, stream: u32, op: u64, start_ns: u64, end_ns: u64);
    fn gt_gpu_name(id: u32, name: *const c_char);
    fn gt_now_ns() -> u64;
    fn gt_sleep_until(ns: u64);
    fn gt_gettid() -> c_int;
    fn gt_name_self(name: *const c_char);
    fn gt_timerslack_min();
    fn gt_pin(last: c_int) -> c_int;
    // glibc, as a prover's allocator calls reach it.
    fn malloc(size: usize) -> *mut u8;
    fn free(p: *mut u8);
    fn malloc_trim(pad: usize) -> c_int;
}

const DEVICE: u32 = 0;
const STREAM: u32 = 7;
const KERNEL_NAME_ID: u32 = 1;
const MS: u64 = 1_000_000;
const POSTPROC_NS: u64 = 100_000;
const TRIM_BLOCK: usize = 64 * 1024; // below glibc's mmap threshold: lands in the heap
const PREP_CHUNK_BLOCKS: usize = 4; // heap-prep re-checks its deadline every 256 KiB
const PREP_MARGIN_NS: u64 = 2 * MS;
// Measured on the 2-core development VM (as prover_sim sizes its rounds):
// ms per MiB of malloc_trim, and of heap-prep's refault of half a round.
const TRIM_MS_PER_MB: f64 = 0.094;
const TRIM_PREP_MS_PER_MB: f64 = 0.23;
const PREP_SHARE: f64 = 0.6;

fn now_ns() -> u64 {
    unsafe { gt_now_ns() }
}

fn gettid() -> i32 {
    unsafe { gt_gettid() }
}

fn name_self(name: &str) {
    let c = CString::new(name).unwrap();
    unsafe { gt_name_self(c.as_ptr()) }
}

/// ns the calling thread spent runnable but not running (schedstat's second field).
fn run_delay() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Application work: no syscalls (vDSO clock), no allocation.
fn spin_for(ns: u64) {
    let end = now_ns() + ns;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while now_ns() < end {
        for _ in 0..256 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        // Kept: the loop is the work (std::hint::black_box is newer than rustc 1.63).
        unsafe { std::ptr::write_volatile(&mut x, x) };
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Amutex,
    Trim,
    Timer,
    Blocking,
}

impl Scenario {
    fn parse(s: &str) -> Option<Scenario> {
        match s {
            "amutex" => Some(Scenario::Amutex),
            "trim" => Some(Scenario::Trim),
            "timer" => Some(Scenario::Timer),
            "blocking" => Some(Scenario::Blocking),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Scenario::Amutex => "amutex",
            Scenario::Trim => "trim",
            Scenario::Timer => "timer",
            Scenario::Blocking => "blocking",
        }
    }
}

struct Opts {
    scenario: Scenario,
    units: u32,
    kernels: u32,
    kernel_ns: u64,
    inject_ns: u64,
    trim_mb: u64,
    truth: Option<String>,
    quiet: bool,
}

struct Injection {
    gap: u32,
    category: &'static str,
    kind: &'static str,
    start_ns: u64,
    end_ns: u64,
    run_delay_ns: u64,
    target_ns: u64,
    bytes: u64,
    tid: i32,
}

struct SimOp {
    id: u64,
    launch_ns: u64,
    unit: u32,
    last: bool, // of its unit
}

#[derive(Default)]
struct GpuState {
    queue: VecDeque<SimOp>,
    outstanding: u32,
    stop: bool,
}

#[derive(Default)]
struct PrepState {
    ready: bool,
    gate_until: u64, // heap-prep may work while now < this
    stop: bool,
    bytes: u64,
}

struct Shared {
    opt: Opts,
    gpu: Mutex<GpuState>,
    gpu_work: Condvar,
    gpu_done: Condvar,
    units_log: Mutex<Vec<(u64, u64)>>,
    // gpu-call's run_delay before its wait for unit u.
    call_rd0: Mutex<Vec<(i32, u64)>>,
    // Per gap: (tid, run-queue ns over the gap) of the threads on its path.
    gap_rd: Mutex<Vec<Vec<(i32, u64)>>>,
    // Runtime workers' wakeups: (tid, unpark time, run-queue ns since park).
    unparks: Mutex<Vec<(i32, u64, u64)>>,
    injections: Mutex<Vec<Injection>>,
    skipped: Mutex<Vec<u32>>,
    // The job tracker a prover's GPU task takes once per partition.
    tracker: tokio::sync::Mutex<u64>,
    // amutex: the driver is about to take the tracker (driver -> holder).
    lock_wanted: tokio::sync::Notify,
    // trim: the std::sync::Mutex held across malloc_trim.
    jobs: Mutex<u64>,
    prep: Mutex<PrepState>,
    prep_cv: Condvar,
    gpu_call_tid: AtomicI32,
    gpusim_tid: AtomicI32,
    prep_tid: AtomicI32,
    runtime_tids: Mutex<Vec<i32>>,
}

impl Shared {
    fn gap_target(&self, gap: u32) -> u64 {
        const PCT: [u64; 3] = [75, 100, 125];
        self.opt.inject_ns * PCT[(gap % 3) as usize] / 100
    }

    /// A thread's run-queue time over (part of) a gap: the largest reading
    /// per thread counts, the windows measured on one thread nest.
    fn add_gap_rd(&self, gap: u32, tid: i32, ns: u64) {
        let mut all = self.gap_rd.lock().unwrap();
        let v = &mut all[gap as usize];
        match v.iter_mut().find(|e| e.0 == tid) {
            Some(e) => e.1 = e.1.max(ns),
            None => v.push((tid, ns)),
        }
    }

    /// Records a window measured on the calling thread: the window less the
    /// run-queue time of that thread inside it.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        gap: u32,
        category: &'static str,
        kind: &'static str,
        start_ns: u64,
        end_ns: u64,
        run_delay_ns: u64,
        target_ns: u64,
        bytes: u64,
        tid: i32,
    ) {
        self.add_gap_rd(gap, tid, run_delay_ns);
        self.injections.lock().unwrap().push(Injection {
            gap,
            category,
            kind,
            start_ns,
            end_ns,
            run_delay_ns,
            target_ns,
            bytes,
            tid,
        });
    }
}

// ---- simulated GPU ----

fn gpu_sim(sh: Arc<Shared>) {
    sh.gpusim_tid.store(gettid(), Ordering::SeqCst);
    unsafe {
        gt_timerslack_min();
        gt_gpu_name(KERNEL_NAME_ID, b"sim_kernel\0".as_ptr() as *const c_char);
    }
    let mut prev_end = 0u64;
    // run_delay when this thread was last on time (before a real sleep): a
    // late wakeup carries over to the ops reported late after it.
    let mut on_time_rd = run_delay();
    loop {
        let op = {
            let mut g = sh.gpu.lock().unwrap();
            while g.queue.is_empty() && !g.stop {
                g = sh.gpu_work.wait(g).unwrap();
            }
            match g.queue.pop_front() {
                Some(op) => op,
                None => break,
            }
        };
        // A device starts a queued kernel at its launch or at the previous
        // one's end, not when this thread gets around to it.
        let start = op.launch_ns.max(prev_end);
        let end = start + sh.opt.kernel_ns;
        if now_ns() < end {
            on_time_rd = run_delay();
        }
        unsafe { gt_sleep_until(end) };
        prev_end = end;
        {
            let mut log = sh.units_log.lock().unwrap();
            let u = &mut log[op.unit as usize];
            if u.0 == 0 {
                u.0 = start;
            }
            u.1 = end;
        }
        unsafe { gt_gpu_op(DEVICE, STREAM, op.id, start, end) };
        // Report first, then release the caller: unit_end follows its ops.
        let mut g = sh.gpu.lock().unwrap();
        g.outstanding -= 1;
        if g.outstanding == 0 {
            sh.gpu_done.notify_all();
        }
        drop(g);
        // The gap starts at the unit's last end: the part of the wait for a
        // CPU that kept this thread from reporting it after then is the gap's.
        if op.last && op.unit + 1 < sh.opt.units {
            let late = now_ns().saturating_sub(end);
            let rd = run_delay().saturating_sub(on_time_rd).min(late);
            sh.add_gap_rd(op.unit, gettid(), rd);
        }
    }
}

/// The GPU call, on the blocking-pool thread: (blocking: D ms of CPU work
/// first), launches, waits for the device, post-processes.
fn gpu_call(sh: &Shared, unit: u32, first_op: u64, pre_cpu_gap: Option<u32>) {
    if sh.gpu_call_tid.load(Ordering::SeqCst) == 0 {
        name_self("gpu-call");
        // Off the runtime workers' CPU (see main).
        unsafe { gt_pin(0) };
        sh.gpu_call_tid.store(gettid(), Ordering::SeqCst);
    }
    if let Some(gap) = pre_cpu_gap {
        let target = sh.gap_target(gap);
        let rd0 = run_delay();
        let start = now_ns();
        spin_for(target);
        let end = now_ns();
        let rd1 = run_delay();
        sh.record(
            gap,
            "cpu",
            "blocking-cpu",
            start,
            end,
            rd1 - rd0,
            target,
            0,
            gettid(),
        );
    }
    if unit > 0 {
        // Only a same-thread reading counts (the pool keeps one thread).
        let (tid0, rd0) = sh.call_rd0.lock().unwrap()[unit as usize - 1];
        if tid0 == gettid() {
            sh.add_gap_rd(unit - 1, tid0, run_delay().saturating_sub(rd0));
        }
    }
    unsafe { gt_unit_begin(unit as u64) };
    let mut first_launch = 0;
    for k in 0..sh.opt.kernels {
        let id = first_op + k as u64;
        unsafe { gt_gpu_launch(DEVICE, STREAM, id) };
        let t = now_ns();
        if k == 0 {
            first_launch = t;
        }
        let mut g = sh.gpu.lock().unwrap();
        g.queue.push_back(SimOp {
            id,
            launch_ns: t,
            unit,
            last: k + 1 == sh.opt.kernels,
        });
        g.outstanding += 1;
        sh.gpu_work.notify_one();
    }
    if sh.opt.scenario == Scenario::Trim {
        // Ops run back to back from the first launch: the device's end is exact.
        let busy_until = first_launch + sh.opt.kernels as u64 * sh.opt.kernel_ns;
        let mut p = sh.prep.lock().unwrap();
        p.gate_until = busy_until - PREP_MARGIN_NS;
        sh.prep_cv.notify_all();
    }
    // Before the wait: the kernel folds in the wait for a CPU after the
    // wakeup, which is in the gap, when the thread runs again.
    sh.call_rd0.lock().unwrap()[unit as usize] = (gettid(), run_delay());
    let mut g = sh.gpu.lock().unwrap();
    while g.outstanding > 0 {
        g = sh.gpu_done.wait(g).unwrap();
    }
    drop(g);
    spin_for(POSTPROC_NS);
    unsafe { gt_unit_end(unit as u64) };
}

// ---- trim: heap-prep and the fragmented heap ----

/// Waits until heap-prep may work: only while the GPU is busy, so that its
/// page faults and frees never fall into a gap.  False when told to stop.
fn prep_gate(sh: &Shared) -> bool {
    let mut p = sh.prep.lock().unwrap();
    loop {
        if p.stop {
            return false;
        }
        if now_ns() < p.gate_until {
            return true;
        }
        p = sh.prep_cv.wait(p).unwrap();
    }
}

fn trim_block() -> *mut u8 {
    let p = unsafe { malloc(TRIM_BLOCK) };
    assert!(!p.is_null(), "heap-prep: malloc");
    // Residency is what the trim pays for: one write per page.
    for o in (0..TRIM_BLOCK).step_by(4096) {
        unsafe { std::ptr::write_volatile(p.add(o), 1) };
    }
    p
}

/// heap-prep: "live" 64 KiB blocks with a freed, resident block between each
/// two.  The first round allocates them all and frees every other one; later
/// rounds refill the holes malloc_trim released (glibc hands the exact fits
/// back), then free the old live half, which become the new holes.
fn heap_prep(sh: Arc<Shared>, half: usize) {
    name_self("heap-prep");
    sh.prep_tid.store(gettid(), Ordering::SeqCst);
    let mut live: Vec<*mut u8> = Vec::with_capacity(half);
    let mut next: Vec<*mut u8> = Vec::with_capacity(2 * half);
    // The first round, before unit 0, on memory never faulted in.
    for _ in 0..2 * half {
        next.push(trim_block());
    }
    for i in 0..half {
        unsafe { free(next[2 * i]) };
        live.push(next[2 * i + 1]);
    }
    next.clear();
    'rounds: loop {
        {
            let mut p = sh.prep.lock().unwrap();
            p.ready = true;
            p.bytes = (2 * half * TRIM_BLOCK) as u64;
            sh.prep_cv.notify_all();
            while p.ready && !p.stop {
                p = sh.prep_cv.wait(p).unwrap();
            }
            if p.stop {
                break;
            }
        }
        while next.len() < half {
            if !prep_gate(&sh) {
                break 'rounds;
            }
            for _ in 0..PREP_CHUNK_BLOCKS.min(half - next.len()) {
                next.push(trim_block());
            }
        }
        for i in (0..half).step_by(8 * PREP_CHUNK_BLOCKS) {
            if !prep_gate(&sh) {
                break 'rounds;
            }
            for j in i..half.min(i + 8 * PREP_CHUNK_BLOCKS) {
                unsafe { free(live[j]) };
                live[j] = next[j];
            }
        }
        next.clear();
    }
    // The run is over: nothing here can fall into a gap any more.
    for p in next.into_iter().chain(live.into_iter()) {
        unsafe { free(p) };
    }
}

/// trim: malloc_trim(0) while the driver holds the jobs lock.
fn trim_gap(sh: &Shared, gap: u32) {
    let bytes = {
        let p = sh.prep.lock().unwrap();
        if !p.ready {
            // Waiting would put heap-prep's page faults into this gap.
            sh.skipped.lock().unwrap().push(gap);
            return;
        }
        p.bytes
    };
    let jobs = sh.jobs.lock().unwrap();
    let rd0 = run_delay();
    let start = now_ns();
    unsafe { malloc_trim(0) };
    let end = now_ns();
    let rd1 = run_delay();
    drop(jobs);
    sh.record(
        gap,
        "allocator",
        "trim",
        start,
        end,
        rd1 - rd0,
        0,
        bytes,
        gettid(),
    );
    let mut p = sh.prep.lock().unwrap();
    p.ready = false;
    p.gate_until = 0;
    sh.prep_cv.notify_all();
}

// ---- the tasks ----

type HolderReq = (u32, tokio::sync::oneshot::Sender<()>);

/// amutex: takes the tracker when asked, keeps it across an .await until the
/// driver comes for it, then computes D ms before releasing it.  Starting
/// the work then, not when the device goes idle, keeps it from competing for
/// a CPU with the threads that end the unit (gpu-sim, gpu-call): their
/// run-queue time is not the holder's and the truth could not explain it.
async fn holder(sh: Arc<Shared>, mut rx: tokio::sync::mpsc::UnboundedReceiver<HolderReq>) {
    while let Some((gap, ack)) = rx.recv().await {
        let guard = sh.tracker.lock().await;
        let _ = ack.send(());
        sh.lock_wanted.notified().await;
        let target = sh.gap_target(gap);
        let rd0 = run_delay();
        let start = now_ns();
        spin_for(target);
        let end = now_ns();
        let rd1 = run_delay();
        drop(guard);
        sh.record(
            gap,
            "cpu",
            "amutex-hold",
            start,
            end,
            rd1 - rd0,
            target,
            0,
            gettid(),
        );
    }
}

/// The GPU driver task: per partition, the GPU call through spawn_blocking,
/// then the gap's injection and the tracker update.
async fn driver(sh: Arc<Shared>, holder_tx: tokio::sync::mpsc::UnboundedSender<HolderReq>) {
    let mut op_id = 1u64;
    let mut prev_rd = (0, 0);
    for u in 0..sh.opt.units {
        let inject = u + 1 < sh.opt.units;
        if inject && sh.opt.scenario == Scenario::Amutex {
            let (tx, rx) = tokio::sync::oneshot::channel();
            holder_tx.send((u, tx)).expect("holder task gone");
            rx.await.expect("holder task gone");
        }
        let pre_cpu = if u > 0 && sh.opt.scenario == Scenario::Blocking {
            Some(u - 1)
        } else {
            None
        };
        if u > 0 {
            let (tid0, rd0) = prev_rd;
            if gettid() == tid0 {
                sh.add_gap_rd(u - 1, tid0, run_delay().saturating_sub(rd0));
            }
        }
        let sh2 = sh.clone();
        let first = op_id;
        prev_rd = (gettid(), run_delay());
        tokio::task::spawn_blocking(move || gpu_call(&sh2, u, first, pre_cpu))
            .await
            .expect("GPU call panicked");
        op_id += sh.opt.kernels as u64;
        if !inject {
            break;
        }
        match sh.opt.scenario {
            Scenario::Trim => trim_gap(&sh, u),
            Scenario::Timer => {
                let target = sh.gap_target(u);
                let (tid0, rd0) = (gettid(), run_delay());
                let start = now_ns();
                tokio::time::sleep(Duration::from_nanos(target)).await;
                let end = now_ns();
                let (tid1, rd1) = (gettid(), run_delay());
                // The task may resume on another worker: only a same-thread
                // reading says how long it waited for a CPU.
                let rd = if tid0 == tid1 { rd1 - rd0 } else { 0 };
                sh.record(u, "sleep", "tokio-sleep", start, end, rd, target, 0, tid1);
            }
            Scenario::Amutex | Scenario::Blocking => {}
        }
        // amutex: the holder has it; the others find it free.
        if sh.opt.scenario == Scenario::Amutex {
            sh.lock_wanted.notify_one();
        }
        *sh.tracker.lock().await += 1;
    }
}

// ---- options and truth ----

fn usage() -> ! {
    eprintln!(
        "Usage: tokio_prover --scenario amutex|trim|timer|blocking [--units N] [--kernels K]\n\
         \x20                   [--kernel-us U] [--inject-ms D] [--trim-mb M] [--truth FILE] [--quiet]\n\
         A Rust/tokio prover-shaped workload on a simulated GPU that injects measured\n\
         delays into the GPU idle gaps and writes the ground truth (gaptrace.truth/1)."
    );
    std::process::exit(2)
}

fn parse_args() -> Opts {
    let mut o = Opts {
        scenario: Scenario::Timer,
        units: 8,
        kernels: 8,
        kernel_ns: 2 * MS,
        inject_ns: 20 * MS,
        trim_mb: 0,
        truth: None,
        quiet: false,
    };
    let mut have_scenario = false;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    let num = |i: usize, lo: u64, hi: u64| -> u64 {
        match args.get(i + 1).and_then(|v| v.parse::<u64>().ok()) {
            Some(v) if v >= lo && v <= hi => v,
            _ => {
                eprintln!("tokio_prover: {} needs an integer {}..{}", args[i], lo, hi);
                std::process::exit(2)
            }
        }
    };
    while i < args.len() {
        match args[i].as_str() {
            "-s" | "--scenario" => {
                o.scenario = args
                    .get(i + 1)
                    .and_then(|s| Scenario::parse(s))
                    .unwrap_or_else(|| usage());
                have_scenario = true;
            }
            "-n" | "--units" => o.units = num(i, 2, 100000) as u32,
            "-k" | "--kernels" => o.kernels = num(i, 1, 4096) as u32,
            "-u" | "--kernel-us" => o.kernel_ns = num(i, 1, 10_000_000) * 1000,
            "-d" | "--inject-ms" => o.inject_ns = num(i, 1, 600_000) * MS,
            "--trim-mb" => o.trim_mb = num(i, 4, 65536),
            "-t" | "--truth" => {
                o.truth = Some(args.get(i + 1).cloned().unwrap_or_else(|| usage()));
            }
            "-q" | "--quiet" => {
                o.quiet = true;
                i += 1;
                continue;
            }
            _ => usage(),
        }
        i += 2;
    }
    if !have_scenario {
        usage();
    }
    if o.trim_mb == 0 {
        // What D ms of trim needs, at most what heap-prep refaults in one unit.
        let unit_ms = o.kernels as f64 * o.kernel_ns as f64 / 1e6;
        let budget = (unit_ms - PREP_MARGIN_NS as f64 / 1e6) * PREP_SHARE;
        let mb = (o.inject_ns as f64 / 1e6 / TRIM_MS_PER_MB).min(budget / TRIM_PREP_MS_PER_MB);
        o.trim_mb = if mb < 4.0 { 4 } else { mb as u64 };
    }
    o
}

thread_local! {
    // A runtime worker's run_delay when it last parked.
    static PARKED_RD: std::cell::Cell<u64> = std::cell::Cell::new(0);
}

/// Folds the workers' wakeups into the gaps they fell in (gap u: from unit
/// u's last end to unit u + 1's first start).
fn fold_unparks(sh: &Shared) {
    let log = sh.units_log.lock().unwrap().clone();
    let mut per: Vec<(u32, i32, u64)> = Vec::new();
    for &(tid, t, rd) in sh.unparks.lock().unwrap().iter() {
        let gap = (0..log.len().saturating_sub(1)).find(|&u| log[u].1 <= t && t <= log[u + 1].0);
        if let Some(u) = gap {
            match per.iter_mut().find(|e| e.0 == u as u32 && e.1 == tid) {
                Some(e) => e.2 += rd,
                None => per.push((u as u32, tid, rd)),
            }
        }
    }
    for (gap, tid, rd) in per {
        sh.add_gap_rd(gap, tid, rd);
    }
    // timer: the task may resume on the other worker, where no same-thread
    // reading covers the window; the wakeups inside it do.
    let unparks = sh.unparks.lock().unwrap();
    for i in sh.injections.lock().unwrap().iter_mut() {
        if i.kind == "tokio-sleep" {
            let woke: u64 = unparks
                .iter()
                .filter(|e| i.start_ns <= e.1 && e.1 <= i.end_ns)
                .map(|e| e.2)
                .sum();
            i.run_delay_ns = i.run_delay_ns.max(woke);
        }
    }
}

fn truth_json(sh: &Shared, start_ns: u64, end_ns: u64) -> String {
    let o = &sh.opt;
    let worker = sh.gpu_call_tid.load(Ordering::SeqCst);
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"schema\":\"gaptrace.truth/1\",\"scenario\":\"tokio-{}\",\"pid\":{},\
         \"worker_tid\":{},\"units\":{},\"kernels\":{},\"kernel_ns\":{},\
         \"inject_ns\":{},\"batch\":false,\"seed\":0,\"start_ns\":{},\"end_ns\":{},\
         \"wall_ns\":{},\"sched_policy\":\"none\",",
        o.scenario.name(),
        std::process::id(),
        worker,
        o.units,
        o.kernels,
        o.kernel_ns,
        o.inject_ns,
        start_ns,
        end_ns,
        end_ns - start_ns
    );
    let _ = write!(
        s,
        "\"threads\":[{{\"name\":\"gpu-call\",\"tid\":{}}},{{\"name\":\"gpu-sim\",\"tid\":{}}}",
        worker,
        sh.gpusim_tid.load(Ordering::SeqCst)
    );
    for t in sh
        .runtime_tids
        .lock()
        .unwrap()
        .iter()
        .filter(|&&t| t != worker)
    {
        let _ = write!(s, ",{{\"name\":\"tokio-worker\",\"tid\":{}}}", t);
    }
    if o.scenario == Scenario::Trim {
        let _ = write!(
            s,
            ",{{\"name\":\"heap-prep\",\"tid\":{}}}",
            sh.prep_tid.load(Ordering::SeqCst)
        );
    }
    s.push_str("],\"injections\":[");
    let mut injections = sh.injections.lock().unwrap();
    injections.sort_by_key(|i| i.start_ns);
    let gap_rd = sh.gap_rd.lock().unwrap();
    for (n, i) in injections.iter().enumerate() {
        let win = i.end_ns - i.start_ns;
        let rd: u64 = gap_rd[i.gap as usize].iter().map(|e| e.1).sum();
        let _ = write!(
            s,
            "{}{{\"gap_after_unit\":{},\"category\":\"{}\",\"kind\":\"{}\",\"start_ns\":{},\
             \"end_ns\":{},\"amount_ns\":{},\"run_delay_ns\":{}",
            if n > 0 { "," } else { "" },
            i.gap,
            i.category,
            i.kind,
            i.start_ns,
            i.end_ns,
            win.saturating_sub(i.run_delay_ns),
            rd
        );
        if i.target_ns > 0 {
            let _ = write!(s, ",\"target_ns\":{}", i.target_ns);
        }
        if i.bytes > 0 {
            let _ = write!(s, ",\"bytes\":{}", i.bytes);
        }
        // Which threads' run-queue time the gap's run_delay_ns holds.
        s.push_str(",\"run_delay_by_tid\":{");
        for (n, e) in gap_rd[i.gap as usize].iter().enumerate() {
            let _ = write!(s, "{}\"{}\":{}", if n > 0 { "," } else { "" }, e.0, e.1);
        }
        s.push('}');
        let _ = write!(s, ",\"tid\":{},\"on_critical_path\":true}}", i.tid);
    }
    s.push_str("],\"skipped\":[");
    for (n, g) in sh.skipped.lock().unwrap().iter().enumerate() {
        let _ = write!(
            s,
            "{}{{\"gap_after_unit\":{},\"kind\":\"trim\",\"reason\":\"heap-prep not ready\"}}",
            if n > 0 { "," } else { "" },
            g
        );
    }
    s.push_str("],\"units_log\":[");
    for (u, (first, last)) in sh.units_log.lock().unwrap().iter().enumerate() {
        let _ = write!(
            s,
            "{}{{\"unit\":{},\"gpu_first_start_ns\":{},\"gpu_last_end_ns\":{}}}",
            if u > 0 { "," } else { "" },
            u,
            first,
            last
        );
    }
    s.push_str("]}\n");
    s
}

fn main() {
    let opt = parse_args();
    let start_ns = now_ns();
    // Opened now so that a bad path fails before the run, not after it.
    let mut truth = opt.truth.as_ref().map(|p| {
        std::fs::File::create(p).unwrap_or_else(|e| {
            eprintln!("tokio_prover: cannot write --truth {}: {}", p, e);
            std::process::exit(1)
        })
    });
    let units = opt.units as usize;
    let half = (opt.trim_mb as usize * 1024 * 1024) / TRIM_BLOCK / 2;
    let sh = Arc::new(Shared {
        opt,
        gpu: Mutex::new(GpuState::default()),
        gpu_work: Condvar::new(),
        gpu_done: Condvar::new(),
        units_log: Mutex::new(vec![(0, 0); units]),
        call_rd0: Mutex::new(vec![(0, 0); units]),
        gap_rd: Mutex::new(vec![Vec::new(); units]),
        unparks: Mutex::new(Vec::new()),
        injections: Mutex::new(Vec::new()),
        skipped: Mutex::new(Vec::new()),
        tracker: tokio::sync::Mutex::new(0),
        lock_wanted: tokio::sync::Notify::new(),
        jobs: Mutex::new(0),
        prep: Mutex::new(PrepState::default()),
        prep_cv: Condvar::new(),
        gpu_call_tid: AtomicI32::new(0),
        gpusim_tid: AtomicI32::new(0),
        prep_tid: AtomicI32::new(0),
        runtime_tids: Mutex::new(Vec::new()),
    });

    let s = sh.clone();
    let gpusim = std::thread::Builder::new()
        .name("gpu-sim".into())
        .spawn(move || gpu_sim(s))
        .expect("start gpu-sim thread");
    let prep = if sh.opt.scenario == Scenario::Trim {
        let s = sh.clone();
        let t = std::thread::Builder::new()
            .name("heap-prep".into())
            .spawn(move || heap_prep(s, half))
            .expect("start heap-prep thread");
        // The first round is built before unit 0.
        let mut p = sh.prep.lock().unwrap();
        while !p.ready {
            p = sh.prep_cv.wait(p).unwrap();
        }
        Some(t)
    } else {
        None
    };

    let s = sh.clone();
    let s2 = sh.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .thread_name("tokio-worker")
        .on_thread_start(move || {
            s.runtime_tids.lock().unwrap().push(gettid());
            // The workers share the last CPU, gpu-call gets CPU 0: a woken
            // worker that then computes (the holder) would otherwise often
            // preempt gpu-call on its way back to the pool and keep it
            // waiting for a CPU for milliseconds, scheduler time of the
            // critical thread that the workload did not inject.
            unsafe { gt_pin(1) };
        })
        .on_thread_park(|| PARKED_RD.with(|c| c.set(run_delay())))
        .on_thread_unpark(move || {
            let rd = run_delay().saturating_sub(PARKED_RD.with(|c| c.get()));
            if rd > 0 {
                s2.unparks.lock().unwrap().push((gettid(), now_ns(), rd));
            }
        })
        .enable_all()
        .build()
        .expect("build the tokio runtime");
    let s = sh.clone();
    rt.block_on(async move {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let holder = tokio::spawn(holder(s.clone(), rx));
        tokio::spawn(driver(s, tx))
            .await
            .expect("driver task panicked");
        holder.await.expect("holder task panicked");
    });
    let end_ns = now_ns();
    drop(rt);

    {
        let mut g = sh.gpu.lock().unwrap();
        g.stop = true;
        sh.gpu_work.notify_all();
    }
    gpusim.join().expect("gpu-sim thread panicked");
    if let Some(t) = prep {
        let mut p = sh.prep.lock().unwrap();
        p.stop = true;
        sh.prep_cv.notify_all();
        drop(p);
        t.join().expect("heap-prep thread panicked");
    }

    fold_unparks(&sh);
    if let Some(f) = truth.as_mut() {
        use std::io::Write;
        if let Err(e) = f.write_all(truth_json(&sh, start_ns, end_ns).as_bytes()) {
            eprintln!("tokio_prover: cannot write --truth: {}", e);
            std::process::exit(1);
        }
    }
    let skipped = sh.skipped.lock().unwrap().len();
    if skipped > 0 {
        eprintln!(
            "tokio_prover: warning: {} trims skipped: heap-prep could not prepare a round \
             within the GPU time before their gap; lower --trim-mb or lengthen units (--kernel-us)",
            skipped
        );
    }
    if !sh.opt.quiet {
        println!(
            "tokio_prover: scenario={} units={} wall={:.3}s delays={}",
            sh.opt.scenario.name(),
            sh.opt.units,
            (end_ns - start_ns) as f64 / 1e9,
            sh.injections.lock().unwrap().len()
        );
    }
}
