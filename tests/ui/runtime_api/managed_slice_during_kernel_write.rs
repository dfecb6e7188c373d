// A host slice of managed memory and a kernel writing it cannot coexist: the
// launch borrows the buffer mutably while the slice borrows it.
use gpu_runtime::{launch, ManagedBuffer, Stream};
use gpu_kernels::fill;

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let mut data = ManagedBuffer::<u32>::new(256)?;
    let host = data.as_slice()?;
    launch!(fill[1, 256, stream](1u32, &mut data))?;
    println!("{}", host[0]);
    Ok(())
}
