//! Bad kernels and bad launches do not compile, and the errors point at the
//! offending tokens. Each case is a file in `tests/ui/<folder>/` with its
//! expected compiler output beside it, one folder per macro (`kernel`,
//! `launch` for `launch!` and `kernel_args!`, `derive_device_copy`,
//! `embed_kernels`, `shared_array`, `vectorize`, `constant`, `print`) and
//! one for each crate's types whose misuse the type system refuses
//! (`device_api`, `runtime_api`); a case's file name is unique across the
//! folders (trybuild names its binary after it). The cases in
//! `tests/ui_build/` are built, not only checked, for errors found while
//! generating code (a `const` assertion on a generic parameter's size).

#[test]
fn bad_kernels_and_bad_launches_are_compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*/*.rs");
}

#[test]
fn errors_found_while_generating_code() {
    let cases = trybuild::TestCases::new();
    // A case that must build makes trybuild build the others too.
    cases.pass("tests/ui_build/kernel_by_value_struct.rs");
    cases.compile_fail("tests/ui_build/kernel_zero_sized_value.rs");
    cases.compile_fail("tests/ui_build/over_aligned_by_hand.rs");
    cases.compile_fail("tests/ui_build/warp_leader_past_the_warp.rs");
}
