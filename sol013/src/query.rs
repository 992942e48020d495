//! Query strings of SOL013 list requests: [`ListQuery`] reads filter, selector and paging
//! parameters together. Splitting and decoding the raw string happen in `params`, whose
//! items are re-exported here.

use serde_json::Value;

use crate::error::Sol013Error;
use crate::filter::Filter;
use crate::limits::QueryLimits;
use crate::paging::{PageMarker, next_link};
// The parameter names and the splitting live in `params` so that paging and selectors can
// use them without importing this module; re-exported to keep their `query::` paths.
pub use crate::params::{
    ALL_FIELDS, ALL_RECORDS, EXCLUDE_DEFAULT, EXCLUDE_FIELDS, FIELDS, FILTER, NEXTPAGE_OPAQUE_MARKER, QueryPair,
    canonical_key, parse_query, single_param,
};
use crate::selector::{AttributeSelector, SelectorParams};

/// Everything SOL013 defines for a GET on a list resource, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery {
    /// `filter=`, parsed and typed against the resource schema.
    pub filter: Option<Filter>,
    /// The selector, with flags that the previous page's marker carried restored.
    pub selector: AttributeSelector,
    /// `nextpage_opaque_marker=`: list items after `marker.last_id` (ordered by id).
    pub marker: Option<PageMarker>,
    /// `all_records=yes` (Tacker v1 quirk): return the whole list, no paging.
    pub all_records: bool,
    /// Parameters this module does not know, in request order. SOL013 says unknown
    /// parameters are ignored; a caller that wants to reject e.g. Release 2 style
    /// `attrName=value` filters can look here.
    pub others: Vec<QueryPair>,
    pairs: Vec<QueryPair>,
}

impl ListQuery {
    /// Parses a raw query string for a list whose entries follow `schema` (pass `{}` when
    /// no schema exists: attributes are then not validated and typed at run time).
    pub fn parse(raw_query: &str, schema: &Value) -> Result<Self, Sol013Error> {
        Self::parse_limited(raw_query, schema, &QueryLimits::default())
    }

    /// As [`ListQuery::parse`], within `limits`.
    pub fn parse_limited(raw_query: &str, schema: &Value, limits: &QueryLimits) -> Result<Self, Sol013Error> {
        Self::from_pairs_limited(parse_query(raw_query)?, schema, limits)
    }

    /// As [`ListQuery::parse`], from already split pairs.
    ///
    /// python-tackerclient rebuilds the next-page request from the `Link` query with
    /// `parse_qs`, which drops bare keys; the marker therefore carries `all_fields` and
    /// `exclude_default`, and they are restored here so page 2 looks like page 1.
    pub fn from_pairs(pairs: Vec<QueryPair>, schema: &Value) -> Result<Self, Sol013Error> {
        Self::from_pairs_limited(pairs, schema, &QueryLimits::default())
    }

    fn from_pairs_limited(pairs: Vec<QueryPair>, schema: &Value, limits: &QueryLimits) -> Result<Self, Sol013Error> {
        let filter = match single_param(&pairs, FILTER)? {
            Some(text) => Some(Filter::parse_limited(text.unwrap_or_default(), schema, limits)?),
            None => None,
        };
        for key in [FIELDS, EXCLUDE_FIELDS] {
            if let Some(Some(list)) = single_param(&pairs, key)? {
                let entries = list.split(',').count();
                QueryLimits::check(
                    &format!("The number of {key} entries"),
                    "max_selector_entries",
                    entries,
                    limits.max_selector_entries,
                )?;
                for entry in list.split(',') {
                    QueryLimits::check(
                        &format!("The length of a {key} entry"),
                        "max_attribute_length",
                        entry.chars().count(),
                        limits.max_attribute_length,
                    )?;
                    QueryLimits::check(
                        &format!("The depth of a {key} entry"),
                        "max_attribute_depth",
                        entry.split('/').count(),
                        limits.max_attribute_depth,
                    )?;
                }
            }
        }
        let marker = match single_param(&pairs, NEXTPAGE_OPAQUE_MARKER)? {
            Some(text) => Some(PageMarker::decode(text.unwrap_or_default())?),
            None => None,
        };
        let mut params = SelectorParams::from_pairs(&pairs)?;
        if let Some(marker) = &marker {
            params.all_fields |= marker.all_fields;
            params.exclude_default |= marker.exclude_default;
        }
        let selector = AttributeSelector::new(&params, schema)?;
        let all_records = pairs.iter().any(|(k, v)| k == ALL_RECORDS && v.as_deref() == Some("yes"));
        let known = [FILTER, FIELDS, EXCLUDE_FIELDS, ALL_FIELDS, EXCLUDE_DEFAULT, NEXTPAGE_OPAQUE_MARKER, ALL_RECORDS];
        let others = pairs.iter().filter(|(k, _)| !known.contains(&canonical_key(k))).cloned().collect();
        Ok(Self { filter, selector, marker, all_records, others, pairs })
    }

    /// All parameters of the request, in order (keys canonical when parsed from a string).
    pub fn pairs(&self) -> &[QueryPair] {
        &self.pairs
    }

