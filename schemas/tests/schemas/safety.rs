//! The copy-and-extend safety checks, run over every version in the catalog:
//! examples exist and validate; later minors accept what earlier ones accepted; resources
//! rendered for any minor validate against that minor; rendering for the newest minor is lossless.

use solgate_schemas::VersionEntry;

use crate::support::{
    effective_requests, examples, is_request, newest_of_major, predecessors, registry, stored_resources,
};

fn versions() -> impl Iterator<Item = &'static VersionEntry> {
    registry().all_versions()
}

fn label(entry: &VersionEntry) -> String {
    format!("{} {}", entry.api, entry.version)
}

#[test]
fn every_schema_of_every_version_has_examples() {
    for entry in versions() {
        let requests = effective_requests(entry);
        let resources = stored_resources(entry);
        for name in entry.dictionary.names() {
            let have = if is_request(name) { requests.get(name) } else { resources.get(name) };
            assert!(have.is_some_and(|list| !list.is_empty()), "{}: no example for {name}", label(entry));
        }
        // And no example names a schema the version lacks (a typo would silently test nothing).
        for name in requests.keys().chain(resources.keys()) {
            assert!(entry.dictionary.has(name), "{}: examples for unknown schema {name}", label(entry));
        }
    }
}

#[test]
fn request_examples_validate_under_their_version() {
    for entry in versions() {
        for (name, bodies) in examples(entry.api, &entry.version_string()).requests {
            for (i, body) in bodies.iter().enumerate() {
                if let Err(failures) = entry.dictionary.validate(&name, body) {
                    panic!("{} {name} example {i} is invalid: {failures}", label(entry));
                }
            }
        }
    }
}

/// Safety check 1: a later minor accepts every valid example of its predecessors unless its
/// delta declares a breaking change.
#[test]
fn later_minors_accept_every_example_of_their_predecessors() {
    let mut checked = 0;
    for entry in versions() {
        let breaking = entry.dictionary.document().is_some_and(|doc| doc.breaking);
        for earlier in predecessors(entry) {
            if breaking {
                continue;
            }
            for (name, bodies) in examples(earlier.api, &earlier.version_string()).requests {
                for body in &bodies {
                    if let Err(failures) = entry.dictionary.validate(&name, body) {
                        panic!("{} rejects a {name} that {} accepted: {failures}", label(entry), label(earlier));
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0, "no minor has a predecessor: the check checked nothing");
}

/// Safety check 2: a stored resource rendered for any minor of its major validates against that
/// minor's schema.
#[test]
fn resources_rendered_for_each_minor_validate_against_it() {
    for entry in versions() {
        for (name, stored) in stored_resources(entry) {
            for (i, resource) in stored.iter().enumerate() {
                let rendered = entry.dictionary.try_render(&name, resource).unwrap();
                if let Err(failures) = entry.dictionary.validate(&name, &rendered) {
                    panic!("{} {name} example {i} rendered for it is invalid: {failures}", label(entry));
                }
            }
        }
    }
}

/// Safety check 3: rendering a stored resource for the newest minor of its major, and reading
/// that again, loses nothing.
#[test]
fn rendering_for_the_newest_minor_loses_nothing() {
    for entry in versions() {
        let newest = newest_of_major(entry);
        if newest.version != entry.version {
            continue;
        }
        for (name, stored) in stored_resources(entry) {
            for resource in &stored {
                let once = newest.dictionary.render(&name, resource);
                assert_eq!(&once, resource, "{} {name}: rendering for the newest minor dropped data", label(newest));
                assert_eq!(
                    newest.dictionary.render(&name, &once),
                    once,
                    "{} {name}: a second round trip changed it",
                    label(newest)
                );
            }
        }
    }
}
