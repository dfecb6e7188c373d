// A kernel's print becomes a C format string: values C cannot print, and
// Rust options it has no counterpart for, are compile errors naming why.
use gpu_device::println;

#[derive(Clone, Copy)]
struct Pair(u32, u32);

fn in_a_kernel(x: f32, n: u32) {
    println!("{}", Pair(1, 2));
    println!("{:x}", x);
    println!("{:e}", n);
    println!("{:^5}", n);
    println!("{} {}", n);
}

fn main() {
    let _ = in_a_kernel;
}