    /// The marker for the page after the one ending with the item `last_id`; it carries
    /// this request's selector flags.
    pub fn next_marker(&self, last_id: &str) -> PageMarker {
        PageMarker {
            last_id: last_id.to_owned(),
            all_fields: self.selector.all_fields(),
            exclude_default: self.selector.exclude_default(),
        }
    }

    /// `Link` header value for the next page: this request's parameters with the marker of
    /// [`ListQuery::next_marker`] (see [`next_link`]).
    pub fn next_link(&self, public_base: &str, path: &str, last_id: &str) -> String {
        next_link(public_base, path, &self.pairs, &self.next_marker(last_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterOp;
    use crate::test_fixtures::{instantiated_vnf_instance, vnf_instance_schema, vnf_lcm_op_occ_schema};

    fn pair(key: &str, value: Option<&str>) -> QueryPair {
        (key.to_owned(), value.map(str::to_owned))
    }

    #[test]
    fn list_query_parses_what_python_tackerclient_sends() {
        let query = ListQuery::parse(
            "filter=%28eq%2CoperationState%2CCOMPLETED%29&exclude-fields=operationParams",
            &vnf_lcm_op_occ_schema(),
        )
        .unwrap();
        let filter = query.filter.as_ref().unwrap();
        assert_eq!(filter.exprs()[0].op(), FilterOp::Eq);
        assert_eq!(filter.exprs()[0].attr().as_str(), "operationState");
        assert_eq!(query.selector.exclude_fields()[0].as_str(), "operationParams");
        assert_eq!(query.marker, None);
        assert!(!query.all_records);
        assert!(query.others.is_empty());

        let query =
            ListQuery::parse("all_fields&filter=%28eq%2CinstantiationState%2CINSTANTIATED%29", &vnf_instance_schema())
                .unwrap();
        assert!(query.selector.all_fields());
        assert!(query.filter.unwrap().matches(&instantiated_vnf_instance()));
    }

    #[test]
    fn list_query_reports_errors_of_its_parts() {
        let schema = vnf_instance_schema();
        assert_eq!(
            ListQuery::parse("filter=(eq,nope,1)", &schema).unwrap_err(),
            Sol013Error::InvalidAttrName("nope".into())
        );
        assert_eq!(ListQuery::parse("filter", &schema).unwrap_err(), Sol013Error::FilterParse);
        assert_eq!(ListQuery::parse("all_fields&fields=metadata", &schema).unwrap_err(), Sol013Error::InvalidSelector);
        assert_eq!(
            ListQuery::parse("nextpage_opaque_marker=bogus", &schema).unwrap_err(),
            Sol013Error::InvalidMarker("bogus".into())
        );
    }

    #[test]
    fn unknown_parameters_are_kept_for_the_caller() {
        let query = ListQuery::parse("vnfInstanceName=x&exclude_default&limit", &vnf_instance_schema()).unwrap();
        assert_eq!(query.others, [pair("vnfInstanceName", Some("x")), pair("limit", None)]);
        assert_eq!(query.pairs().len(), 3);
    }

    #[test]
    fn all_records_yes_disables_paging() {
        let schema = vnf_instance_schema();
        assert!(ListQuery::parse("all_records=yes", &schema).unwrap().all_records);
        assert!(!ListQuery::parse("all_records=no", &schema).unwrap().all_records);
        assert!(!ListQuery::parse("all_records", &schema).unwrap().all_records);
    }

    #[test]
    fn marker_restores_the_flags_a_client_dropped() {
        let schema = vnf_instance_schema();
        let first = ListQuery::parse("all_fields&filter=(eq,vnfProvider,Company)", &schema).unwrap();
        let link = first.next_link("http://127.0.0.1:9890", "/vnflcm/v2/vnf_instances", "id-1");
        // python-tackerclient keeps only the query of the link and drops the bare key.
        let query = link.split_once('?').unwrap().1.split_once('>').unwrap().0;
        let reissued: Vec<&str> = query.split('&').filter(|p| p.contains('=')).collect();
        let second = ListQuery::parse(&reissued.join("&"), &schema).unwrap();
        assert!(second.selector.all_fields());
        assert_eq!(second.marker.as_ref().unwrap().last_id, "id-1");
        assert_eq!(second.filter, first.filter);

        let first = ListQuery::parse("exclude_default&fields=metadata", &schema).unwrap();
        let marker = first.next_marker("id-2");
        let second =
            ListQuery::parse(&format!("fields=metadata&nextpage_opaque_marker={}", marker.encode()), &schema).unwrap();
        assert!(second.selector.exclude_default());
        assert!(second.next_marker("id-3").exclude_default);
    }

    #[test]
    fn restored_flags_still_obey_the_combination_rules() {
        let schema = vnf_instance_schema();
        let marker = PageMarker { last_id: "id-1".into(), all_fields: true, exclude_default: false };
        let err = ListQuery::parse(&format!("fields=metadata&nextpage_opaque_marker={}", marker.encode()), &schema)
            .unwrap_err();
        assert_eq!(err, Sol013Error::InvalidSelector);
    }
}
