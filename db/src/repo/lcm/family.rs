//! The tables of one major of the VNF LCM API, as types: each table kind is a trait naming
//! its columns, implemented for the table of each major; the repository code of
//! `instances.rs`, `op_occs.rs` and `subscriptions.rs` is written once on those traits, and
//! `lcm.rs` holds the four tables each major chose.

use std::ops::Add;

use diesel::expression::AsExpression;
use diesel::internal::table_macro::ops;
use diesel::sql_types::{BigInt, Bool, Integer, Nullable, Text};

use crate::repo::plain_subscriptions::SubscriptionTable;
use crate::repo::table::{AnyTable, Col};
use crate::schema;

/// `column + value`, as `diesel::table!` types it.
pub(crate) type Plus<C, V> = ops::Add<C, <V as AsExpression<BigInt>>::Expression>;

/// `vnf_instances_v*`.
pub(crate) trait InstanceTable: AnyTable {
    /// The major's generation of subscriptions as a subquery (`lccn_subscription_generations`).
    const SUBSCRIPTION_GENERATION: &'static str;
    type Id: Col<Self, Text>;
    type VnfInstanceName: Col<Self, Nullable<Text>>;
    type VnfdId: Col<Self, Text>;
    type VnfPkgId: Col<Self, Text>;
    type VnfProvider: Col<Self, Text>;
    type VnfProductName: Col<Self, Text>;
    type VnfSoftwareVersion: Col<Self, Text>;
    type VnfdVersion: Col<Self, Text>;
    type InstantiationState: Col<Self, Text>;
    type Body: Col<Self, Text>;
    type CreatedAt: Col<Self, Text>;
    type UpdatedAt: Col<Self, Text>;
    /// With `+ 1` for the row version's move on.
    type RowVersion: Col<Self, BigInt> + Add<i64, Output = Plus<Self::RowVersion, i64>>;
    type Project: Col<Self, Text>;
}

/// `vnf_lcm_op_occs_v*`.
pub(crate) trait OpOccTable: AnyTable {
    /// As [`InstanceTable::SUBSCRIPTION_GENERATION`].
    const SUBSCRIPTION_GENERATION: &'static str;
    type Id: Col<Self, Text>;
    type VnfInstanceId: Col<Self, Text>;
    type Operation: Col<Self, Text>;
    type OperationState: Col<Self, Text>;
    type StateEnteredTime: Col<Self, Text>;
    type StartTime: Col<Self, Text>;
    type IsAutomaticInvocation: Col<Self, Bool>;
    type IsCancelPending: Col<Self, Bool>;
    type Body: Col<Self, Text>;
    type PendingAction: Col<Self, Nullable<Text>>;
    type Owner: Col<Self, Nullable<Text>>;
    type LeaseExpiresAt: Col<Self, Nullable<Text>>;
    type Attempt: Col<Self, Integer>;
    type CreatedAt: Col<Self, Text>;
    type UpdatedAt: Col<Self, Text>;
    type Project: Col<Self, Text>;
}

/// `grants_v*`.
pub(crate) trait GrantTable: AnyTable {
    type Id: Col<Self, Text>;
    type VnfLcmOpOccId: Col<Self, Text>;
    type Body: Col<Self, Text>;
    type CreatedAt: Col<Self, Text>;
}

/// `lccn_subscriptions_v*`: a plain subscription table with a verbosity.
pub(crate) trait LccnSubscriptionTable: SubscriptionTable {
    type Verbosity: Col<Self, Text>;
}

macro_rules! generation_of {
    ($major:literal) => {
        concat!("(SELECT generation FROM lccn_subscription_generations WHERE major = ", $major, ")")
    };
}

/// Names the columns of one major's tables for the traits above.
macro_rules! lcm_family {
    ($major:literal, $instances:ident, $op_occs:ident, $grants:ident, $subscriptions:ident) => {
        impl InstanceTable for schema::$instances::table {
            const SUBSCRIPTION_GENERATION: &'static str = generation_of!($major);
            type Id = schema::$instances::id;
            type VnfInstanceName = schema::$instances::vnf_instance_name;
            type VnfdId = schema::$instances::vnfd_id;
            type VnfPkgId = schema::$instances::vnf_pkg_id;
            type VnfProvider = schema::$instances::vnf_provider;
            type VnfProductName = schema::$instances::vnf_product_name;
            type VnfSoftwareVersion = schema::$instances::vnf_software_version;
            type VnfdVersion = schema::$instances::vnfd_version;
            type InstantiationState = schema::$instances::instantiation_state;
            type Body = schema::$instances::body;
            type CreatedAt = schema::$instances::created_at;
            type UpdatedAt = schema::$instances::updated_at;
            type RowVersion = schema::$instances::row_version;
            type Project = schema::$instances::project;
        }

        impl OpOccTable for schema::$op_occs::table {
            const SUBSCRIPTION_GENERATION: &'static str = generation_of!($major);
            type Id = schema::$op_occs::id;
            type VnfInstanceId = schema::$op_occs::vnf_instance_id;
            type Operation = schema::$op_occs::operation;
            type OperationState = schema::$op_occs::operation_state;
            type StateEnteredTime = schema::$op_occs::state_entered_time;
            type StartTime = schema::$op_occs::start_time;
            type IsAutomaticInvocation = schema::$op_occs::is_automatic_invocation;
            type IsCancelPending = schema::$op_occs::is_cancel_pending;
            type Body = schema::$op_occs::body;
            type PendingAction = schema::$op_occs::pending_action;
            type Owner = schema::$op_occs::owner;
            type LeaseExpiresAt = schema::$op_occs::lease_expires_at;
            type Attempt = schema::$op_occs::attempt;
            type CreatedAt = schema::$op_occs::created_at;
            type UpdatedAt = schema::$op_occs::updated_at;
            type Project = schema::$op_occs::project;
        }

        impl GrantTable for schema::$grants::table {
            type Id = schema::$grants::id;
            type VnfLcmOpOccId = schema::$grants::vnf_lcm_op_occ_id;
            type Body = schema::$grants::body;
            type CreatedAt = schema::$grants::created_at;
        }

        crate::repo::plain_subscriptions::subscription_table!($subscriptions);

        impl LccnSubscriptionTable for schema::$subscriptions::table {
            type Verbosity = schema::$subscriptions::verbosity;
        }
    };
}

lcm_family!(1, vnf_instances_v1, vnf_lcm_op_occs_v1, grants_v1, lccn_subscriptions_v1);
lcm_family!(2, vnf_instances_v2, vnf_lcm_op_occs_v2, grants_v2, lccn_subscriptions_v2);
