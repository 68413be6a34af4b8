-- The floor's read model (floorctl floor): never the record, always rebuildable from the
-- shipped events (floorctl floor index --rebuild). The store's own tables (events, rounds,
-- ...) belong to the audit store and its migrations; nothing here changes them.
--
-- floor_rounds and floor_flags are partitioned by month (UTC) on the time each round began
-- or each flag was raised; the indexer creates each month's partition before it writes to
-- it. Finding a round by table and time is an index probe on (table_id, started_at).

CREATE TABLE IF NOT EXISTS floor_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE IF NOT EXISTS floor_tables (
    table_id text PRIMARY KEY,
    game text NOT NULL,
    boxes integer NOT NULL,
    indexed_seq bigint NOT NULL DEFAULT 0,     -- the last event indexed
    last_event_at timestamptz,
    last_event_type text,
    status text NOT NULL DEFAULT 'between rounds',  -- dealing | between rounds | closed
    round_in_play integer,
    round_started_at timestamptz,
    rounds_played integer NOT NULL DEFAULT 0,
    shoe_seq bigint,
    dealer text,
    devices jsonb NOT NULL DEFAULT '{}',       -- device -> {"reason", "since", "seq"}
    day_started_at timestamptz,                -- the last open_table
    last_closed_seq bigint NOT NULL DEFAULT 0, -- the event that ended the last round
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS floor_rounds (
    table_id text NOT NULL,
    round integer NOT NULL,
    started_at timestamptz NOT NULL,   -- the event that opened it (its first bet)
    first_seq bigint NOT NULL,         -- the first event after the round before it ended
    open_seq bigint NOT NULL,
    closed_seq bigint,                 -- settled or voided at
    last_seq bigint NOT NULL,          -- the last event belonging to it (a flag after it)
    ended_at timestamptz,
    last_at timestamptz NOT NULL,
    status text NOT NULL,              -- in play | settled | void
    shoe_seq bigint,
    dealers text[] NOT NULL DEFAULT '{}',
    boxes integer NOT NULL DEFAULT 0,
    hands integer NOT NULL DEFAULT 0,
    wagered numeric(20, 2) NOT NULL DEFAULT 0,
    result numeric(20, 2) NOT NULL DEFAULT 0,  -- what the house won
    flags integer NOT NULL DEFAULT 0,
    rules text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (table_id, started_at, round)
) PARTITION BY RANGE (started_at);

CREATE INDEX IF NOT EXISTS floor_rounds_by_number ON floor_rounds (table_id, round);
CREATE INDEX IF NOT EXISTS floor_rounds_by_start ON floor_rounds (started_at);

CREATE TABLE IF NOT EXISTS floor_flags (
    table_id text NOT NULL,
    seq bigint NOT NULL,
    idx integer NOT NULL,
    at timestamptz NOT NULL,
    round integer NOT NULL,
    rule text NOT NULL,
    box integer,
    message text NOT NULL,
    dealer text,
    acknowledged_seq bigint,
    acknowledged_at timestamptz,
    acknowledged_by text,
    PRIMARY KEY (table_id, at, seq, idx)
) PARTITION BY RANGE (at);

CREATE INDEX IF NOT EXISTS floor_flags_by_rule ON floor_flags (rule, at);
CREATE INDEX IF NOT EXISTS floor_flags_by_seq ON floor_flags (table_id, seq);

CREATE TABLE IF NOT EXISTS floor_shoes (
    table_id text NOT NULL,
    seq bigint NOT NULL,               -- the shuffle (or 16.7 reshuffle) that loaded it
    kind text NOT NULL,
    loaded_at timestamptz NOT NULL,
    decks integer,
    ended_at timestamptz,
    reconciled boolean,                -- null: not reconciled (yet)
    missing jsonb NOT NULL DEFAULT '[]',
    extra jsonb NOT NULL DEFAULT '[]',
    inspected jsonb NOT NULL DEFAULT '[]',
    PRIMARY KEY (table_id, seq)
);

CREATE INDEX IF NOT EXISTS floor_shoes_by_time ON floor_shoes (table_id, loaded_at);

-- The chip tray and the drop of each table (the engine's tray records, one row per event):
-- counts (opener, check, closer) with what the tray should have held, fills and credits with
-- their slips, buy-ins, the count room's drops. day_seq: the opener of the gaming day the
-- event belongs to (a drop: the day it counts).
CREATE TABLE IF NOT EXISTS floor_tray (
    table_id text NOT NULL,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    kind text NOT NULL,                -- opener | check | closer | fill | credit | buy_in | drop
    detail text,                       -- a buy-in's cash | marker
    slip text,
    amount numeric(20, 2) NOT NULL,    -- counted, on the slip, bought in, dropped
    expected numeric(20, 2),           -- a count: what the tray should have held
    difference numeric(20, 2),         -- a count: counted - expected; a drop: drop - buy-ins
    house_net numeric(20, 2),          -- a count: the rounds' house net since the last count
    buy_ins numeric(20, 2),            -- a count: the buy-ins since the last count
    by_ids text[] NOT NULL DEFAULT '{}',
    dealer text,
    day_seq bigint,
    -- The table's running totals up to and including this row (a span's figure is the
    -- difference between its last count's and its first count's): fills, credits, buy-ins,
    -- and at its counts the rounds' house net, the tray's differences, the counts themselves.
    cum_fills numeric(20, 2) NOT NULL DEFAULT 0,
    cum_credits numeric(20, 2) NOT NULL DEFAULT 0,
    cum_buy_ins numeric(20, 2) NOT NULL DEFAULT 0,
    cum_house_net numeric(20, 2) NOT NULL DEFAULT 0,
    cum_difference numeric(20, 2) NOT NULL DEFAULT 0,
    cum_counts bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seq)
);

