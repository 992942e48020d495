//! Rendered list entries, cached per stored document version. Rendering a stored document
//! for a minor version (parse, drop undefined fields, scrub, `_links`, selectors,
//! serialize) is most of a list request's cost, and documents change far less often than
//! they are listed. A key names the document and its stamp (row version or update time),
//! the version rendered for and the selectors, so a changed document is simply a miss.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

pub struct RenderCache {
    entries: Mutex<HashMap<String, Arc<str>>>,
    capacity: usize,
}

impl RenderCache {
    /// `capacity` entries at most (0 disables the cache).
    pub fn new(capacity: usize) -> Self {
        Self { entries: Mutex::new(HashMap::new()), capacity }
    }

    pub fn get(&self, key: &str) -> Option<Arc<str>> {
        if self.capacity == 0 {
            return None;
        }
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).get(key).cloned()
    }

    pub fn insert(&self, key: String, rendered: Arc<str>) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        // Stale entries (old stamps) are never read again; starting over when full drops
        // them with the rest, which is simpler than tracking recency and costs one
        // re-render per live document.
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(key, rendered);
    }

    /// The rendered entry for `key`, rendering it with `render` on a miss.
    pub fn get_or_render(&self, key: String, render: impl FnOnce() -> String) -> Arc<str> {
        if let Some(hit) = self.get(&key) {
            return hit;
        }
        let rendered: Arc<str> = render().into();
        self.insert(key, rendered.clone());
        rendered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_once_per_key_and_stays_bounded() {
        let cache = RenderCache::new(2);
        let mut renders = 0;
        for _ in 0..3 {
            cache.get_or_render("a|1".into(), || {
                renders += 1;
                "A".into()
            });
        }
        assert_eq!(renders, 1);
        cache.insert("b|1".into(), "B".into());
        cache.insert("c|1".into(), "C".into());
        assert!(cache.entries.lock().unwrap().len() <= 2);
        let disabled = RenderCache::new(0);
        disabled.insert("a".into(), "A".into());
        assert!(disabled.get("a").is_none());
    }
}
