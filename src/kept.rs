//! A small cache of values built from a key and kept for the next request that needs
//! the same one (a `tools/list` array per set of shown tools, a list `SELECT` per set of
//! columns). Keys come from request input, so the number kept is bounded: past the
//! bound the oldest half is dropped, and no sequence of requests makes it grow.

use std::sync::Mutex;

pub struct Kept<K, V> {
    entries: Mutex<Vec<(K, V)>>,
    bound: usize,
}

impl<K: PartialEq, V: Clone> Kept<K, V> {
    pub const fn new(bound: usize) -> Self {
        Kept { entries: Mutex::new(Vec::new()), bound }
    }

    /// The value kept for `key`, or `build`'s, kept from now on.
    pub fn get(&self, key: K, build: impl FnOnce() -> V) -> V {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, value)) = entries.iter().find(|(k, _)| *k == key) {
            return value.clone();
        }
        let value = build();
        if entries.len() >= self.bound {
            let half = self.bound / 2;
            entries.drain(..half.max(1));
        }
        entries.push((key, value.clone()));
        value
    }
}

#[cfg(test)]
mod tests {
    use super::Kept;

    #[test]
    fn a_value_is_built_once_per_key_and_the_oldest_go_past_the_bound() {
        let kept: Kept<u32, String> = Kept::new(4);
        let mut builds = 0;
        for key in [1, 2, 1, 2, 3] {
            kept.get(key, || {
                builds += 1;
                key.to_string()
            });
        }
        assert_eq!(builds, 3);
        for key in 10..20 {
            assert_eq!(kept.get(key, || key.to_string()), key.to_string());
        }
        assert!(kept.entries.lock().unwrap().len() <= 4);
        assert_eq!(kept.get(19, || unreachable!()), "19");
    }
}
