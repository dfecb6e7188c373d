//! The launcher's check of a kernel's `len(input >= covered)` option: the
//! input slice holds at least as many elements as another argument, so the
//! device may take it as known (`gpu_device::__private::assume_len_at_least`).

use crate::error::{Error, Result};

/// `Ok` when the argument `input` (of `have` elements) holds at least the
/// `need` elements of the argument `covered`; otherwise an `InvalidLaunch`
/// error naming the kernel, both parameters and both lengths.
#[doc(hidden)]
pub fn check_len_at_least(
    kernel: &'static str,
    (input, have): (&'static str, usize),
    (covered, need): (&'static str, usize),
) -> Result<()> {
    if have >= need {
        return Ok(());
    }
    Err(Error::InvalidLaunch {
        kernel,
        reason: format!(
            "argument `{input}` has {have} elements, fewer than the {need} of `{covered}` (the kernel declares `len({input} >= {covered})`)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::check_len_at_least;

    #[test]
    fn an_input_shorter_than_what_it_covers_is_refused_naming_both() {
        assert!(check_len_at_least("k", ("input", 12), ("out", 12)).is_ok());
        assert!(check_len_at_least("k", ("input", 13), ("out", 12)).is_ok());
        let message = check_len_at_least("jacobi5", ("input", 11), ("out", 12))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("`jacobi5`")
                && message.contains("`input` has 11 elements")
                && message.contains("12 of `out`"),
            "{message}"
        );
    }
}
