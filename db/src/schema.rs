// Diesel table definitions matching migrations/{sqlite,postgres}, restricted to types
// both backends share (TEXT for JSON documents and timestamps).

diesel::table! {
    vnf_packages (id) {
        id -> Text,
        onboarding_state -> Text,
        operational_state -> Text,
        usage_state -> Text,
        vnfd_id -> Nullable<Text>,
        vnf_provider -> Nullable<Text>,
        vnf_product_name -> Nullable<Text>,
        vnf_software_version -> Nullable<Text>,
        vnfd_version -> Nullable<Text>,
        body -> Text,
        vnfd -> Nullable<Text>,
        upload_source -> Nullable<Text>,
        created_at -> Text,
        updated_at -> Text,
        row_version -> BigInt,
        project -> Text,
    }
}

diesel::table! {
    vnf_instances_v2 (id) {
        id -> Text,
        vnf_instance_name -> Nullable<Text>,
        vnfd_id -> Text,
        vnf_pkg_id -> Text,
        vnf_provider -> Text,
        vnf_product_name -> Text,
        vnf_software_version -> Text,
        vnfd_version -> Text,
        instantiation_state -> Text,
        body -> Text,
        created_at -> Text,
        updated_at -> Text,
        row_version -> BigInt,
        project -> Text,
    }
}

diesel::table! {
    vnf_lcm_op_occs_v2 (id) {
        id -> Text,
        vnf_instance_id -> Text,
        operation -> Text,
        operation_state -> Text,
        state_entered_time -> Text,
        start_time -> Text,
        is_automatic_invocation -> Bool,
        is_cancel_pending -> Bool,
        body -> Text,
        pending_action -> Nullable<Text>,
        owner -> Nullable<Text>,
        lease_expires_at -> Nullable<Text>,
        attempt -> Integer,
        created_at -> Text,
        updated_at -> Text,
        project -> Text,
    }
}

diesel::table! {
    grants_v2 (id) {
        id -> Text,
        vnf_lcm_op_occ_id -> Text,
        body -> Text,
        created_at -> Text,
    }
}

diesel::table! {
    lccn_subscriptions_v2 (id) {
        id -> Text,
        callback_uri -> Text,
        verbosity -> Text,
        body -> Text,
        authentication -> Nullable<Text>,
        dedup_key -> Text,
        created_at -> Text,
        project -> Text,
    }
}

diesel::table! {
    lccn_subscription_generations (major) {
        major -> Integer,
        generation -> BigInt,
    }
}

diesel::table! {
    vnf_instances_v1 (id) {
        id -> Text,
        vnf_instance_name -> Nullable<Text>,
        vnfd_id -> Text,
        vnf_pkg_id -> Text,
        vnf_provider -> Text,
        vnf_product_name -> Text,
        vnf_software_version -> Text,
        vnfd_version -> Text,
        instantiation_state -> Text,
        body -> Text,
        created_at -> Text,
        updated_at -> Text,
        row_version -> BigInt,
        project -> Text,
    }
}

diesel::table! {
    vnf_lcm_op_occs_v1 (id) {
        id -> Text,
        vnf_instance_id -> Text,
        operation -> Text,
        operation_state -> Text,
        state_entered_time -> Text,
        start_time -> Text,
        is_automatic_invocation -> Bool,
        is_cancel_pending -> Bool,
        body -> Text,
        pending_action -> Nullable<Text>,
        owner -> Nullable<Text>,
        lease_expires_at -> Nullable<Text>,
        attempt -> Integer,
        created_at -> Text,
        updated_at -> Text,
        project -> Text,
    }
}

diesel::table! {
    grants_v1 (id) {
        id -> Text,
        vnf_lcm_op_occ_id -> Text,
        body -> Text,
        created_at -> Text,
    }
}

diesel::table! {
    lccn_subscriptions_v1 (id) {
        id -> Text,
        callback_uri -> Text,
        verbosity -> Text,
        body -> Text,
        authentication -> Nullable<Text>,
        dedup_key -> Text,
        created_at -> Text,
        project -> Text,
    }
}

diesel::table! {
    conductors (id) {
        id -> Text,
        hostname -> Text,
        started_at -> Text,
        heartbeat_at -> Text,
    }
}

diesel::table! {
    rpc_outbox (id) {
        id -> BigInt,
        kind -> Text,
        target_id -> Text,
        major -> Integer,
        created_at -> Text,
        published_at -> Nullable<Text>,
        publish_attempts -> Integer,
    }
}

diesel::table! {
    notifications (id) {
        id -> BigInt,
        notification_id -> Text,
        subscription_id -> Text,
        major -> Integer,
        notification_type -> Text,
        body -> Text,
        state -> Text,
        attempts -> Integer,
        next_attempt_at -> Text,
        last_error -> Nullable<Text>,
        created_at -> Text,
        delivered_at -> Nullable<Text>,
        claimed_by -> Nullable<Text>,
        claim_expires_at -> Nullable<Text>,
        api -> Text,
    }
}

diesel::table! {
    pkgm_subscriptions (id) {
        id -> Text,
        callback_uri -> Text,
        body -> Text,
        authentication -> Nullable<Text>,
        dedup_key -> Text,
        created_at -> Text,
        project -> Text,
    }
}

diesel::table! {
    vims (id) {
        id -> Text,
        project -> Text,
        name -> Text,
        vim_type -> Text,
        is_default -> Bool,
        body -> Text,
        created_at -> Text,
        updated_at -> Nullable<Text>,
    }
}

diesel::table! {
    alarms_v1 (id) {
        id -> Text,
        managed_object_id -> Text,
        fingerprint -> Text,
        ack_state -> Text,
        perceived_severity -> Text,
        event_type -> Text,
        probable_cause -> Text,
        alarm_raised_time -> Text,
        alarm_cleared_time -> Nullable<Text>,
        body -> Text,
        row_version -> BigInt,
        created_at -> Text,
        updated_at -> Text,
        project -> Text,
    }
}

diesel::table! {
    fm_subscriptions_v1 (id) {
        id -> Text,
        callback_uri -> Text,
        body -> Text,
        authentication -> Nullable<Text>,
        dedup_key -> Text,
        created_at -> Text,
        project -> Text,
    }
}

diesel::table! {
    pm_jobs_v2 (id) {
        id -> Text,
        object_type -> Text,
        callback_uri -> Text,
        body -> Text,
        authentication -> Nullable<Text>,
        created_at -> Text,
        updated_at -> Text,
        row_version -> BigInt,
        project -> Text,
    }
}

diesel::table! {
    pm_reports_v2 (id) {
        id -> Text,
        job_id -> Text,
        ready_time -> Text,
        body -> Text,
        created_at -> Text,
    }
}

diesel::table! {
    pm_thresholds_v2 (id) {
        id -> Text,
        object_type -> Text,
        object_instance_id -> Text,
        callback_uri -> Text,
        body -> Text,
        authentication -> Nullable<Text>,
        created_at -> Text,
        updated_at -> Text,
        row_version -> BigInt,
        project -> Text,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    vnf_packages,
    vnf_instances_v2,
    vnf_lcm_op_occs_v2,
    grants_v2,
    lccn_subscriptions_v2,
    vnf_instances_v1,
    vnf_lcm_op_occs_v1,
    grants_v1,
    lccn_subscriptions_v1,
    conductors,
    rpc_outbox,
    notifications,
    pkgm_subscriptions,
    vims,
    alarms_v1,
    fm_subscriptions_v1,
    pm_jobs_v2,
    pm_reports_v2,
    pm_thresholds_v2,
);
