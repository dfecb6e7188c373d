//! GPU architectures (`sm_80`, `sm_90a`) against a device's compute
//! capability: which of a crate's PTX modules a device runs (`module.rs`),
//! and what a kernel needs (the launch check, `launch/architecture.rs`).

/// A PTX architecture, `sm_80` or `sm_90a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Arch {
    /// `80` for `sm_80`: the compute capability's major × 10 + minor.
    number: u32,
    /// `sm_90a`: the architecture-specific features of exactly that
    /// compute capability (`wgmma`, `setmaxnreg`), which no later GPU has.
    accelerated: bool,
}

impl Arch {
    /// `sm_XY` or `sm_XYa`; `None` for anything else.
    pub(crate) fn parse(name: &str) -> Option<Arch> {
        let digits = name.strip_prefix("sm_")?;
        let (digits, accelerated) = match digits.strip_suffix('a') {
            Some(d) => (d, true),
            None => (digits, false),
        };
        let number = digits.parse().ok().filter(|&n| n >= 10)?;
        Some(Arch {
            number,
            accelerated,
        })
    }

    /// Whether a device of compute capability `(major, minor)` runs code
    /// built for this architecture.
    pub(crate) fn runs_on(self, (major, minor): (u32, u32)) -> bool {
        let device = major * 10 + minor;
        if self.accelerated {
            device == self.number
        } else {
            device >= self.number
        }
    }

    /// What the architecture needs of a device, in words.
    pub(crate) fn needs(self) -> String {
        let (major, minor) = (self.number / 10, self.number % 10);
        if self.accelerated {
            format!(
                "sm_{}a (compute capability {major}.{minor} exactly)",
                self.number
            )
        } else {
            format!(
                "sm_{} (compute capability {major}.{minor} or later)",
                self.number
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Arch;

    #[test]
    fn architectures_run_on_the_compute_capabilities_they_should() {
        let sm_80 = Arch::parse("sm_80").unwrap();
        let sm_90a = Arch::parse("sm_90a").unwrap();
        assert!(sm_80.runs_on((8, 0)) && sm_80.runs_on((8, 6)) && sm_80.runs_on((12, 0)));
        assert!(!sm_80.runs_on((7, 5)));
        assert!(sm_90a.runs_on((9, 0)));
        assert!(!sm_90a.runs_on((10, 0)) && !sm_90a.runs_on((8, 9)));
        assert!(Arch::parse("sm_90").unwrap() < sm_90a);
        assert!(Arch::parse("sm_100").unwrap().runs_on((10, 0)));
        assert!(!Arch::parse("sm_100").unwrap().runs_on((9, 0)));
        assert_eq!(Arch::parse("compute_80"), None);
        assert_eq!(Arch::parse("sm_"), None);
        assert_eq!(sm_90a.needs(), "sm_90a (compute capability 9.0 exactly)");
    }
}