CREATE INDEX IF NOT EXISTS floor_tray_by_time ON floor_tray (at);
CREATE INDEX IF NOT EXISTS floor_tray_counts ON floor_tray (table_id, at)
    WHERE kind IN ('opener', 'check', 'closer');

-- Engine checkpoints (Table.snapshot()) taken just before each shuffle: a round is rebuilt
-- from the last one before it, not from the table line. 'resume' checkpoints let the indexer
-- pick up where it stopped.
CREATE TABLE IF NOT EXISTS floor_checkpoints (
    table_id text NOT NULL,
    seq bigint NOT NULL,
    kind text NOT NULL,
    snapshot text NOT NULL,
    state jsonb NOT NULL,
    PRIMARY KEY (table_id, seq)
);

CREATE TABLE IF NOT EXISTS floor_users (
    name text PRIMARY KEY,
    role text NOT NULL CHECK (role IN ('surveillance', 'pit')),
    password_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL,
    disabled_at timestamptz
);

-- Who looked at what: insert-only (the trigger below refuses UPDATE, DELETE and TRUNCATE).
CREATE TABLE IF NOT EXISTS floor_lookups (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    who text NOT NULL,
    role text NOT NULL,
    via text NOT NULL,                 -- web | cli
    what text NOT NULL,                -- floor, round, rounds, flags, report, evidence, login...
    params jsonb NOT NULL DEFAULT '{}',
    outcome text NOT NULL,
    client text
);

CREATE INDEX IF NOT EXISTS floor_lookups_by_who ON floor_lookups (who, at);

CREATE OR REPLACE FUNCTION floor_lookups_insert_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'floor_lookups is insert-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS floor_lookups_no_change ON floor_lookups;
CREATE TRIGGER floor_lookups_no_change BEFORE UPDATE OR DELETE ON floor_lookups
    FOR EACH ROW EXECUTE FUNCTION floor_lookups_insert_only();
DROP TRIGGER IF EXISTS floor_lookups_no_truncate ON floor_lookups;
CREATE TRIGGER floor_lookups_no_truncate BEFORE TRUNCATE ON floor_lookups
    FOR EACH STATEMENT EXECUTE FUNCTION floor_lookups_insert_only();
