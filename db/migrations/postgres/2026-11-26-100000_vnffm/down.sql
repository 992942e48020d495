DROP TABLE fm_subscriptions_v1;
DROP TABLE alarms_v1;
