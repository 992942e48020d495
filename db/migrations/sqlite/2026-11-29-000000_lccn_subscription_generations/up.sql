-- One row per LCM major, moved on by every change to that major's subscriptions in the
-- change's own transaction (see the PostgreSQL migration; SQLite reads the subscriptions
-- themselves, which costs no round trip there). It starts at a random value.
CREATE TABLE lccn_subscription_generations (
    major INTEGER PRIMARY KEY NOT NULL,
    generation BIGINT NOT NULL
);
INSERT INTO lccn_subscription_generations (major, generation) VALUES
    (1, abs(random() % 1000000000000000)),
    (2, abs(random() % 1000000000000000));
