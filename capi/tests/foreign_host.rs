//! rocksketch inside a RocksDB we did not compile: a C++ host (RocksDB's C++ API and
//! `rocksketch.hpp`) and a C host (RocksDB's C API and the C ABI's callbacks), built
//! against the system's RocksDB (Debian's `librocksdb-dev`, 7.8 where the engine bundles
//! 11.x) under AddressSanitizer, run their workloads with flushes, compactions and
//! reopens; every answer they printed is then checked against the same operations run
//! through the Rust library.
//!
//! Needs a C/C++ compiler and the system RocksDB (`scripts/setup` installs them).

mod replay;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The static library of this crate, built now (`cargo test` builds only the rlib),
/// beside the test's own directory.
fn staticlib() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--quiet", "-p", "rocksketch-capi", "--lib"]);
    if profile_dir.ends_with("release") {
        build.arg("--release");
    }
    let status = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build -p rocksketch-capi failed");
    let lib = profile_dir.join("librocksketch_capi.a");
    assert!(lib.exists(), "{} was not built", lib.display());
    lib
}

fn system_rocksdb() {
    assert!(
        Path::new("/usr/include/rocksdb/c.h").exists(),
        "the system RocksDB's headers are missing: install librocksdb-dev (scripts/setup does)"
    );
}

/// Compiles a test host with AddressSanitizer against the system RocksDB and our
/// static library.
fn compile(source: &str, cplusplus: bool, out: &Path) {
    system_rocksdb();
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (compiler, std) = match cplusplus {
        true => (
            std::env::var("CXX").unwrap_or_else(|_| "c++".into()),
            "-std=c++17",
        ),
        false => (
            std::env::var("CC").unwrap_or_else(|_| "cc".into()),
            "-std=c11",
        ),
    };
    let status = Command::new(&compiler)
        .args([
            std,
            "-g",
            "-O1",
            "-fsanitize=address",
            "-fno-omit-frame-pointer",
        ])
        .args(["-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/hosts").join(source))
        .arg(staticlib())
        .args(["-lrocksdb", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(out)
        .status()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(status.success(), "compiling {source} failed");
}

/// Runs a host on a fresh database and returns its transcript; ASan's reports fail it.
fn run(host: &Path, dir: &Path) -> String {
    let output = Command::new(host)
        .arg(dir)
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:abort_on_error=0:exitcode=23",
        )
        .output()
        .expect("the host runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && !stderr.contains("Sanitizer"),
        "{} failed ({}):\n{stderr}",
        host.display(),
        output.status
    );
    String::from_utf8(output.stdout).expect("a UTF-8 transcript")
}

#[test]
fn cplusplus_host_answers_as_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host");
    compile("host.cc", true, &host);
    let transcript = run(&host, &dir.path().join("host-db"));
    let checked = replay::replay(&transcript, &dir.path().join("rust-db"));
    // Every kind of answer was compared, many times.
    for (op, at_least) in [
        ("cms.incrby", 200),
        ("cms.query", 500),
        ("cms.count", 4),
        ("bf.add", 200),
        ("bf.exists", 500),
        ("cf.del", 100),
        ("cf.count", 500),
        ("bf.filters", 1),
        ("cf.filters", 1),
    ] {
        let n = checked.get(op).copied().unwrap_or(0);
        assert!(n >= at_least, "only {n} {op} answers compared");
    }
    // The workload reached what it means to test: grown chains, answers of both kinds.
    assert!(
        transcript.contains("bf.filters\tseen\t3") || transcript.contains("bf.filters\tseen\t2")
    );
    assert!(
        !transcript.contains("cf.filters\tmembers\t1\n"),
        "the cuckoo chain never grew"
    );
    for answer in ["bf.add\tseen\t", "cf.del\tmembers\t"] {
        for value in ["0", "1"] {
            let line = transcript
                .lines()
                .find(|l| l.starts_with(answer) && l.ends_with(&format!("\t{value}")));
            assert!(line.is_some(), "no {answer}... {value} in the transcript");
        }
    }
}

#[test]
fn c_host_answers_as_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host_c");
    compile("host.c", false, &host);
    let transcript = run(&host, &dir.path().join("host-db"));
    let checked = replay::replay(&transcript, &dir.path().join("rust-db"));
    assert!(
        checked.get("cms.incrby").copied().unwrap_or(0) >= 1000,
        "{checked:?}"
    );
    assert!(
        checked.get("cms.query").copied().unwrap_or(0) >= 500,
        "{checked:?}"
    );
    assert_eq!(checked.get("cms.count"), Some(&3));
}
