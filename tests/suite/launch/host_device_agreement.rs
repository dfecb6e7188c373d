//! Attacks on `#[kernel]`'s promise that host and device agree on what a
//! launch passes, as a hostile reviewer would write them (the compile-time
//! ones are `tests/ui/kernel/kernel_*` cases):
//!
//! - `cfg` tricks that make the host and the device compile a kernel
//!   differently (`gpu_test_kernels::agreement`): every launch is refused
//!   before anything runs, with an error naming both sides, on the GPU and
//!   on the simulator (which reads the same PTX);
//! - attribute expressions written relative to the kernel, and parameters
//!   named like the generated code's names (`gpu_test_kernels::scopes`):
//!   each runs as written.

use gpu_runtime::{launch, DeviceBuffer, Error, Stream};
use gpu_test_kernels::agreement::{self, Real};
use gpu_test_kernels::scopes::{self, Elem};

/// The reason of an `InvalidLaunch` of `kernel`; panics on anything else.
fn refusal(result: gpu_runtime::Result<()>, kernel: &str) -> String {
    match result {
        Err(Error::InvalidLaunch { kernel: k, reason }) => {
            assert_eq!(k, kernel);
            reason
        }
        other => panic!("expected `{kernel}`'s launch to be refused, got {other:?}"),
    }
}

/// Asserts that `reason` names `host` as the host's fact and `device` as
/// the device's.
fn names_both_sides(reason: &str, host: &str, device: &str) {
    assert!(
        reason.contains(&format!("the host has `{host}"))
            && reason.contains(&format!("the device has `{device}")),
        "expected the host's `{host}` and the device's `{device}` in: {reason}"
    );
}

#[test]
fn a_block_shape_chosen_by_cfg_is_refused() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    let reason = refusal(
        launch!(agreement::block_by_cfg[1, 64, stream](&mut out)),
        "block_by_cfg",
    );
    names_both_sides(&reason, "block 64 1 1`", "block 32 1 1`");
    // The shape the device folds is refused too, for the same reason: the
    // refusal is the instance's on this device, until the process ends.
    let again = refusal(
        launch!(agreement::block_by_cfg[1, 32, stream](&mut out)),
        "block_by_cfg",
    );
    assert_eq!(again, reason);
    assert!(out
        .copy_to_host_sync(&stream)
        .unwrap()
        .iter()
        .all(|&b| b == 0));
}

#[test]
fn an_element_with_a_device_only_field_is_refused() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<agreement::Grown>::zeroed_on(32, &stream).unwrap();
    let reason = refusal(
        launch!(agreement::element_grown_by_cfg[1, 32, stream](&mut out)),
        "element_grown_by_cfg",
    );
    names_both_sides(
        &reason,
        "param out: output of gpu_test_kernels::agreement::Grown (size 4, align 4,",
        "param out: output of gpu_test_kernels::agreement::Grown (size 8, align 4,",
    );
}

