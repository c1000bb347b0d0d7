//! The `taskhook` binary: everything lives in the library; `main` only maps the result to an
//! exit code.

fn main() -> std::process::ExitCode {
    taskhook::cli::main()
}
