//! The parts of subscription filters that several APIs share, as typed records:
//! `vnfProductsFromProviders` (SOL003 VnfInstanceSubscriptionFilter and SOL005
//! PkgmNotificationsFilter have the same structure) and SOL003 clause 4.4.1.5
//! VnfInstanceSubscriptionFilter, with the facts of the document they are matched against.
//!
//! Every attribute present must hold; an absent or empty list matches everything.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A list condition of a filter: absent or empty matches everything, else `value` must be listed.
pub(crate) fn one_of<T: PartialEq>(list: &[T], value: Option<&T>) -> bool {
    list.is_empty() || value.is_some_and(|value| list.contains(value))
}

/// The `filter` of a stored subscription document, typed. A filter that cannot be read
/// (never one that passed the schema) selects nothing.
pub(crate) fn filter_of<F: DeserializeOwned + Default>(subscription: &Value) -> Option<F> {
    #[derive(Deserialize)]
    struct Body<F> {
        filter: Option<F>,
    }
    match Body::<F>::deserialize(subscription) {
        Ok(body) => Some(body.filter.unwrap_or_default()),
        Err(error) => {
            tracing::warn!(%error, "a subscription's filter cannot be read; it selects nothing");
            None
        }
    }
}

/// What filters match of a VNF instance (or of a package: the same VNFD attributes).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct VnfIdentity {
    pub(crate) id: Option<String>,
    pub(crate) vnfd_id: Option<String>,
    pub(crate) vnf_provider: Option<String>,
    pub(crate) vnf_product_name: Option<String>,
    pub(crate) vnf_software_version: Option<String>,
    pub(crate) vnfd_version: Option<String>,
    pub(crate) vnf_instance_name: Option<String>,
}

impl VnfIdentity {
    /// The identity of a VnfInstance or VnfPkgInfo document; what it lacks matches no
    /// condition that names it.
    pub(crate) fn of(document: &Value) -> Self {
        Self::deserialize(document).unwrap_or_default()
    }
}

/// One entry of `vnfProductsFromProviders`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ProviderFilter {
    pub(crate) vnf_provider: Option<String>,
    pub(crate) vnf_products: Vec<ProductFilter>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ProductFilter {
    pub(crate) vnf_product_name: Option<String>,
    pub(crate) versions: Vec<VersionFilter>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct VersionFilter {
    pub(crate) vnf_software_version: Option<String>,
    pub(crate) vnfd_versions: Vec<String>,
}

/// `vnfProductsFromProviders` against a document's VNFD attributes. Absent or empty
/// matches everything.
pub(crate) fn products_match(providers: &[ProviderFilter], document: &VnfIdentity) -> bool {
    providers.is_empty()
        || providers.iter().any(|provider| {
            provider.vnf_provider == document.vnf_provider
                && (provider.vnf_products.is_empty()
                    || provider.vnf_products.iter().any(|product| {
                        product.vnf_product_name == document.vnf_product_name
                            && (product.versions.is_empty()
                                || product.versions.iter().any(|version| {
                                    version.vnf_software_version == document.vnf_software_version
                                        && one_of(&version.vnfd_versions, document.vnfd_version.as_ref())
                                }))
                    }))
        })
}

/// SOL003 VnfInstanceSubscriptionFilter.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct InstanceFilter {
    pub(crate) vnfd_ids: Vec<String>,
    pub(crate) vnf_products_from_providers: Vec<ProviderFilter>,
    pub(crate) vnf_instance_ids: Vec<String>,
    pub(crate) vnf_instance_names: Vec<String>,
}

impl InstanceFilter {
    pub(crate) fn matches(&self, instance: &VnfIdentity) -> bool {
        one_of(&self.vnfd_ids, instance.vnfd_id.as_ref())
            && products_match(&self.vnf_products_from_providers, instance)
            && one_of(&self.vnf_instance_ids, instance.id.as_ref())
            && one_of(&self.vnf_instance_names, instance.vnf_instance_name.as_ref())
    }
}

/// A filter document, typed; null is the empty filter (it matches everything). A filter
/// that cannot be read (never one that passed the schema) selects nothing. The tests'
/// entry: stored subscriptions are read with [`filter_of`].
#[cfg(test)]
pub(crate) fn read_filter<F: DeserializeOwned + Default>(filter: &Value) -> Option<F> {
    if filter.is_null() {
        return Some(F::default());
    }
    F::deserialize(filter)
        .map_err(|error| tracing::warn!(%error, "a subscription's filter cannot be read; it selects nothing"))
        .ok()
}
