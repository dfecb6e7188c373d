//! `#[vectorize]` and `#[vectorize(reduce)]` (Numba's `@vectorize(target='cuda')`
//! and `@cuda.reduce`): the generated kernels' results against the scalar
//! function on the host, the launchers' length checks, and the generated
//! kernels launched by hand the wrong way (refused, never a wrong answer;
//! the reduction kernel's trap is in
//! `tests/kernel_faults/vectorize_reduce_misuse.rs`, in a process of its own,
//! as a trap ends a GPU context).
//! Named after numba-cuda's `test_vectorize*.py` and `test_reduction.py`
//! cases they follow.

use gpu_runtime::{launch, DeviceBuffer, Error, Stream};
use gpu_test_kernels::vectorized::{
    hostile_names, larger, lerp, norm_squared, shadowing, shifted, sum_reduce, vector_add,
    wrapping_sum, Complex,
};

fn stream() -> Stream {
    Stream::new().unwrap()
}

fn floats(n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|i| (i % 97) as f32 * scale - 3.0).collect()
}

#[test]
fn test_1d_async_element_wise_add_on_a_stream() {
    let s = stream();
    for n in [1usize, 255, 256, 257, 3000] {
        let (a, b) = (floats(n, 0.5), floats(n, 0.25));
        let da = DeviceBuffer::to_device_sync(&a, &s).unwrap();
        let db = DeviceBuffer::to_device_sync(&b, &s).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed_on(n, &s).unwrap();
        vector_add::launch(&da, &db, &mut out, &s).unwrap();
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| vector_add(*x, *y)).collect();
        assert_eq!(out.copy_to_host_sync(&s).unwrap(), want, "n = {n}");
        let applied = vector_add::apply(&da, &db, &s).unwrap();
        assert_eq!(
            applied.copy_to_host_sync(&s).unwrap(),
            want,
            "apply, n = {n}"
        );
    }
}

#[test]
fn views_of_buffers_are_arguments_and_outputs() {
    let s = stream();
    let a = DeviceBuffer::to_device_sync(&floats(100, 1.0), &s).unwrap();
    let b = DeviceBuffer::to_device_sync(&floats(100, 2.0), &s).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(100, &s).unwrap();
    // out[10..40] = a[0..30] + b[50..80]; the rest stays zero.
    vector_add::launch(
        a.slice(0..30).unwrap(),
        b.slice(50..80).unwrap(),
        out.slice_mut(10..40).unwrap(),
        &s,
    )
    .unwrap();
    let (ha, hb) = (floats(100, 1.0), floats(100, 2.0));
    let got = out.copy_to_host_sync(&s).unwrap();
    for (i, g) in got.iter().enumerate() {
        let want = if (10..40).contains(&i) {
            ha[i - 10] + hb[i + 40]
        } else {
            0.0
        };
        assert_eq!(*g, want, "element {i}");
    }
}

#[test]
fn three_arguments_of_three_types_and_a_struct_element() {
    let s = stream();
    let n = 513;
    let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let b: Vec<f64> = (0..n).map(|i| 2.0 * i as f64 + 1.0).collect();
    let t: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.25).collect();
    let out = lerp::apply(
        &DeviceBuffer::to_device_sync(&a, &s).unwrap(),
        &DeviceBuffer::to_device_sync(&b, &s).unwrap(),
        &DeviceBuffer::to_device_sync(&t, &s).unwrap(),
        &s,
    )
    .unwrap();
    let want: Vec<f64> = (0..n).map(|i| lerp(a[i], b[i], t[i])).collect();
    assert_eq!(out.copy_to_host_sync(&s).unwrap(), want);

    let z: Vec<Complex> = (0..n)
        .map(|i| Complex {
            re: i as f32,
            im: -(i as f32) / 2.0,
        })
        .collect();
    let out = norm_squared::apply(&DeviceBuffer::to_device_sync(&z, &s).unwrap(), &s).unwrap();
    let want: Vec<f32> = z.iter().map(|z| norm_squared(*z)).collect();
    assert_eq!(out.copy_to_host_sync(&s).unwrap(), want);

    // An argument named `out`: the output parameter takes another name.
    let x: Vec<i32> = (0..n as i32).map(|i| i - 7).collect();
    let out = shifted::apply(&DeviceBuffer::to_device_sync(&x, &s).unwrap(), &s).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&s).unwrap(),
        x.iter().map(|v| v + 1).collect::<Vec<_>>()
    );
}

#[test]
fn arguments_named_as_the_generated_code_and_a_shadowing_scope() {
    let s = stream();
    let n = 300;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let d = DeviceBuffer::to_device_sync(&x, &s).unwrap();
    let out = hostile_names::apply(&d, &d, &d, &d, &s).unwrap();
    let want: Vec<f32> = x.iter().map(|&v| hostile_names(v, v, v, v)).collect();
    assert_eq!(out.copy_to_host_sync(&s).unwrap(), want);
    let a: Vec<i64> = (0..n as i64).map(|i| i * 3).collect();
    let b: Vec<i64> = (0..n as i64).collect();
    let out = shadowing::difference::apply(
        &DeviceBuffer::to_device_sync(&a, &s).unwrap(),
        &DeviceBuffer::to_device_sync(&b, &s).unwrap(),
        &s,
    )
    .unwrap();
    // Element i, not element `shadowing::thread_index() == 7` everywhere.
    assert_eq!(
        out.copy_to_host_sync(&s).unwrap(),
        (0..n as i64).map(|i| 2 * i).collect::<Vec<_>>()
    );
}

