package mcpeffect_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpeffect/mcpeffect"
)

func Example() {
	r := mcpeffect.NewRegistry()
	r.Add("get_task", mcpeffect.Read)
	r.Add("create_task", mcpeffect.Write)
	r.Add("delete_task", mcpeffect.Destructive|mcpeffect.Idempotent)

	// What the server advertises...
	a := r.Annotations("delete_task")
	fmt.Println("delete_task destructive:", *a.DestructiveHint)

	// ...and what it enforces come from the same classification.
	for _, tool := range []string{"get_task", "create_task", "delete_task"} {
		fmt.Printf("%s: read-only %t, non-destructive %t\n", tool,
			r.Allowed(tool, mcpeffect.ReadOnly), r.Allowed(tool, mcpeffect.NonDestructive))
	}
	// Output:
	// delete_task destructive: true
	// get_task: read-only true, non-destructive true
	// create_task: read-only false, non-destructive true
	// delete_task: read-only false, non-destructive false
}

func ExampleRegistry_Add() {
	r := mcpeffect.NewRegistry()
	fmt.Println(r.Add("get_task", mcpeffect.Read|mcpeffect.Destructive))
	fmt.Println(r.Add("get task", mcpeffect.Read))
	fmt.Println(r.Add("get_task", mcpeffect.Read))
	fmt.Println(r.Add("get_task", mcpeffect.Read))
	// Output:
	// mcpeffect: tool "get_task": Read cannot be combined with Destructive
	// mcpeffect: tool name "get task": character ' ' at byte 3 is not allowed (want A-Z a-z 0-9 _ - .)
	// <nil>
	// mcpeffect: tool "get_task" is already classified as read
}

func ExampleRegistry_Annotations() {
	r := mcpeffect.NewRegistry()
	r.Add("update_task", mcpeffect.Destructive|mcpeffect.Idempotent)

	for _, name := range []string{"update_task", "not_classified"} {
		a := r.Annotations(name)
		fmt.Printf("%s: readOnly=%t destructive=%t idempotent=%t openWorld=%t\n",
			name, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint)
	}
	// Output:
	// update_task: readOnly=false destructive=true idempotent=true openWorld=false
	// not_classified: readOnly=false destructive=true idempotent=false openWorld=true
}

func ExampleRegistry_All() {
	r := mcpeffect.NewRegistry()
	r.Add("search_context", mcpeffect.Read|mcpeffect.OpenWorld)
	r.Add("add_label", mcpeffect.Idempotent)
	r.Add("comment_on_task", mcpeffect.Write)
	for name, e := range r.All() {
		need, _ := r.Required(name)
		fmt.Printf("%-16s %-22s needs %s\n", name, e, need)
	}
	// Output:
	// add_label        write|idempotent       needs non-destructive
	// comment_on_task  write                  needs non-destructive
	// search_context   read|openworld         needs read-only
}

func ExampleScopeNames() {
	// The default names.
	var names mcpeffect.ScopeNames
	fmt.Println(names.Scope([]string{"openid", "tools:write"}))
	fmt.Println(names.Name(mcpeffect.Full))

	// Names of your own, as your authorization server issues them.
	done := mcpeffect.ScopeNames{ReadOnly: "done:read", NonDestructive: "done:write", Full: "done:admin"}
	fmt.Println(done.Scope([]string{"done:read"}))
	fmt.Println(done.Strings())
	// Output:
	// non-destructive
	// tools:destructive
	// read-only
	// [done:read done:write done:admin]
}

// Effects have a text form, so they can live in configuration files.
func ExampleEffect_UnmarshalText() {
	config := []byte(`{
		"get_task":    "read",
		"update_task": "destructive|idempotent",
		"save_doc":    "write|openworld"
	}`)
	var effects map[string]mcpeffect.Effect
	if err := json.Unmarshal(config, &effects); err != nil {
		log.Fatal(err)
	}
	r := mcpeffect.NewRegistry()
	for name, e := range effects {
		if err := r.Add(name, e); err != nil {
			log.Fatal(err)
		}
	}
	for name, e := range r.All() {
		fmt.Println(name, e)
	}

	var bad map[string]mcpeffect.Effect
	fmt.Println(json.Unmarshal([]byte(`{"x": "read|delete"}`), &bad))
	// Output:
	// get_task read
	// save_doc write|openworld
	// update_task write|destructive|idempotent
	// mcpeffect: effect "read|delete": unknown flag "delete" (want read, write, destructive, idempotent or openworld)
}
