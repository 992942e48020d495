//! What a list query may ask (the `[query]` settings table): past a limit the request is a
//! 400 naming the limit and its value. The SQL built from an accepted query stays inside
//! SQLite's and PostgreSQL's own limits whatever the settings: at most
//! [`MAX_PUSHED_VALUES`](crate::filter::MAX_PUSHED_VALUES) values are pushed to SQL, the
//! rest of the filter runs in memory.

use serde::{Deserialize, Serialize};

use crate::error::Sol013Error;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueryLimits {
    /// Simple expressions in one `filter` (joined by `;`).
    pub max_filter_terms: usize,
    /// Values of one expression (`in`, `nin`, `cont`, `ncont` take several).
    pub max_filter_values: usize,
    /// Characters of one filter value.
    pub max_value_length: usize,
    /// Segments of one attribute path (`a/b/c` has 3).
    pub max_attribute_depth: usize,
    /// Characters of one attribute path.
    pub max_attribute_length: usize,
    /// Entries of `fields` or `exclude_fields`.
    pub max_selector_entries: usize,
}

impl Default for QueryLimits {
    fn default() -> Self {
        Self {
            max_filter_terms: 50,
            max_filter_values: 200,
            max_value_length: 1024,
            max_attribute_depth: 16,
            max_attribute_length: 256,
            max_selector_entries: 100,
        }
    }
}

