//! The cost of recording one event with tracing on (`OMP_OVNI=1`'s recorder), and of an
//! instrumentation call with tracing off (measured in a second process: the recorder cannot
//! be uninstalled). Run: `cargo bench --bench record`.

use criterion::{Criterion, criterion_group, criterion_main};

fn record(c: &mut Criterion) {
    if std::env::var_os("OXIOMP_BENCH_TRACING_OFF").is_none() {
        let base = std::env::var_os("OXIOMP_BENCH_TRACEDIR")
            .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
        let dir = base.join(format!("oxiomp-bench-trace-{}", std::process::id()));
        oxiomp_instrument::ovni::start(&dir).expect("trace directory");
        // Open the thread's stream outside the measurement.
        oxiomp_instrument::barrier_plain_enter();
        // Pairs of enter/exit (the state stack stays balanced), reported per event.
        c.bench_function("one recorded event (tracing on)", |b| {
            b.iter_custom(|iters| {
                let t = std::time::Instant::now();
                for _ in 0..iters {
                    oxiomp_instrument::barrier_plain_enter();
                    oxiomp_instrument::barrier_plain_exit();
                }
                t.elapsed() / 2
            })
        });
        let _ = std::fs::remove_dir_all(dir);
    } else {
        c.bench_function("one instrumentation call (tracing off)", |b| {
            b.iter(oxiomp_instrument::barrier_plain_enter)
        });
    }
}

criterion_group!(benches, record);
criterion_main!(benches);
