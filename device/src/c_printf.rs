//! Formats the C format strings of kernel prints on the host: what the
//! simulator prints, and the message of a failed `gpu_assert!` read back
//! from a GPU. Each conversion goes to the host's C library (`snprintf`),
//! as CUDA's host side formats `printf` output, so the simulator prints
//! what a GPU prints.
//!
//! The input may be any bytes (a record read back from device memory): only
//! the conversions [`Printer`](crate::print::Printer) writes are passed to
//! `snprintf` (`%lld`, `%llu`, `%llx`, `%llX`, `%llo`, `%f`, `%e`, `%E`,
//! `%g`, with the flags `-+0`, a width and a precision of at most 3 digits),
//! each with its own 8-byte value; anything else is copied as text, and a
//! conversion without a value prints as written.

use std::ffi::CString;

/// `format` (up to its first NUL) with `args` substituted, as the host's C
/// library formats them.
pub fn format(format: &[u8], args: &[u64]) -> Vec<u8> {
    let format = format.split(|&b| b == 0).next().unwrap_or(&[]);
    let mut out = Vec::with_capacity(format.len() + 16 * args.len());
    let mut args = args.iter();
    let mut rest = format;
    while let Some(at) = rest.iter().position(|&b| b == b'%') {
        out.extend_from_slice(&rest[..at]);
        rest = &rest[at..];
        if rest.get(1) == Some(&b'%') {
            out.push(b'%');
            rest = &rest[2..];
            continue;
        }
        match conversion(rest) {
            Some((len, kind)) => {
                let spec = &rest[..len];
                match args.next() {
                    Some(&value) => out.extend(snprintf(spec, kind, value)),
                    None => out.extend_from_slice(spec),
                }
                rest = &rest[len..];
            }
            None => {
                out.push(b'%');
                rest = &rest[1..];
            }
        }
    }
    out.extend_from_slice(rest);
    out
}

/// How a conversion's value is passed.
#[derive(Clone, Copy)]
enum Kind {
    Signed,
    Unsigned,
    Float,
}

/// The length and kind of the conversion at the start of `s` (which starts
/// with `%`), if it is one `Printer` writes.
fn conversion(s: &[u8]) -> Option<(usize, Kind)> {
    let mut i = 1;
    while matches!(s.get(i), Some(b'-' | b'+' | b'0')) && i < 4 {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while s.get(*i).is_some_and(u8::is_ascii_digit) && *i - start < 3 {
            *i += 1;
        }
    };
    digits(&mut i);
    if s.get(i) == Some(&b'.') {
        i += 1;
        digits(&mut i);
    }
    if s[i..].starts_with(b"ll") {
        let kind = match s.get(i + 2)? {
            b'd' => Kind::Signed,
            b'u' | b'x' | b'X' | b'o' => Kind::Unsigned,
            _ => return None,
        };
        Some((i + 3, kind))
    } else {
        match s.get(i)? {
            b'f' | b'e' | b'E' | b'g' => Some((i + 1, Kind::Float)),
            _ => None,
        }
    }
}

/// One conversion formatted by the C library.
fn snprintf(spec: &[u8], kind: Kind, value: u64) -> Vec<u8> {
    let Ok(spec) = CString::new(spec) else {
        return Vec::new();
    };
    // Widths and precisions have at most 3 digits: 1100 bytes hold any result.
    let mut buffer = vec![0u8; 1100];
    // SAFETY: `spec` is a NUL-terminated format holding exactly one
    // conversion (checked by `conversion`), whose argument type is the one
    // passed: `long long` for `%lld`, `unsigned long long` for `%llu`,
    // `%llx`, `%llX`, `%llo`, `double` for `%f`, `%e`, `%E`, `%g`;
    // `snprintf` writes at most `buffer.len()` bytes, the NUL included.
    let written = unsafe {
        let out = buffer.as_mut_ptr().cast::<libc::c_char>();
        match kind {
            Kind::Signed => libc::snprintf(
                out,
                buffer.len(),
                spec.as_ptr(),
                value as i64 as libc::c_longlong,
            ),
            Kind::Unsigned => {
                libc::snprintf(out, buffer.len(), spec.as_ptr(), value as libc::c_ulonglong)
            }
            Kind::Float => libc::snprintf(
                out,
                buffer.len(),
                spec.as_ptr(),
                f64::from_bits(value) as libc::c_double,
            ),
        }
    };
    buffer.truncate(usize::try_from(written).unwrap_or(0).min(buffer.len() - 1));
    buffer
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn conversions_format_as_c_does() {
        let out = format(
            b"i=%lld u=%llu x=%llx X=%08llX o=%llo f=%.3f e=%e g=%g %-5lld| %+lld 100%%\0junk",
            &[
                (-5i64) as u64,
                7,
                255,
                255,
                8,
                1.5f64.to_bits(),
                1.5f64.to_bits(),
                0.1f64.to_bits(),
                3,
                4,
            ],
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "i=-5 u=7 x=ff X=000000FF o=10 f=1.500 e=1.500000e+00 g=0.1 3    | +4 100%"
        );
    }

    #[test]
    fn anything_else_is_text_and_missing_values_print_as_written() {
        // `%s` and `%n` are never passed on (they would read or write memory).
        assert_eq!(format(b"%s %n %d %lld %lld", &[1]), b"%s %n %d 1 %lld");
        assert_eq!(format(b"%9999999999lld", &[1]), b"%9999999999lld");
    }
}
