//! The arithmetic of the simulated collectives: element-wise reductions over
//! the ranks' contributions, in rank order (so every rank gets bit-identical
//! results, as NCCL's ring gives).

use super::super::super::{ElementKind, ReduceOp};

/// A number type a reduction combines.
trait Element: Copy {
    const BYTES: usize;
    fn read(bytes: &[u8]) -> Self;
    fn write(self, bytes: &mut [u8]);
    fn combine(self, other: Self, op: ReduceOp) -> Self;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_ne_bytes(bytes.try_into().expect("one element"))
            }
            fn write(self, bytes: &mut [u8]) {
                bytes.copy_from_slice(&self.to_ne_bytes());
            }
            fn combine(self, other: Self, op: ReduceOp) -> Self {
                match op {
                    ReduceOp::Sum => self.wrapping_add(other),
                    ReduceOp::Prod => self.wrapping_mul(other),
                    ReduceOp::Max => self.max(other),
                    ReduceOp::Min => self.min(other),
                }
            }
        }
    )*};
}
integer!(i8, u8, i32, u32, i64, u64);

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_ne_bytes(bytes.try_into().expect("one element"))
            }
            fn write(self, bytes: &mut [u8]) {
                bytes.copy_from_slice(&self.to_ne_bytes());
            }
            fn combine(self, other: Self, op: ReduceOp) -> Self {
                match op {
                    ReduceOp::Sum => self + other,
                    ReduceOp::Prod => self * other,
                    ReduceOp::Max => self.max(other),
                    ReduceOp::Min => self.min(other),
                }
            }
        }
    )*};
}
float!(f32, f64);

fn reduce_as<T: Element>(op: ReduceOp, parts: &[&[u8]], out: &mut [u8]) {
    for (i, slot) in out.chunks_exact_mut(T::BYTES).enumerate() {
        let at = i * T::BYTES..(i + 1) * T::BYTES;
        let mut acc = T::read(&parts[0][at.clone()]);
        for part in &parts[1..] {
            acc = acc.combine(T::read(&part[at.clone()]), op);
        }
        acc.write(slot);
    }
}

/// Writes into `out` the element-wise reduction of `parts` (each as long as
/// `out`, at least one), combined in order.
pub(super) fn reduce(element: ElementKind, op: ReduceOp, parts: &[&[u8]], out: &mut [u8]) {
    match element {
        ElementKind::I8 => reduce_as::<i8>(op, parts, out),
        ElementKind::U8 => reduce_as::<u8>(op, parts, out),
        ElementKind::I32 => reduce_as::<i32>(op, parts, out),
        ElementKind::U32 => reduce_as::<u32>(op, parts, out),
        ElementKind::I64 => reduce_as::<i64>(op, parts, out),
        ElementKind::U64 => reduce_as::<u64>(op, parts, out),
        ElementKind::F32 => reduce_as::<f32>(op, parts, out),
        ElementKind::F64 => reduce_as::<f64>(op, parts, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Element>(values: &[T]) -> Vec<u8> {
        let mut out = vec![0; values.len() * T::BYTES];
        for (v, slot) in values.iter().zip(out.chunks_exact_mut(T::BYTES)) {
            v.write(slot);
        }
        out
    }

    #[test]
    fn reductions_combine_every_part_in_order() {
        let (a, b, c) = (
            bytes(&[1.5f32, -2.0]),
            bytes(&[2.0f32, 7.0]),
            bytes(&[-4.0f32, 1.0]),
        );
        let mut out = vec![0; 8];
        reduce(ElementKind::F32, ReduceOp::Sum, &[&a, &b, &c], &mut out);
        assert_eq!(out, bytes(&[-0.5f32, 6.0]));
        reduce(ElementKind::F32, ReduceOp::Max, &[&a, &b, &c], &mut out);
        assert_eq!(out, bytes(&[2.0f32, 7.0]));
        reduce(ElementKind::F32, ReduceOp::Min, &[&a, &b, &c], &mut out);
        assert_eq!(out, bytes(&[-4.0f32, -2.0]));
        reduce(ElementKind::F32, ReduceOp::Prod, &[&a, &b, &c], &mut out);
        assert_eq!(out, bytes(&[-12.0f32, -14.0]));
    }

    #[test]
    fn integers_wrap_as_on_the_gpu() {
        let (a, b) = (bytes(&[u8::MAX, 3]), bytes(&[2u8, 200]));
        let mut out = vec![0; 2];
        reduce(ElementKind::U8, ReduceOp::Sum, &[&a, &b], &mut out);
        assert_eq!(out, vec![1, 203]);
        let (a, b) = (bytes(&[i64::MIN, 5]), bytes(&[-1i64, -9]));
        let mut out = vec![0; 16];
        reduce(ElementKind::I64, ReduceOp::Sum, &[&a, &b], &mut out);
        assert_eq!(out, bytes(&[i64::MAX, -4]));
        reduce(ElementKind::I64, ReduceOp::Max, &[&a, &b], &mut out);
        assert_eq!(out, bytes(&[-1i64, 5]));
    }
}
