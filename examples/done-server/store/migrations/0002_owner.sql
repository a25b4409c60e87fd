-- The local owner. Over stdio without DONE_TOKEN, Done serves as the owner
-- of its data directory: whoever can run the process already holds the
-- database. The owner is a token like any other (a person with full scope,
-- whose secret nobody ever saw), marked here so that every later start
-- finds it, and so that revoking it ends that way of serving.
ALTER TABLE tokens ADD COLUMN owner INTEGER NOT NULL DEFAULT 0 CHECK (owner IN (0, 1));
CREATE UNIQUE INDEX tokens_one_owner ON tokens (owner) WHERE owner = 1;
