package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mcpeffect/mcpeffect"
)

// trashDeletions are Done's tools that move something to the Trash, each
// with the argument that names what it moves: the id that
// restore_from_trash takes back, as item_id. TestTrashRecoveries holds
// the list to the tools' descriptions in done/tools.tsv and to what each
// call does.
var trashDeletions = map[string]string{
	"delete_task":    "task_id",
	"delete_project": "project_id",
	"delete_step":    "step_id",
	"delete_comment": "comment_id",
}

// undoTool is the tool that undoes every deletion of Done.
const undoTool = "restore_from_trash"

// declareRecoveries declares, in registry, that each of trashDeletions is
// undone by restore_from_trash (SEP-3172), so that each publishes it when
// listed (see mcpeffect.RecoveryMetaKey).
//
// The item to restore is bound from the call's arguments
// ($request.body#/task_id), not from its answer's item_id: the two are
// the same item when the call moved it, but a call on a task already in
// the Trash with its project answers with the project's entry, and its
// undo must not restore the whole project, which that call did not
// delete; bound to the task, the undo is refused, saying to restore the
// project instead.
func declareRecoveries(registry *mcpeffect.Registry) {
	for _, tool := range slices.Sorted(maps.Keys(trashDeletions)) {
		rec := mcpeffect.Compensation(undoTool, map[string]string{"item_id": mcpeffect.RequestBodyExpression + "/" + trashDeletions[tool]})
		if err := registry.DeclareRecovery(tool, rec); err != nil {
			// The tools of this package, classified above: a bug here.
			panic(fmt.Sprintf("done: %v", err))
		}
	}
}
