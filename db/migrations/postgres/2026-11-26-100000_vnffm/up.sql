-- VNF Fault Management v1 (SOL003 clause 7): alarms raised from Alertmanager's alerts, and
-- FM subscriptions. Per-major tables, as the LCM ones.
CREATE TABLE alarms_v1 (
    id TEXT PRIMARY KEY NOT NULL,
    -- The VNF instance (managedObjectId) and the Alertmanager fingerprint of the alert that
    -- raised it: an alert raises one alarm until it is resolved.
    managed_object_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    ack_state TEXT NOT NULL,
    perceived_severity TEXT NOT NULL,
    event_type TEXT NOT NULL,
    probable_cause TEXT NOT NULL,
    alarm_raised_time TEXT NOT NULL,
    -- NULL while the alarm is active.
    alarm_cleared_time TEXT,
    body TEXT NOT NULL,
    row_version BIGINT NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX alarms_v1_active ON alarms_v1 (managed_object_id, fingerprint) WHERE alarm_cleared_time IS NULL;
CREATE INDEX alarms_v1_project ON alarms_v1 (project, id);

-- FmSubscriptions: shaped like the package subscriptions (FmSubscription has no verbosity).
CREATE TABLE fm_subscriptions_v1 (
    id TEXT PRIMARY KEY NOT NULL,
    callback_uri TEXT NOT NULL,
    body TEXT NOT NULL,
    authentication TEXT,
    dedup_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX fm_subscriptions_v1_dedup ON fm_subscriptions_v1 (dedup_key);
CREATE INDEX fm_subscriptions_v1_project ON fm_subscriptions_v1 (project, id);
