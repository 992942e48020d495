DELETE FROM notifications WHERE api <> 'vnflcm';
ALTER TABLE notifications DROP COLUMN api;
DROP INDEX pkgm_subscriptions_project;
DROP INDEX pkgm_subscriptions_dedup;
DROP TABLE pkgm_subscriptions;