impl QueryLimits {
    /// A 400 if `value` exceeds the limit `name` (its setting key) of `max`.
    pub(crate) fn check(what: &str, name: &'static str, value: usize, max: usize) -> Result<(), Sol013Error> {
        if value > max {
            return Err(Sol013Error::LimitExceeded { what: what.to_owned(), limit: name, value, max });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::filter::{ColumnKind, ColumnSpec, MAX_PUSHED_VALUES};
    use crate::query::ListQuery;
    use crate::test_fixtures::vnf_instance_schema;

    const COLUMNS: &[ColumnSpec] = &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfInstanceName", column: "vnf_instance_name", kind: ColumnKind::Text },
    ];

    fn terms(count: usize) -> String {
        (0..count).map(|i| format!("(eq,vnfInstanceName,n{i})")).collect::<Vec<_>>().join(";")
    }

    #[test]
    fn each_limit_is_a_400_naming_it() {
        let schema = vnf_instance_schema();
        let detail = |query: String| ListQuery::parse(&query, &schema).unwrap_err().to_string();
        let values = (0..201).map(|i| format!("v{i}")).collect::<Vec<_>>().join(",");
        let cases = [
            (
                format!("filter={}", terms(51)),
                "The number of filter expressions is 51, more than the allowed 50 (query.max_filter_terms).",
            ),
            (
                format!("filter=(in,id,{values})"),
                "The number of values of one filter expression is 201, more than the allowed 200 (query.max_filter_values).",
            ),
            (
                format!("filter=(eq,id,{})", "x".repeat(1025)),
                "The length of a filter value is 1025, more than the allowed 1024 (query.max_value_length).",
            ),
            (
                format!("filter=(eq,{},x)", vec!["a"; 17].join("/")),
                "The depth of a filter attribute path is 17, more than the allowed 16 (query.max_attribute_depth).",
            ),
            (
                format!("filter=(eq,{},x)", "a".repeat(257)),
                "The length of a filter attribute path is 257, more than the allowed 256 (query.max_attribute_length).",
            ),
            (
                format!("fields={}", vec!["vnfInstanceName"; 101].join(",")),
                "The number of fields entries is 101, more than the allowed 100 (query.max_selector_entries).",
            ),
        ];
        for (query, expected) in cases {
            assert_eq!(detail(query), expected);
        }
        // At the limits everything parses.
        let values = (0..200).map(|i| format!("v{i}")).collect::<Vec<_>>().join(",");
        assert!(ListQuery::parse(&format!("filter={};(in,id,{values})", terms(49)), &schema).is_ok());
        let roomy = QueryLimits { max_filter_terms: 5000, max_filter_values: 10_000, ..QueryLimits::default() };
        assert!(ListQuery::parse_limited(&format!("filter={}", terms(2000)), &schema, &roomy).is_ok());
    }

    #[test]
    fn nul_characters_are_refused_in_every_parameter() {
        for query in ["filter=(eq,vnfInstanceName,a%00b)", "filter=(cont,vnfInstanceName,%00)", "fields=a%00", "x%00=1"]
        {
            let error = ListQuery::parse(query, &json!({})).unwrap_err();
            assert!(error.to_string().contains("NUL character"), "{query}: {error}");
        }
        // Other control characters are ordinary text.
        assert!(ListQuery::parse("filter=(eq,vnfInstanceName,a%01b%7F)", &vnf_instance_schema()).is_ok());
    }

    #[test]
    fn no_more_than_the_budget_is_pushed_to_sql() {
        let schema = vnf_instance_schema();
        let roomy = QueryLimits { max_filter_terms: 5000, max_filter_values: 10_000, ..QueryLimits::default() };
        let values = (0..5000).map(|i| format!("v{i}")).collect::<Vec<_>>().join(",");
        for filter in [terms(2000), format!("(in,id,{values})"), format!("(in,id,{values});{}", terms(300))] {
            let query = ListQuery::parse_limited(&format!("filter={filter}"), &schema, &roomy).unwrap();
            let filter = query.filter.unwrap();
            let (pushed, residual) = filter.split_for_columns(COLUMNS);
            let pushed_values: usize = pushed.iter().map(|p| p.values.len() + 1).sum();
            assert!(pushed_values <= MAX_PUSHED_VALUES, "{pushed_values}");
            let kept = pushed.len() + residual.map_or(0, |residual| residual.exprs().len());
            assert_eq!(kept, filter.exprs().len(), "nothing is dropped, the rest runs in memory");
        }
    }

    fn filter_like() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            Just("(".to_owned()),
            Just(")".to_owned()),
            Just(",".to_owned()),
            Just(";".to_owned()),
            Just("'".to_owned()),
            Just("/".to_owned()),
            Just("@key".to_owned()),
            Just("%00".to_owned()),
            Just("%ZZ".to_owned()),
            Just("%C3%28".to_owned()),
            prop_oneof![Just("eq"), Just("neq"), Just("in"), Just("cont"), Just("gt"), Just("lte"), Just("like")]
                .prop_map(str::to_owned),
            prop_oneof![
                Just("id"),
                Just("vnfInstanceName"),
                Just("instantiatedVnfInfo/vnfState"),
                Just("metadata/x"),
                Just("vnfConfigurableProperties")
            ]
            .prop_map(str::to_owned),
            "[ -~\u{80}-\u{10FFFF}]{0,8}",
        ];
        proptest::collection::vec(atom, 0..40).prop_map(|atoms| atoms.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

        /// Any text: a parse error or a filter whose SQL part stays within the budget.
        #[test]
        fn any_filter_text_parses_or_is_refused(text in filter_like(), prefix in prop_oneof![Just("filter="), Just("fields="), Just("exclude_fields="), Just("")]) {
            let schema = vnf_instance_schema();
            if let Ok(query) = ListQuery::parse(&format!("{prefix}{text}"), &schema)
                && let Some(filter) = &query.filter
            {
                let (pushed, _) = filter.split_for_columns(COLUMNS);
                prop_assert!(pushed.iter().map(|p| p.values.len() + 1).sum::<usize>() <= MAX_PUSHED_VALUES);
                let _ = filter.matches(&crate::test_fixtures::instantiated_vnf_instance());
            }
        }

        /// Well-formed expressions with arbitrary values always parse against `{}`.
        #[test]
        fn arbitrary_values_in_well_formed_expressions_parse(value in "[^,)'%\u{0}]{1,40}") {
            let query = format!("filter=(eq,metadata/x,{})", percent_encoding::utf8_percent_encode(&value, percent_encoding::NON_ALPHANUMERIC));
            prop_assert!(ListQuery::parse(&query, &json!({})).is_ok(), "{}", query);
        }
    }
}
