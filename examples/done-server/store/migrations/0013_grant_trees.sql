-- The walks of a tree of tokens (the cap of live tokens a tree may hold,
-- checked at each mint; a revocation, which ends all that a token minted
-- and the calendar links of those) step from a token to what it minted.
-- Without these indexes SQLite built a temporary one at each walk, from
-- every token and every link there is.
CREATE INDEX tokens_created_by ON tokens (created_by);
CREATE INDEX calendar_links_created_by ON calendar_links (created_by);
