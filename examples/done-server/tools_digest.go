package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// Digests are made from the activity log when they are read, one per UTC
// day or ISO week; only who read which is stored.
func (d *done) addDigestTools(t toolbox) {
	addTool(t, "get_digest", "Get digest",
		"A digest: what changed in a day or a week (from the activity log), what waits for a human now (approvals to decide, failing runs), and what is blocked. Without digest_id, the current day's or week's.",
		mcpeffect.Read, d.getDigest)
	addTool(t, "list_digests", "List digests",
		"Daily or weekly digests, newest first: the current one, then each past period with changes, with how many changes each holds and how many the caller has not read."+paged,
		mcpeffect.Read, d.listDigests)

	addTool(t, "mark_digest_read", "Mark digest read",
		"Mark a digest read by the caller: its changes until now count as read. No-op if already read and nothing changed since.",
		mcpeffect.Idempotent, d.markDigestRead)
}

type getDigestArgs struct {
	DigestID string       `json:"digest_id,omitempty" jsonschema:"the digest, such as day-2025-06-02 or week-2025-W23 (from list_digests); left out, the current one"`
	Period   store.Period `json:"period,omitempty" jsonschema:"daily (the default) or weekly, for the current digest"`
}

func (d *done) getDigest(ctx context.Context, in getDigestArgs) (store.Digest, error) {
	return d.store.GetDigest(ctx, caller(ctx), in.DigestID, in.Period)
}

type listDigestsArgs struct {
	Period store.Period `json:"period,omitempty" jsonschema:"daily (the default) or weekly"`
	Cursor string       `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	Limit  int          `json:"limit,omitempty" jsonschema:"the most digests to return (1 to 200; default 50)"`
}

func (d *done) listDigests(ctx context.Context, in listDigestsArgs) (store.DigestPage, error) {
	return d.store.ListDigests(ctx, caller(ctx), in.Period, in.Cursor, in.Limit)
}

type digestArg struct {
	DigestID string `json:"digest_id" jsonschema:"the digest, such as day-2025-06-02 or week-2025-W23"`
}

func (d *done) markDigestRead(ctx context.Context, in digestArg) (store.DigestRead, error) {
	return d.store.MarkDigestRead(ctx, caller(ctx), in.DigestID)
}
