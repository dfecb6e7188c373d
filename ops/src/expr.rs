//! Element-wise expressions on device arrays, device scalars and host values.
//!
//! Expressions are built with `+`, `-` and `*` and run by [`Expr::eval`]. A
//! multiply-add `x * y + z` of arrays, scalars and values runs as one kernel
//! (CuPy runs `b * a + 8` as two, with a temporary array between them); other
//! shapes run one kernel per operation.

use super::arithmetic::{
    elementwise, Arithmetic, ADD, ARRAY, BROADCAST, COPY, MUL, MUL_ADD, SUB, VALUE,
};
use super::DeviceScalar;
use gpu_device::DeviceCopy;
use gpu_runtime::{launch, DeviceBuffer, DeviceView, Error, Result, Stream};
use std::ops::{Add, Mul, Sub};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
}

enum Node<'a, T: DeviceCopy> {
    Array(DeviceView<'a, T>),
    Scalar(DeviceView<'a, T>),
    Value(T),
    Binary(Op, Box<Node<'a, T>>, Box<Node<'a, T>>),
}

/// An element-wise expression over device arrays, device scalars and host
/// values, run by [`eval`](Expr::eval). Build one from an array with
/// [`array()`], from a [`DeviceScalar`] with `&scalar * ...`, and combine with
/// `+`, `-`, `*`.
pub struct Expr<'a, T: DeviceCopy> {
    node: Node<'a, T>,
}

/// An array as an expression operand: `array(&a) * 2.0 + &b`.
pub fn array<T: DeviceCopy>(a: &DeviceBuffer<T>) -> Expr<'_, T> {
    Expr {
        node: Node::Array(a.view()),
    }
}

impl<'a, T: DeviceCopy> From<&'a DeviceBuffer<T>> for Expr<'a, T> {
    fn from(a: &'a DeviceBuffer<T>) -> Self {
        array(a)
    }
}

impl<'a, T: DeviceCopy> From<DeviceView<'a, T>> for Expr<'a, T> {
    fn from(a: DeviceView<'a, T>) -> Self {
        Expr {
            node: Node::Array(a),
        }
    }
}

impl<'a, T: DeviceCopy> From<&'a DeviceScalar<T>> for Expr<'a, T> {
    fn from(s: &'a DeviceScalar<T>) -> Self {
        Expr {
            node: Node::Scalar(s.view()),
        }
    }
}

impl<T: Arithmetic> From<T> for Expr<'_, T> {
    fn from(v: T) -> Self {
        Expr {
            node: Node::Value(v),
        }
    }
}

macro_rules! operator {
    ($trait:ident, $method:ident, $op:expr) => {
        impl<'a, T: Arithmetic, R: Into<Expr<'a, T>>> $trait<R> for Expr<'a, T> {
            type Output = Expr<'a, T>;
            fn $method(self, rhs: R) -> Expr<'a, T> {
                Expr {
                    node: Node::Binary($op, Box::new(self.node), Box::new(rhs.into().node)),
                }
            }
        }
        impl<'a, T: Arithmetic, R: Into<Expr<'a, T>>> $trait<R> for &'a DeviceScalar<T> {
            type Output = Expr<'a, T>;
            fn $method(self, rhs: R) -> Expr<'a, T> {
                Expr::from(self).$method(rhs)
            }
        }
    };
}
operator!(Add, add, Op::Add);
operator!(Sub, sub, Op::Sub);
operator!(Mul, mul, Op::Mul);

/// A leaf ready to be a kernel argument.
enum Leaf<'a, T: DeviceCopy> {
    Array(DeviceView<'a, T>),
    Scalar(DeviceView<'a, T>),
    Value(T),
    /// An inner operation's result, freed once the launch reading it is queued
    /// (`cuMemFree` waits for the kernels using it).
    Temporary(DeviceBuffer<T>),
}

impl<T: Arithmetic> Leaf<'_, T> {
    /// The kernel arguments: a slice (unused for values), its kind, a value.
    fn argument<'b>(&'b self, empty: &'b DeviceBuffer<T>) -> (DeviceView<'b, T>, u32, T) {
        match self {
            Leaf::Array(a) => (*a, ARRAY, T::ZERO),
            Leaf::Scalar(s) => (*s, BROADCAST, T::ZERO),
            Leaf::Value(v) => (empty.view(), VALUE, *v),
            Leaf::Temporary(t) => (t.view(), ARRAY, T::ZERO),
        }
    }
}

