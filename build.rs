//! Links the `taskhook` binary as a position-dependent executable on Linux with glibc.
//!
//! taskhook runs as a process on every Claude Code tool call, so its start-up is its cost. A
//! position-independent executable spends most of its start-up above a bare "hello world" in
//! the dynamic loader, relocating the ~10,000 pointers in its dependencies' tables (and
//! touching the pages that hold them); a position-dependent one has them resolved at link time.
//! The price is that the binary's own code and data sit at a fixed address (the stack, the heap
//! and the libraries stay randomized). Set `TASKHOOK_PIE=1` when building to keep PIE. A static
//! build (`-C target-feature=+crt-static`, as `install.sh` makes on x86_64 Linux with glibc) is
//! left as its flags make it: `-no-pie` on top of a static-pie link would break it.
//! Only the binary is affected: libraries, build scripts and proc macros link as usual.

fn main() {
    println!("cargo:rerun-if-env-changed=TASKHOOK_PIE");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let keep_pie = std::env::var_os("TASKHOOK_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    // A static build (`-C target-feature=+crt-static`) links as static-pie; `-no-pie` on top
    // of that would produce a broken binary.
    let crt_static = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .unwrap_or_default()
        .split(',')
        .any(|f| f == "crt-static");
    if os == "linux" && env == "gnu" && !keep_pie && !crt_static {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
