//! How a secret's pieces are named and hashed: a name is formatted only
//! when its piece is found, and a piece (random bytes) needs only one
//! multiply to hash.

/// A piece's name, formatted only when the piece is found: `template`
/// with its `{}`s replaced by `args` in order, after `prefix`.
#[derive(Clone, Copy)]
pub(super) struct Name {
    prefix: &'static str,
    template: &'static str,
    args: [u32; 4],
}

impl Name {
    pub(super) fn new(template: &'static str, args: &[u32]) -> Self {
        let mut a = [0; 4];
        a[..args.len()].copy_from_slice(args);
        Self {
            prefix: "",
            template,
            args: a,
        }
    }

    /// This name after `prefix`.
    pub(super) fn prefixed(self, prefix: &'static str) -> Self {
        Self { prefix, ..self }
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.prefix)?;
        for (i, part) in self.template.split("{}").enumerate() {
            if i > 0 {
                write!(f, "{}", self.args[i - 1])?;
            }
            f.write_str(part)?;
        }
        Ok(())
    }
}

/// `name!("AES block {} after round {}", counter, i)`: a [`Name`].
macro_rules! name {
    ($template:literal $(, $arg:expr)*) => {
        Name::new($template, &[$(($arg) as u32),*])
    };
}
pub(super) use name;

/// Hashes a piece (random bytes already) with one folded multiply:
/// SipHash would take most of the search's time.
#[derive(Default, Clone, Copy)]
pub(super) struct Fold(u64);

impl std::hash::Hasher for Fold {
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, x: u64) {
        let p = u128::from(x) * 0x9e37_79b9_7f4a_7c15;
        self.0 = p as u64 ^ (p >> 64) as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
