// An `mma` takes A and B of one operand type (one shape): a bf16 A with an
// f16 B, or a tf32 A (m16n8k8) with a bf16 B (m16n8k16), does not compile.
use gpu_device::half::{bf16, f16};
use gpu_device::mma::{mma, Accumulator, Bf16, FragmentA, FragmentB, Tf32, F16};

pub fn two_halves(a: &[bf16], b: &[f16]) -> Accumulator {
    let fa = FragmentA::<Bf16>::load(a, 16);
    let fb = FragmentB::<F16>::load(b, 16);
    mma(&fa, &fb, Accumulator::zero())
}

pub fn two_shapes(a: &[f32], b: &[bf16]) -> Accumulator {
    let fa = FragmentA::<Tf32>::load(a, 8);
    let fb = FragmentB::<Bf16>::load(b, 16);
    mma(&fa, &fb, Accumulator::zero())
}

fn main() {}
