//! The bookkeeping behind "current" settings that scopes change: the current
//! device and each device's current stream.
//!
//! A value set without a scope (`make_current`) is the base. Each scope
//! (`enter`, `scope`) pushes an entry; the current value is the newest entry
//! still alive, else the base. Dropping a scope's guard removes its own entry
//! wherever it is, so guards dropped out of order leave exactly the entries
//! of the guards still alive: once every guard is gone, the base is current
//! again. A `make_current` inside a scope changes that scope's entry, so it
//! lasts until the scope ends (as CuPy forgets a `use()` at the end of the
//! enclosing `with` block).

/// The base value and the live scopes' entries, oldest first.
#[derive(Debug)]
pub(crate) struct ScopeStack<T> {
    base: T,
    scopes: Vec<(u64, T)>,
    next_id: u64,
}

/// Names one scope's entry in a [`ScopeStack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScopeId(u64);

impl<T> ScopeStack<T> {
    /// No scope; `base` current.
    pub(crate) const fn new(base: T) -> Self {
        ScopeStack {
            base,
            scopes: Vec::new(),
            next_id: 0,
        }
    }

    /// The newest live scope's value, else the base.
    pub(crate) fn current(&self) -> &T {
        self.scopes.last().map_or(&self.base, |(_, v)| v)
    }

    /// `make_current`: changes the newest scope's value, or the base outside scopes.
    pub(crate) fn set(&mut self, value: T) {
        match self.scopes.last_mut() {
            Some((_, v)) => *v = value,
            None => self.base = value,
        }
    }

    /// Enters a scope with `value` current.
    pub(crate) fn push(&mut self, value: T) -> ScopeId {
        let id = self.next_id;
        self.next_id += 1;
        self.scopes.push((id, value));
        ScopeId(id)
    }

    /// Leaves the scope `id`, wherever it is among the live ones.
    pub(crate) fn remove(&mut self, id: ScopeId) {
        self.scopes.retain(|(i, _)| *i != id.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_left_out_of_order_leave_the_base_current() {
        let mut stack = ScopeStack::new('b');
        let one = stack.push('1');
        let two = stack.push('2');
        stack.remove(one);
        assert_eq!(*stack.current(), '2', "the inner scope is still alive");
        stack.remove(two);
        assert_eq!(*stack.current(), 'b');
    }

    #[test]
    fn make_current_inside_a_scope_lasts_until_the_scope_ends() {
        let mut stack = ScopeStack::new('b');
        let one = stack.push('1');
        stack.set('u');
        assert_eq!(*stack.current(), 'u');
        let three = stack.push('3');
        assert_eq!(*stack.current(), '3');
        stack.remove(three);
        assert_eq!(
            *stack.current(),
            'u',
            "the inner scope restores what it replaced"
        );
        stack.remove(one);
        assert_eq!(
            *stack.current(),
            'b',
            "the use() inside the scope is forgotten"
        );
        stack.set('m');
        assert_eq!(
            *stack.current(),
            'm',
            "outside scopes, make_current sets the base"
        );
    }
}
