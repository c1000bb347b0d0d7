// The floor for the latency benchmark: a bare hello-world that, like a hook, drains stdin.
use std::io::Read;

fn main() {
    let mut buf = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut buf);
    println!("hello");
}