impl<'a, T: Arithmetic + elementwise::Instance> Expr<'a, T> {
    /// Runs the expression on the current stream; the work is queued, not
    /// waited for (unless the expression needs temporaries, which are freed,
    /// waiting, before this returns).
    pub fn eval(self) -> Result<DeviceBuffer<T>> {
        self.eval_on(&gpu_runtime::current_stream()?)
    }

    /// Runs the expression on `stream`. Arrays in it must have one length,
    /// the length of the result; an expression of scalars and values alone
    /// gives one element.
    pub fn eval_on(self, stream: &Stream) -> Result<DeviceBuffer<T>> {
        let len = array_length(&self.node)?.unwrap_or(1);
        evaluate(self.node, len, stream)
    }
}

/// The common length of the arrays in the expression, or `None` if it has none.
fn array_length<T: DeviceCopy>(node: &Node<'_, T>) -> Result<Option<usize>> {
    match node {
        Node::Array(a) => Ok(Some(a.len())),
        Node::Scalar(_) | Node::Value(_) => Ok(None),
        Node::Binary(_, l, r) => match (array_length(l)?, array_length(r)?) {
            (Some(a), Some(b)) if a != b => Err(Error::LengthMismatch {
                operation: "element-wise arithmetic",
                destination: a,
                source: b,
            }),
            (a, b) => Ok(a.or(b)),
        },
    }
}

/// Evaluates `node` into a new buffer of `len` elements.
fn evaluate<T: Arithmetic + elementwise::Instance>(
    node: Node<'_, T>,
    len: usize,
    stream: &Stream,
) -> Result<DeviceBuffer<T>> {
    let (op, x, y, z) = match node {
        // x * y + z as one multiply-add.
        Node::Binary(Op::Add, l, r) if matches!(*l, Node::Binary(Op::Mul, ..)) => {
            let Node::Binary(_, a, b) = *l else {
                unreachable!("matched above")
            };
            (
                MUL_ADD,
                leaf(*a, len, stream)?,
                leaf(*b, len, stream)?,
                leaf(*r, len, stream)?,
            )
        }
        Node::Binary(op, l, r) => {
            let code = match op {
                Op::Add => ADD,
                Op::Sub => SUB,
                Op::Mul => MUL,
            };
            (
                code,
                leaf(*l, len, stream)?,
                leaf(*r, len, stream)?,
                Leaf::Value(T::ZERO),
            )
        }
        other => (
            COPY,
            leaf(other, len, stream)?,
            Leaf::Value(T::ZERO),
            Leaf::Value(T::ZERO),
        ),
    };
    // An empty buffer (no allocation) stands in for the slices of values.
    let empty = DeviceBuffer::<T>::zeroed_on(0, stream)?;
    let (x, x_kind, x_value) = x.argument(&empty);
    let (y, y_kind, y_value) = y.argument(&empty);
    let (z, z_kind, z_value) = z.argument(&empty);
    // SAFETY: the launch below has a thread for each of the `len` elements and
    // each writes its element; nothing reads the buffer before that launch.
    let mut out = unsafe { DeviceBuffer::uninitialized(len, stream)? };
    let blocks = len.div_ceil(256).max(1);
    launch!(elementwise[blocks, 256, stream](
        op, x, x_kind, x_value, y, y_kind, y_value, z, z_kind, z_value, &mut out
    ))?;
    Ok(out)
}

/// Turns a node into a leaf, evaluating an inner operation into a temporary.
fn leaf<'a, T: Arithmetic + elementwise::Instance>(
    node: Node<'a, T>,
    len: usize,
    stream: &Stream,
) -> Result<Leaf<'a, T>> {
    Ok(match node {
        Node::Array(a) => Leaf::Array(a),
        Node::Scalar(s) => Leaf::Scalar(s),
        Node::Value(v) => Leaf::Value(v),
        inner @ Node::Binary(..) => Leaf::Temporary(evaluate(inner, len, stream)?),
    })
}
