//! A dynamic translation window, named by its index in the platform
//! table: the only way to say which window register to program, so safe
//! code cannot make the HAL write an arbitrary address.

use crate::platform::DYNAMIC_WINDOWS;

/// One of the platform's dynamic windows (`0..DYNAMIC_WINDOWS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowId(u8);

impl WindowId {
    /// Window `i`, if the platform has one.
    pub const fn new(i: usize) -> Option<Self> {
        if i < DYNAMIC_WINDOWS {
            Some(Self(i as u8))
        } else {
            None
        }
    }

    /// Its index in [`crate::Platform::dynamic_windows`].
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Every dynamic window, in order.
    pub fn all() -> impl Iterator<Item = WindowId> {
        (0..DYNAMIC_WINDOWS).map(|i| Self(i as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_platform_windows_exist() {
        assert_eq!(WindowId::new(DYNAMIC_WINDOWS), None);
        assert_eq!(WindowId::all().count(), DYNAMIC_WINDOWS);
        assert_eq!(WindowId::new(2).map(WindowId::index), Some(2));
    }
}
