//! Rendered list entries, cached per stored document version. Rendering a stored document
//! for a minor version (parse, drop undefined fields, scrub, `_links`, selectors,
//! serialize) is most of a list request's cost, and documents change far less often than
//! they are listed. A key names the document and its stamp (row version or update time),
//! the version rendered for and the selectors, so a changed document is simply a miss.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

pub struct RenderCache {
    entries: Mutex<Entries>,
    capacity: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct Entries {
    /// A list of 100 looks up 100 keys of about 100 bytes: SipHash was a tenth of it.
    map: HashMap<String, Arc<str>, foldhash::quality::RandomState>,
    /// Keys and rendered documents, in bytes.
    bytes: usize,
}

impl RenderCache {
    /// `capacity` entries and `max_bytes` of keys and documents at most (either 0 disables
    /// the cache): instance documents grow with their VNFCs, so a count alone does not
    /// bound the memory.
    pub fn new(capacity: usize, max_bytes: usize) -> Self {
        Self { entries: Mutex::new(Entries::default()), capacity, max_bytes }
    }

    fn disabled(&self) -> bool {
        self.capacity == 0 || self.max_bytes == 0
    }

    pub fn get(&self, key: &str) -> Option<Arc<str>> {
        if self.disabled() {
            return None;
        }
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).map.get(key).cloned()
    }

    /// The entries for `keys`, in their order, under one lock (a list page's worth).
    pub fn get_many<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> Vec<Option<Arc<str>>> {
        if self.disabled() {
            return keys.into_iter().map(|_| None).collect();
        }
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        keys.into_iter().map(|key| entries.map.get(key).cloned()).collect()
    }

    pub fn insert(&self, key: String, rendered: Arc<str>) {
        let size = key.len() + rendered.len();
        if self.disabled() || size > self.max_bytes {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        // Stale entries (old stamps) are never read again; starting over when full drops
        // them with the rest, which is simpler than tracking recency and costs one
        // re-render per live document.
        if entries.map.len() >= self.capacity || entries.bytes + size > self.max_bytes {
            entries.map.clear();
            entries.bytes = 0;
        }
        let key_len = key.len();
        entries.bytes += size;
        if let Some(replaced) = entries.map.insert(key, rendered) {
            entries.bytes = entries.bytes.saturating_sub(key_len + replaced.len());
        }
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
        let cache = RenderCache::new(2, 1 << 20);
        let mut renders = 0;
        for _ in 0..3 {
            cache.get_or_render("a|1".into(), || {
                renders += 1;
                "A".into()
            });
        }
        assert_eq!(renders, 1);
        let found: Vec<_> =
            cache.get_many(["x|1", "a|1"]).into_iter().map(|hit| hit.as_deref().map(str::to_owned)).collect();
        assert_eq!(found, [None, Some("A".to_owned())], "in the order asked");
        cache.insert("b|1".into(), "B".into());
        cache.insert("c|1".into(), "C".into());
        assert!(cache.entries.lock().unwrap().map.len() <= 2);
        for disabled in [RenderCache::new(0, 1 << 20), RenderCache::new(10, 0)] {
            disabled.insert("a".into(), "A".into());
            assert!(disabled.get("a").is_none());
            assert_eq!(disabled.get_many(["a"]), [None]);
        }
    }

    /// Large documents are bounded by their bytes, whatever their count; one larger than
    /// the whole cache is not kept.
    #[test]
    fn the_bytes_of_the_entries_stay_within_the_bound() {
        let cache = RenderCache::new(1000, 10_000);
        let document: Arc<str> = "x".repeat(3_000).into();
        for i in 0..10 {
            cache.insert(format!("doc-{i}|1"), document.clone());
            let entries = cache.entries.lock().unwrap();
            assert!(entries.bytes <= 10_000 && entries.map.len() <= 3, "{} bytes", entries.bytes);
            let counted: usize = entries.map.iter().map(|(key, value)| key.len() + value.len()).sum();
            assert_eq!(entries.bytes, counted);
        }
        assert!(cache.get("doc-9|1").is_some(), "the newest is kept");
        cache.insert("doc-9|1".into(), "short".into());
        let entries = cache.entries.lock().unwrap();
        let counted: usize = entries.map.iter().map(|(key, value)| key.len() + value.len()).sum();
        assert_eq!(entries.bytes, counted, "a replaced entry is counted once");
        drop(entries);
        cache.insert("huge|1".into(), "y".repeat(20_000).into());
        assert!(cache.get("huge|1").is_none());
    }
}
