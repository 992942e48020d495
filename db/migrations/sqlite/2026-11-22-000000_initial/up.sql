-- solgate's initial schema. Resources are stored as their SOL JSON document (`body`,
-- in the newest minor's shape of their major) plus the top-level attributes that lists
-- filter and sort on, as indexed columns. Timestamps are RFC 3339 UTC text with fixed
-- microsecond precision, so text order is time order on both backends.

-- VNF package management (one major: v1).
CREATE TABLE vnf_packages (
    id TEXT PRIMARY KEY NOT NULL,
    onboarding_state TEXT NOT NULL,
    operational_state TEXT NOT NULL,
    usage_state TEXT NOT NULL,
    vnfd_id TEXT,
    vnf_provider TEXT,
    vnf_product_name TEXT,
    vnf_software_version TEXT,
    vnfd_version TEXT,
    body TEXT NOT NULL,
    vnfd TEXT,
    upload_source TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    row_version BIGINT NOT NULL DEFAULT 0
);
-- One onboarded package per vnfdId: a second onboarding of the same VNFD fails cleanly.
CREATE UNIQUE INDEX vnf_packages_vnfd_id ON vnf_packages (vnfd_id) WHERE vnfd_id IS NOT NULL;
CREATE INDEX vnf_packages_onboarding_state ON vnf_packages (onboarding_state, id);

