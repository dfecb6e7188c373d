//! Collecting every error of a macro input before giving up, so that one
//! compile reports them all, each at its own span.

/// The errors found so far, combined into one `syn::Error` (which renders
/// as one `compile_error!` per error, each at its own span).
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Records `error` after the ones already recorded.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// The value of `result`, or `None` with its error recorded.
    pub fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// `Ok(())` if no error was recorded, or all of them.
    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::Errors;
    use proc_macro2::Span;

    #[test]
    fn no_error_is_ok() {
        let mut errors = Errors::default();
        assert_eq!(errors.ok(Ok::<u8, syn::Error>(1)), Some(1));
        assert!(errors.finish().is_ok());
    }

    #[test]
    fn every_error_is_kept_in_order() {
        let mut errors = Errors::default();
        errors.push(syn::Error::new(Span::call_site(), "first"));
        assert_eq!(errors.ok(Ok::<u8, syn::Error>(3)), Some(3));
        assert_eq!(
            errors.ok(Err::<u8, _>(syn::Error::new(Span::call_site(), "second"))),
            None
        );
        let all: Vec<String> = errors
            .finish()
            .expect_err("two errors")
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(all, ["first", "second"]);
    }
}
