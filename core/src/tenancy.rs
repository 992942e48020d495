//! Tenancy: every instance, operation occurrence, subscription and package belongs to a
//! project (its creator's; an occurrence to its instance's). A request sees one project,
//! or every project when it comes from an administrator or authentication is off. What a
//! request may not see does not exist for it: 404, never 403, so ids cannot be probed.

/// Whose resources a request may see: `None` every project's, `Some(p)` only project `p`'s.
pub type ProjectScope<'a> = Option<&'a str>;

/// Whether a resource of `project` is visible within `scope`.
pub fn visible(scope: ProjectScope<'_>, project: &str) -> bool {
    scope.is_none_or(|own| own == project)
}

/// Whether a subscription of `subscription_project` hears of a resource of `project`: its
/// own project's, or every project's when it has none (made by an administrator, or
/// without authentication).
pub fn hears(subscription_project: &str, project: &str) -> bool {
    subscription_project.is_empty() || subscription_project == project
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_sees_its_own_project_and_no_scope_sees_all() {
        assert!(visible(None, "p1") && visible(None, ""));
        assert!(visible(Some("p1"), "p1"));
        assert!(!visible(Some("p1"), "p2") && !visible(Some("p1"), ""));
        assert!(!visible(Some(""), "p1"), "a principal without a project sees only project-less resources");
    }

    #[test]
    fn subscriptions_hear_their_project_and_projectless_ones_hear_all() {
        assert!(hears("p1", "p1") && !hears("p1", "p2") && !hears("p1", ""));
        assert!(hears("", "p1") && hears("", ""));
    }
}
