-- A token minted by another never outlives it, and neither does a
-- calendar link: revoking a token revokes what it minted, at any depth,
-- and the links they made, and a minted token expires at the latest with
-- its parent. Before this migration neither held; this brings the tokens
-- and links already there under the rule. Done also checks the chain of
-- origins on every use, whatever the rows say.
CREATE TEMP TABLE token_chain AS
WITH RECURSIVE chain(id, ancestor) AS (
    SELECT id, created_by FROM tokens WHERE created_by IS NOT NULL
    UNION SELECT c.id, k.created_by FROM chain c JOIN tokens k ON k.id = c.ancestor WHERE k.created_by IS NOT NULL)
SELECT id, ancestor FROM chain;

UPDATE tokens SET revoked_at = (
    SELECT min(a.revoked_at) FROM token_chain c JOIN tokens a ON a.id = c.ancestor WHERE c.id = tokens.id)
WHERE revoked_at IS NULL AND EXISTS (
    SELECT 1 FROM token_chain c JOIN tokens a ON a.id = c.ancestor WHERE c.id = tokens.id AND a.revoked_at IS NOT NULL);

UPDATE tokens SET expires_at = (
    SELECT min(a.expires_at) FROM token_chain c JOIN tokens a ON a.id = c.ancestor WHERE c.id = tokens.id)
WHERE EXISTS (
    SELECT 1 FROM token_chain c JOIN tokens a ON a.id = c.ancestor WHERE c.id = tokens.id
    AND a.expires_at IS NOT NULL AND (tokens.expires_at IS NULL OR a.expires_at < tokens.expires_at));

UPDATE calendar_links SET revoked_at = (SELECT k.revoked_at FROM tokens k WHERE k.id = calendar_links.created_by)
WHERE revoked_at IS NULL AND created_by IN (SELECT id FROM tokens WHERE revoked_at IS NOT NULL);

DROP TABLE token_chain;
