//! Bad kernels and bad launches do not compile, and the errors point at the
//! offending tokens. Each case is a file in tests/ui/ with its expected
//! compiler output beside it.

#[test]
fn bad_kernels_and_bad_launches_are_compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