#[test]
fn a_field_of_another_type_of_the_same_size_is_refused() {
    let stream = Stream::new().unwrap();
    let flags = DeviceBuffer::to_device_sync(&[agreement::Flag { set: 2 }; 32], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    let reason = refusal(
        launch!(agreement::field_type_by_cfg[1, 32, stream](&flags, &mut out)),
        "field_type_by_cfg",
    );
    // Same name, size and alignment; the layouts (a `u8` field against a
    // `bool` one) differ.
    names_both_sides(
        &reason,
        "param flags: input of gpu_test_kernels::agreement::Flag (size 1, align 1, layout 0x",
        "param flags: input of gpu_test_kernels::agreement::Flag (size 1, align 1, layout 0x",
    );
}

#[test]
fn a_type_alias_chosen_by_cfg_is_refused() {
    let stream = Stream::new().unwrap();
    let x = DeviceBuffer::to_device_sync(&[1.5f32; 32], &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(32, &stream).unwrap();
    let reason = refusal(
        launch!(agreement::alias_by_cfg[1, 32, stream](&x, 2.0, &mut out)),
        "alias_by_cfg",
    );
    names_both_sides(&reason, "param x: input of f32", "param x: input of u32");
    // A generic kernel's instance named by the alias.
    let reason = refusal(
        launch!(agreement::instance_by_cfg::<Real>[1, 32, stream](&x, &mut out)),
        "instance_by_cfg",
    );
    names_both_sides(&reason, "instance f32", "instance u32");
}

#[test]
fn attributes_chosen_by_cfg_attr_are_refused() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    let reason = refusal(
        launch!(agreement::attribute_by_cfg_attr[1, 64, stream](&mut out)),
        "attribute_by_cfg_attr",
    );
    names_both_sides(&reason, "block 64 1 1`", "block 32 1 1`");
    // A length bound the device assumes and the host never checks: an
    // input shorter than the output would be read past its end.
    let input = DeviceBuffer::to_device_sync(&[7u32; 4], &stream).unwrap();
    let reason = refusal(
        launch!(agreement::length_bound_by_cfg_attr[1, 64, stream](&input, &mut out)),
        "length_bound_by_cfg_attr",
    );
    names_both_sides(&reason, "param input:", "len input >= out`");
}

#[test]
fn attribute_paths_are_resolved_where_the_kernel_is_written() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    // `super::WIDTH` is the parent's 64, not `inner`'s 32, on both sides.
    launch!(scopes::inner::block_of_super[1, 64, stream](&mut out)).unwrap();
    assert!(out
        .copy_to_host_sync(&stream)
        .unwrap()
        .iter()
        .all(|&b| b == 64));
    let reason = refusal(
        launch!(scopes::inner::block_of_super[2, 32, stream](&mut out)),
        "block_of_super",
    );
    assert!(reason.contains("only in blocks of (64, 1, 1)"), "{reason}");
    // `self::WIDTH` is `inner`'s 32.
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    launch!(scopes::inner::block_of_self[1, 32, stream](&mut out)).unwrap();
    assert!(out
        .copy_to_host_sync(&stream)
        .unwrap()
        .iter()
        .all(|&b| b == 32));
    // `super::Elem` is the parent's 8-byte element.
    let values: Vec<Elem> = (0..32).map(|v| Elem { value: v << 40 }).collect();
    let x = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
    let mut copy = DeviceBuffer::<Elem>::zeroed_on(32, &stream).unwrap();
    launch!(scopes::inner::copy_of_super::<Elem>[1, 32, stream](&x, &mut copy)).unwrap();
    assert_eq!(copy.copy_to_host_sync(&stream).unwrap(), values);
}

#[test]
fn a_use_inside_a_function_is_the_kernels_scope() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    scopes::in_a_function::block_of_a_use(&stream, &mut out).unwrap();
    assert!(out
        .copy_to_host_sync(&stream)
        .unwrap()
        .iter()
        .all(|&b| b == 64));
}

#[test]
fn the_generated_names_shadow_none_of_the_users() {
    let stream = Stream::new().unwrap();
    let x = DeviceBuffer::to_device_sync(&[[1u32, 2, 3]; 128], &stream).unwrap();
    let mut out = DeviceBuffer::<[u32; 2]>::zeroed_on(128, &stream).unwrap();
    // Blocks of FUNCTION * BLOCK_SHAPE * BLOCK_0 * ... = 128, the user's.
    let by = scopes::names::Launcher { offset: 10 };
    launch!(scopes::names::shadowed_names[1, 128, stream](&x, by, &mut out)).unwrap();
    let out = out.copy_to_host_sync(&stream).unwrap();
    assert!(out.iter().all(|&v| v == [16, 128]), "{out:?}");
}

#[test]
fn parameters_named_like_generated_names_receive_their_own_values() {
    let stream = Stream::new().unwrap();
    let values: Vec<u32> = (1..=25).collect();
    let launch = |x: &DeviceBuffer<u32>, out: &mut DeviceBuffer<u32>| {
        let mut m = DeviceBuffer::<u32>::zeroed_on(12, &stream).unwrap();
        let mut g = DeviceBuffer::<u32>::zeroed_on(24, &stream).unwrap();
        let v = &values;
        launch!(scopes::named_like_generated[1, 27, stream](
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12],
            v[13], v[14], v[15], v[16], v[17], v[18], v[19], v[20], v[21], v[22], v[23], v[24],
            x,
            m.view_2d_mut(3, 4).unwrap(),
            g.view_3d_mut(2, 3, 4).unwrap(),
            out
        ))
    };
    let x = DeviceBuffer::to_device_sync(&[99u32; 27], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(27, &stream).unwrap();
    launch(&x, &mut out).unwrap();
    // Each scalar's own value, then `x`'s, then the extents 3 x 4 and
    // 2 x 3 x 4 as the device received them.
    let expected: Vec<u32> = values.iter().copied().chain([99, 3634]).collect();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), expected);
    // The length bound, checked by the launcher on the generated lengths.
    let short = DeviceBuffer::to_device_sync(&[99u32; 26], &stream).unwrap();
    let reason = refusal(launch(&short, &mut out), "named_like_generated");
    assert!(
        reason.contains("`x` has 26 elements, fewer than the 27 of `out`"),
        "{reason}"
    );
}
