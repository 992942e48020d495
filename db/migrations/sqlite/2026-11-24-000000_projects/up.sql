-- Tenancy: every resource a client creates carries the project of its creator (empty:
-- created without authentication, or a subscription of an administrator, which hears
-- every project). Lists of a non-admin are restricted by this column in SQL.
ALTER TABLE vnf_packages ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE vnf_instances_v1 ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE vnf_instances_v2 ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE vnf_lcm_op_occs_v1 ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE vnf_lcm_op_occs_v2 ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE lccn_subscriptions_v1 ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE lccn_subscriptions_v2 ADD COLUMN project TEXT NOT NULL DEFAULT '';
CREATE INDEX vnf_packages_project ON vnf_packages (project, id);
CREATE INDEX vnf_instances_v1_project ON vnf_instances_v1 (project, id);
CREATE INDEX vnf_instances_v2_project ON vnf_instances_v2 (project, id);
CREATE INDEX vnf_lcm_op_occs_v1_project ON vnf_lcm_op_occs_v1 (project, id);
CREATE INDEX vnf_lcm_op_occs_v2_project ON vnf_lcm_op_occs_v2 (project, id);
CREATE INDEX lccn_subscriptions_v1_project ON lccn_subscriptions_v1 (project, id);
CREATE INDEX lccn_subscriptions_v2_project ON lccn_subscriptions_v2 (project, id);