#[test]
fn a_private_vectorized_function_launches() {
    let s = stream();
    let x = floats(300, 0.5);
    let out = gpu_test_kernels::vectorized::square_all(
        &DeviceBuffer::to_device_sync(&x, &s).unwrap(),
        &s,
    )
    .unwrap();
    assert_eq!(
        out.copy_to_host_sync(&s).unwrap(),
        x.iter().map(|v| v * v).collect::<Vec<_>>()
    );
}

#[test]
fn lengths_that_differ_are_refused_naming_the_argument() {
    let s = stream();
    let a = DeviceBuffer::to_device_sync(&floats(10, 1.0), &s).unwrap();
    let b = DeviceBuffer::to_device_sync(&floats(9, 1.0), &s).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(10, &s).unwrap();
    let message = vector_add::launch(&a, &b, &mut out, &s)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`vector_add`") && message.contains("`b` has 9 elements where `a` has 10"),
        "{message}"
    );
    let mut short = DeviceBuffer::<f32>::zeroed_on(4, &s).unwrap();
    let message = vector_add::launch(&a, &a, &mut short, &s)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`out` has 4 elements where `a` has 10"),
        "{message}"
    );
    // Nothing was written.
    assert_eq!(short.copy_to_host_sync(&s).unwrap(), vec![0.0; 4]);
    assert!(vector_add::apply(&a, &b, &s).is_err());
}

#[test]
fn empty_buffers_launch_nothing() {
    let s = stream();
    let a = DeviceBuffer::<f32>::zeroed_on(0, &s).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(0, &s).unwrap();
    vector_add::launch(&a, &a, &mut out, &s).unwrap();
    assert!(vector_add::apply(&a, &a, &s).unwrap().is_empty());
}

#[test]
fn the_generated_kernel_launched_by_hand_checks_its_lengths() {
    // The kernel is public: a launch of too many threads for a short input
    // is refused by its length bounds before it runs.
    let s = stream();
    let a = DeviceBuffer::to_device_sync(&floats(10, 1.0), &s).unwrap();
    let b = DeviceBuffer::to_device_sync(&floats(5, 1.0), &s).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(10, &s).unwrap();
    let error =
        launch!(vector_add::vector_add_elementwise[1, 32, s](&a, &b, &mut out)).unwrap_err();
    assert!(matches!(error, Error::InvalidLaunch { .. }), "{error}");
}

#[test]
fn test_reduce_sums_every_length() {
    let s = stream();
    for n in [1usize, 2, 31, 32, 33, 255, 256, 257, 1000, 4099, 20_000] {
        let x: Vec<f64> = (0..n).map(|i| (i % 13) as f64 - 4.0).collect();
        let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
        // Small integers: every order of additions gives the same sum.
        assert_eq!(
            sum_reduce::reduce(&dx, &s).unwrap(),
            x.iter().sum::<f64>(),
            "n = {n}"
        );
        let xi: Vec<i64> = (0..n as i64).map(|i| i * 7919 - 12345).collect();
        let dxi = DeviceBuffer::to_device_sync(&xi, &s).unwrap();
        assert_eq!(
            wrapping_sum::reduce(&dxi, &s).unwrap(),
            xi.iter().sum::<i64>(),
            "n = {n}"
        );
        let xu: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 3)
            .collect();
        let dxu = DeviceBuffer::to_device_sync(&xu, &s).unwrap();
        assert_eq!(
            larger::reduce(&dxu, &s).unwrap(),
            *xu.iter().max().unwrap(),
            "n = {n}"
        );
    }
}

#[test]
fn test_reduce_async_into_a_device_buffer_on_a_stream() {
    let s = stream();
    let x: Vec<f64> = (0..5000).map(|i| (i % 7) as f64).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
    let mut result = DeviceBuffer::<f64>::zeroed_on(1, &s).unwrap();
    sum_reduce::reduce_into(&dx, &mut result, &s).unwrap();
    assert_eq!(
        result.copy_to_host_sync(&s).unwrap(),
        vec![x.iter().sum::<f64>()]
    );
    // Into one element of a larger buffer, through a view.
    let mut many = DeviceBuffer::<f64>::zeroed_on(3, &s).unwrap();
    sum_reduce::reduce_into(&dx, many.slice_mut(1..2).unwrap(), &s).unwrap();
    assert_eq!(
        many.copy_to_host_sync(&s).unwrap(),
        vec![0.0, x.iter().sum::<f64>(), 0.0]
    );
}

#[test]
fn a_reduction_of_nothing_or_into_the_wrong_length_is_refused() {
    let s = stream();
    let empty = DeviceBuffer::<f64>::zeroed_on(0, &s).unwrap();
    let message = sum_reduce::reduce(&empty, &s).unwrap_err().to_string();
    assert!(
        message.contains("`sum_reduce`") && message.contains("empty"),
        "{message}"
    );
    let x = DeviceBuffer::to_device_sync(&[1.0f64, 2.0], &s).unwrap();
    let mut two = DeviceBuffer::<f64>::zeroed_on(2, &s).unwrap();
    let message = sum_reduce::reduce_into(&x, &mut two, &s)
        .unwrap_err()
        .to_string();
    assert!(message.contains("`out` has 2 elements"), "{message}");
}