-- VNF LCM, per major version.
CREATE TABLE vnf_instances_v2 (
    id TEXT PRIMARY KEY NOT NULL,
    vnf_instance_name TEXT,
    vnfd_id TEXT NOT NULL,
    vnf_pkg_id TEXT NOT NULL,
    vnf_provider TEXT NOT NULL,
    vnf_product_name TEXT NOT NULL,
    vnf_software_version TEXT NOT NULL,
    vnfd_version TEXT NOT NULL,
    instantiation_state TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    row_version BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX vnf_instances_v2_vnfd_id ON vnf_instances_v2 (vnfd_id, id);
CREATE INDEX vnf_instances_v2_pkg ON vnf_instances_v2 (vnf_pkg_id);
CREATE INDEX vnf_instances_v2_state ON vnf_instances_v2 (instantiation_state, id);
CREATE INDEX vnf_instances_v2_name ON vnf_instances_v2 (vnf_instance_name, id);

CREATE TABLE vnf_lcm_op_occs_v2 (
    id TEXT PRIMARY KEY NOT NULL,
    vnf_instance_id TEXT NOT NULL,
    operation TEXT NOT NULL,
    operation_state TEXT NOT NULL,
    state_entered_time TEXT NOT NULL,
    start_time TEXT NOT NULL,
    is_automatic_invocation BOOLEAN NOT NULL,
    is_cancel_pending BOOLEAN NOT NULL,
    body TEXT NOT NULL,
    pending_action TEXT,
    owner TEXT,
    lease_expires_at TEXT,
    attempt INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- At most one operation in flight per VNF instance, enforced by the database (Tacker's
-- host-local lock let two gateways both answer 202).
CREATE UNIQUE INDEX vnf_lcm_op_occs_v2_in_flight ON vnf_lcm_op_occs_v2 (vnf_instance_id)
    WHERE operation_state IN ('STARTING', 'PROCESSING', 'ROLLING_BACK', 'FAILED_TEMP');
CREATE INDEX vnf_lcm_op_occs_v2_instance ON vnf_lcm_op_occs_v2 (vnf_instance_id, id);
CREATE INDEX vnf_lcm_op_occs_v2_state ON vnf_lcm_op_occs_v2 (operation_state, id);
CREATE INDEX vnf_lcm_op_occs_v2_owner ON vnf_lcm_op_occs_v2 (owner);

CREATE TABLE grants_v2 (
    id TEXT PRIMARY KEY NOT NULL,
    vnf_lcm_op_occ_id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX grants_v2_op ON grants_v2 (vnf_lcm_op_occ_id);

CREATE TABLE lccn_subscriptions_v2 (
    id TEXT PRIMARY KEY NOT NULL,
    callback_uri TEXT NOT NULL,
    verbosity TEXT NOT NULL,
    body TEXT NOT NULL,
    authentication TEXT,
    dedup_key TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX lccn_subscriptions_v2_dedup ON lccn_subscriptions_v2 (dedup_key);

CREATE TABLE vnf_instances_v1 (
    id TEXT PRIMARY KEY NOT NULL,
    vnf_instance_name TEXT,
    vnfd_id TEXT NOT NULL,
    vnf_pkg_id TEXT NOT NULL,
    vnf_provider TEXT NOT NULL,
    vnf_product_name TEXT NOT NULL,
    vnf_software_version TEXT NOT NULL,
    vnfd_version TEXT NOT NULL,
    instantiation_state TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    row_version BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX vnf_instances_v1_vnfd_id ON vnf_instances_v1 (vnfd_id, id);
CREATE INDEX vnf_instances_v1_pkg ON vnf_instances_v1 (vnf_pkg_id);
CREATE INDEX vnf_instances_v1_state ON vnf_instances_v1 (instantiation_state, id);
CREATE INDEX vnf_instances_v1_name ON vnf_instances_v1 (vnf_instance_name, id);

CREATE TABLE vnf_lcm_op_occs_v1 (
    id TEXT PRIMARY KEY NOT NULL,
    vnf_instance_id TEXT NOT NULL,
    operation TEXT NOT NULL,
    operation_state TEXT NOT NULL,
    state_entered_time TEXT NOT NULL,
    start_time TEXT NOT NULL,
    is_automatic_invocation BOOLEAN NOT NULL,
    is_cancel_pending BOOLEAN NOT NULL,
    body TEXT NOT NULL,
    pending_action TEXT,
    owner TEXT,
    lease_expires_at TEXT,
    attempt INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX vnf_lcm_op_occs_v1_in_flight ON vnf_lcm_op_occs_v1 (vnf_instance_id)
    WHERE operation_state IN ('STARTING', 'PROCESSING', 'ROLLING_BACK', 'FAILED_TEMP');
CREATE INDEX vnf_lcm_op_occs_v1_instance ON vnf_lcm_op_occs_v1 (vnf_instance_id, id);
CREATE INDEX vnf_lcm_op_occs_v1_state ON vnf_lcm_op_occs_v1 (operation_state, id);
CREATE INDEX vnf_lcm_op_occs_v1_owner ON vnf_lcm_op_occs_v1 (owner);

CREATE TABLE grants_v1 (
    id TEXT PRIMARY KEY NOT NULL,
    vnf_lcm_op_occ_id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX grants_v1_op ON grants_v1 (vnf_lcm_op_occ_id);

CREATE TABLE lccn_subscriptions_v1 (
    id TEXT PRIMARY KEY NOT NULL,
    callback_uri TEXT NOT NULL,
    verbosity TEXT NOT NULL,
    body TEXT NOT NULL,
    authentication TEXT,
    dedup_key TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX lccn_subscriptions_v1_dedup ON lccn_subscriptions_v1 (dedup_key);

-- Conductors alive (heartbeat); an operation owned by a conductor whose heartbeat is
-- stale is recovered by a live one.
CREATE TABLE conductors (
    id TEXT PRIMARY KEY NOT NULL,
    hostname TEXT NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL
);

-- Work committed together with the state that asks for it; the relay publishes what
-- the broker has not confirmed.
CREATE TABLE rpc_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    kind TEXT NOT NULL,
    target_id TEXT NOT NULL,
    major INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    published_at TEXT,
    publish_attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX rpc_outbox_target ON rpc_outbox (target_id);
CREATE INDEX rpc_outbox_published ON rpc_outbox (published_at, id);

-- Notifications to deliver, per subscription in id order.
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    notification_id TEXT NOT NULL,
    subscription_id TEXT NOT NULL,
    major INTEGER NOT NULL,
    notification_type TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error TEXT,
    created_at TEXT NOT NULL,
    delivered_at TEXT,
    claimed_by TEXT,
    claim_expires_at TEXT
);
CREATE INDEX notifications_pending ON notifications (state, subscription_id, id);
