//! Which row a concrete request path is: the tables are grouped by their prefix's first
//! segment (the API), then the rows of the table whose prefix the path has are compared
//! segment by segment (`{name}` matches one non-empty segment, `{name:.+}` the rest). No
//! allocation: this runs for every request (policy, scopes, response validation).

use actix_web::http::Method;

use super::endpoint::{Endpoint, Table};

pub struct Matcher {
    /// First segment of the prefixes (`vnflcm`, `v1.0`) and the tables under it.
    groups: Vec<(&'static str, Vec<&'static Table>)>,
}

impl Matcher {
    pub fn new(tables: impl IntoIterator<Item = &'static Table>) -> Self {
        let mut groups: Vec<(&'static str, Vec<&'static Table>)> = Vec::new();
        for table in tables.into_iter().filter(|table| !table.prefix.is_empty()) {
            let first = table.prefix.trim_start_matches('/').split('/').next().unwrap_or_default();
            match groups.iter_mut().find(|(name, _)| *name == first) {
                Some((_, group)) => group.push(table),
                None => groups.push((first, vec![table])),
            }
        }
        Matcher { groups }
    }

    /// The table and row of `method path`; `None` outside the tables (an unknown path or
    /// method, a path outside the APIs).
    pub fn find(&self, method: &Method, path: &str) -> Option<(&'static Table, &'static Endpoint)> {
        let first = path.strip_prefix('/')?.split('/').next()?;
        let (_, tables) = self.groups.iter().find(|(name, _)| *name == first)?;
        tables.iter().find_map(|table| {
            let rest = path.strip_prefix(table.prefix.as_str()).filter(|rest| rest.starts_with('/'))?;
            let endpoint =
                table.endpoints.iter().find(|endpoint| endpoint.method == method && matches(&endpoint.path, rest))?;
            Some((*table, endpoint))
        })
    }

    /// The table whose prefix `path` has, also for a path of no row.
    pub fn table(&self, path: &str) -> Option<&'static Table> {
        let first = path.strip_prefix('/')?.split('/').next()?;
        let (_, tables) = self.groups.iter().find(|(name, _)| *name == first)?;
        tables.iter().copied().find(|table| {
            path.strip_prefix(table.prefix.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

/// Whether `path` (relative to the table's prefix) is an instance of `template`.
fn matches(template: &str, path: &str) -> bool {
    let (mut template, mut path) = (template.split('/'), path.split('/'));
    loop {
        match (template.next(), path.next()) {
            (None, None) => return true,
            (Some(expected), Some(segment)) if expected.starts_with('{') => {
                if segment.is_empty() {
                    return false;
                }
                if expected.contains(':') {
                    // `{name:.+}`: the rest of the path.
                    return template.next().is_none();
                }
            }
            (Some(expected), Some(segment)) if expected == segment => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_segment_by_segment() {
        assert!(matches("/vnf_instances", "/vnf_instances"));
        assert!(matches("/vnf_instances/{vnfInstanceId}", "/vnf_instances/i"));
        assert!(!matches("/vnf_instances/{vnfInstanceId}", "/vnf_instances/"));
        assert!(!matches("/vnf_instances/{vnfInstanceId}", "/vnf_instances/i/instantiate"));
        assert!(matches("/vnf_instances/{vnfInstanceId}/instantiate", "/vnf_instances/i/instantiate"));
        assert!(matches("/vnf_packages/{vnfPkgId}/artifacts/{artifactPath:.+}", "/vnf_packages/p/artifacts/a/b.txt"));
        assert!(!matches("/vnf_packages/{vnfPkgId}/artifacts/{artifactPath:.+}", "/vnf_packages/p/artifacts"));
        assert!(!matches("/vims", "/vims.json"));
    }
}
