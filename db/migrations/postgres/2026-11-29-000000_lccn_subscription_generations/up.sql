-- One row per LCM major, moved on by every change to that major's subscriptions in the
-- change's own transaction. A transition reads it with its first statement and reuses the
-- subscriptions it read at that generation, without reading them again. It starts at a
-- random value, so two databases seen by one process do not share generations.
CREATE TABLE lccn_subscription_generations (
    major INTEGER PRIMARY KEY,
    generation BIGINT NOT NULL
);
INSERT INTO lccn_subscription_generations (major, generation)
SELECT major, floor(random() * 1e15)::bigint FROM (VALUES (1), (2)) AS majors (major);
