//! Helpers shared by the benchmarks of `benches/` (not a benchmark itself).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` (or `$KILN_SHARED`).
pub fn shared() -> PathBuf {
    std::env::var_os("KILN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"))
}

/// Replaces the text between `<!-- kiln:NAME -->` and `<!-- /kiln:NAME -->` in BENCHMARKS.md
/// (appending the section if it is missing). Same rule as `planner/benches/planning.rs`.
pub fn write_section(name: &str, body: &str) {
    let path = root().join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        "# Benchmarks\n\nWritten by the benchmarks; do not edit by hand.\n".into()
    });
    let (start, end) = (
        format!("<!-- kiln:{name} -->"),
        format!("<!-- /kiln:{name} -->"),
    );
    let section = format!("{start}\n{body}{end}");
    let new = match (old.find(&start), old.find(&end)) {
        (Some(a), Some(b)) if a < b => format!("{}{section}{}", &old[..a], &old[b + end.len()..]),
        _ => format!("{}\n{section}\n", old.trim_end()),
    };
    std::fs::write(&path, new).unwrap();
}

/// `nproc` and the CPU model from /proc/cpuinfo, for the section text.
pub fn machine() -> String {
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!(
        "{nproc} CPUs (`nproc`), {cpu} ({}), shared with other builds",
        std::env::consts::ARCH
    )
}

/// Median of a sample (sorts it).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// CPU time of the calling thread in ns (`CLOCK_THREAD_CPUTIME_ID`), the clock of every
/// timing here and in `tools/bench_*.py` (`time.thread_time_ns`): time while the process is
/// descheduled by other jobs on the shared machine does not count. Elsewhere than Linux:
/// wall time.
#[cfg(target_os = "linux")]
pub fn now_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `struct timespec` (two 64-bit fields on 64-bit Linux).
    let r = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(r, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall time in ns since the first call (no thread CPU clock without Linux).
#[cfg(not(target_os = "linux"))]
pub fn now_ns() -> u64 {
    use std::time::Instant;
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The clock's name for the section text.
pub const CLOCK: &str = if cfg!(target_os = "linux") {
    "CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`; time while descheduled by \
     other jobs does not count)"
} else {
    "wall time"
};

/// Mean seconds per call of `f` over a batch of `n` calls.
pub fn batch_mean(f: &mut impl FnMut(), n: usize) -> f64 {
    let t = now_ns();
    for _ in 0..n {
        f();
    }
    (now_ns() - t) as f64 * 1e-9 / n as f64
}

/// Calls per batch so that one batch takes about `target` seconds (at least 1).
pub fn batch_size(f: &mut impl FnMut(), target: f64) -> usize {
    let mut n = 1usize;
    let mut t = batch_mean(f, 1);
    while t * (n as f64) < target && n < 1 << 24 {
        n *= 2;
        t = batch_mean(f, n);
    }
    ((n as f64 * target / (t * n as f64).max(1e-9)).round() as usize).max(1)
}

/// The pinned Python (`.venv/bin/python`, or `$KILN_VENV/bin/python`), if the venv exists.
pub fn venv_python() -> Option<PathBuf> {
    let venv = std::env::var_os("KILN_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".venv"));
    let p = venv.join("bin/python");
    p.exists().then_some(p)
}

/// A `tools/bench_*.py --serve` child: TFLM timed on request, interleaved in time with
/// Kiln's timings (see `serve` in `tools/bench_common.py`).
pub struct Tflm {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Tflm {
    /// Starts `.venv/bin/python tools/<script> <args>` from the repository root (its stderr
    /// passed through) and waits until it has prepared everything. `Err` says why not.
    pub fn start(script: &str, args: &[&str]) -> Result<Tflm, String> {
        let py = venv_python().ok_or_else(|| {
            "the Python venv `.venv/` is missing (`tools/setup_venv.sh` creates it; \
             `KILN_VENV` names another)"
                .to_string()
        })?;
        let mut child = Command::new(&py)
            .arg(Path::new("tools").join(script))
            .args(args)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", py.display()))?;
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut t = Tflm {
            child,
            stdin,
            stdout,
        };
        t.expect("ready", script)?;
        Ok(t)
    }

    fn expect(&mut self, want: &str, what: &str) -> Result<(), String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(n) if n > 0 && line.trim() == want => Ok(()),
            Ok(_) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(format!("tools/bench_*.py stopped at `{what}` ({status})"))
            }
            Err(e) => Err(format!("tools/bench_*.py at `{what}`: {e}")),
        }
    }

    /// Sends one request line and waits for its `ok`.
    pub fn request(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("tools/bench_*.py at `{line}`: {e}"))?;
        self.expect("ok", line)
    }

    /// Sends one request line and returns the number of its answer `ok <value>`.
    pub fn request_value(&mut self, line: &str) -> Result<f64, String> {
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("tools/bench_*.py at `{line}`: {e}"))?;
        let mut answer = String::new();
        match self.stdout.read_line(&mut answer) {
            Ok(n) if n > 0 => {}
            Ok(_) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                return Err(format!("tools/bench_*.py stopped at `{line}` ({status})"));
            }
            Err(e) => return Err(format!("tools/bench_*.py at `{line}`: {e}")),
        }
        answer
            .trim()
            .strip_prefix("ok ")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("tools/bench_*.py at `{line}`: answered `{}`", answer.trim()))
    }

    /// Ends the requests and returns the script's JSON result.
    pub fn finish(mut self) -> Result<serde_json::Value, String> {
        writeln!(self.stdin, "done").map_err(|e| e.to_string())?;
        drop(self.stdin);
        let mut rest = String::new();
        self.stdout
            .read_to_string(&mut rest)
            .map_err(|e| e.to_string())?;
        let status = self.child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("tools/bench_*.py failed ({status})"));
        }
        serde_json::from_str(rest.trim()).map_err(|e| format!("tools/bench_*.py: bad JSON: {e}"))
    }
}

/// Runs `f` on the TFLM child if there is one; on failure keeps why and drops the child (the
/// benchmark goes on with Kiln's numbers only).
pub fn with_tflm(tflm: &mut Result<Tflm, String>, f: impl FnOnce(&mut Tflm) -> Result<(), String>) {
    if let Ok(t) = tflm
        && let Err(e) = f(t)
    {
        *tflm = Err(e);
    }
}

/// A number with a sensible number of decimals for a table cell.
pub fn us(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}
