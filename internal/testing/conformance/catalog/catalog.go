// Package catalog is what mcpeffect's conformance servers offer: the
// tools, resources and prompts that the official MCP conformance suite
// (@modelcontextprotocol/conformance) expects of a server, each with its
// classification, and the fixed content they answer with.
//
// Two servers are built from it: the go-sdk one (internal/conformance/server)
// and the mcp-go one (mcpgo/internal/conformance, in the mcpgo module). The
// table lives here, in the library's module and free of any SDK, so that
// both classify every tool, resource and prompt the same way without the
// library depending on mcp-go; each server's tests hold its registry to the
// table with [Check].
package catalog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"slices"

	"github.com/mcpeffect/mcpeffect"
)

// The effects of the tools, each what the tool does to the server's state:
// most only answer, and are reads. The two triggers add a tool or a prompt
// to the server, which every client then lists: additive writes, and
// idempotent, since adding the same one again changes nothing more.
// Sampling asks the client's model, which answers from outside anything the
// server knows: an open world.
const (
	Answers  = mcpeffect.Read
	Samples  = mcpeffect.Read | mcpeffect.OpenWorld
	AddsOnce = mcpeffect.Write | mcpeffect.Idempotent
)

// A Tool is one tool of the conformance servers.
type Tool struct {
	Name, Description string
	Effect            mcpeffect.Effect
}

// Tools are the tools every conformance server offers from its start, by
// name. (TransientTool is added by a call.)
var Tools = index([]Tool{
	{"test_simple_text", "Answers with one text.", Answers},
	{"test_image_content", "Answers with an image.", Answers},
	{"test_audio_content", "Answers with a sound.", Answers},
	{"test_embedded_resource", "Answers with an embedded resource.", Answers},
	{"test_multiple_content_types", "Answers with a text, an image and an embedded resource.", Answers},
	{"test_tool_with_logging", "Logs three messages as it runs.", Answers},
	{"test_tool_with_progress", "Reports its progress three times.", Answers},
	{"test_error_handling", "Always fails, as a tool error.", Answers},
	{"test_sampling", "Asks the client's model to answer a prompt.", Samples},
	{"test_elicitation", "Asks the person for a username.", Answers},
	{"test_elicitation_sep1034_defaults", "Asks the person for values that have defaults (SEP-1034).", Answers},
	{"test_elicitation_sep1330_enums", "Asks the person to choose among enums (SEP-1330).", Answers},
	{"test_reconnection", "Closes its SSE stream mid-call; the result comes after the client reconnects (SEP-1699).", Answers},
	{"test_missing_capability", "Needs the client's sampling capability, and says so when the client has none (SEP-2575).", Answers},
	{"test_streaming_elicitation", "Answers on its response stream with the result alone (SEP-2575).", Answers},
	{"test_logging_tool", "Logs one message, which the client gets only if it asked for logs (SEP-2575).", Answers},
	{"test_trigger_tool_change", "Adds a tool to the server, so that clients are told the tool list changed.", AddsOnce},
	{"test_trigger_prompt_change", "Adds a prompt to the server, so that clients are told the prompt list changed.", AddsOnce},
	{"json_schema_2020_12_tool", "Has an input schema that uses JSON Schema 2020-12 (SEP-1613, SEP-2106).", Answers},
	{"test_x_mcp_header", "Has an argument mirrored into the Mcp-Param-Region header (SEP-2243).", Answers},
	// The tools of the 2026-07-28 protocol's multi-round-trip requests
	// (SEP-2322): instead of sending a request to the client while a call
	// runs, a tool answers with the input it needs, and the client calls
	// again with the answers and the requestState the tool gave. Each is a
	// read: what it asks only shapes its answer.
	{"test_input_required_result_elicitation", "Asks the person's name, in band.", Answers},
	{"test_input_required_result_sampling", "Asks the client's model a question, in band.", Answers},
	{"test_input_required_result_list_roots", "Asks the client's roots, in band.", Answers},
	{"test_input_required_result_request_state", "Asks for a confirmation, with a requestState it checks on the retry.", Answers},
	{"test_input_required_result_tampered_state", "Refuses a retry whose requestState it did not make.", Answers},
	{"test_input_required_result_multiple_inputs", "Asks for a name, a model's greeting and the roots, in one round.", Answers},
	{"test_input_required_result_multi_round", "Asks a name, then a colour, in two rounds whose state it carries.", Answers},
	{"test_input_required_result_capabilities", "Asks only for the input the client said it can give.", Answers},
}, func(t Tool) string { return t.Name })

// TransientTool is the tool that test_trigger_tool_change adds.
var TransientTool = Tool{"transient_tool", "Added by test_trigger_tool_change.", Answers}

// The scopes of resources and prompts are the server's access policy, not
// an effect: reading changes nothing, but some data is for some callers
// only. Most are read-only; the binary resource needs the full scope, the
// template's resources and the prompt with an embedded resource the
// non-destructive one, so that the suite's own calls prove both levels of
// refusal, as the tools' effects do.
const (
	BinaryScope   = mcpeffect.Full
	TemplateScope = mcpeffect.NonDestructive
	EmbedScope    = mcpeffect.NonDestructive
)

// A Resource is one resource, or resource template, of the conformance
// servers.
type Resource struct {
	// URI is the resource's URI, or the template's URI template.
	URI                     string
	Template                bool
	Name, Description, MIME string
	Scope                   mcpeffect.Scope
}

// WatchedURI is the resource that changes every few seconds, for the
// subscription scenarios.
const WatchedURI = "test://watched-resource"

// Resources are the resources and templates of the conformance servers,
// by URI (or URI template).
var Resources = index([]Resource{
	{URI: "test://static-text", Name: "static-text", Description: "A text that never changes.", MIME: "text/plain", Scope: mcpeffect.ReadOnly},
	{URI: "test://static-binary", Name: "static-binary", Description: "An image, for the full scope only.", MIME: "image/png", Scope: BinaryScope},
	{URI: "test://template/{id}/data", Template: true, Name: "template", Description: "The data of one id, for writers.", MIME: "application/json", Scope: TemplateScope},
	{URI: WatchedURI, Name: "watched-resource", Description: "A text that changes every few seconds; subscribe to hear of it.", MIME: "text/plain", Scope: mcpeffect.ReadOnly},
}, func(r Resource) string { return r.URI })

// An Argument is one argument of a prompt.
type Argument struct {
	Name, Description string
	Required          bool
}

// A Prompt is one prompt of the conformance servers.
type Prompt struct {
	Name, Title, Description string
	Arguments                []Argument
	Scope                    mcpeffect.Scope
}

// Prompts are the prompts every conformance server offers from its start,
// by name. (TransientPrompt is added by a call.)
var Prompts = index([]Prompt{
	{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A prompt without arguments.", Scope: mcpeffect.ReadOnly},
	{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with two required arguments.", Scope: mcpeffect.ReadOnly,
		Arguments: []Argument{{"arg1", "First test argument", true}, {"arg2", "Second test argument", true}}},
	{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that embeds a resource, for writers.", Scope: EmbedScope,
		Arguments: []Argument{{"resourceUri", "URI of the resource to embed", true}}},
	{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt with an image.", Scope: mcpeffect.ReadOnly},
	// The prompts/get form of a multi-round-trip request (SEP-2322).
	{Name: "test_input_required_result_prompt", Description: "Asks the person for context, in band, before it answers.", Scope: mcpeffect.ReadOnly},
}, func(p Prompt) string { return p.Name })

// TransientPrompt is the prompt that test_trigger_prompt_change adds.
var TransientPrompt = Prompt{Name: "transient_prompt", Description: "Added by test_trigger_prompt_change.", Scope: mcpeffect.ReadOnly}

func index[T any](items []T, key func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		if _, dup := m[key(it)]; dup {
			panic("catalog: " + key(it) + " twice")
		}
		m[key(it)] = it
	}
	return m
}

// ReadOnlyRefused are the tools, resources and prompts that a read-only
// caller is refused, as "tool NAME", "resource URI" (a template's URI with
// its id 7) and "prompt NAME", sorted: what the table says needs more.
func ReadOnlyRefused() []string {
	var out []string
	for _, t := range Tools {
		if t.Effect.Required() != mcpeffect.ReadOnly {
			out = append(out, "tool "+t.Name)
		}
	}
	for _, r := range Resources {
		if r.Scope != mcpeffect.ReadOnly {
			uri := r.URI
			if r.Template {
				uri = "test://template/7/data"
			}
			out = append(out, "resource "+uri)
		}
	}
	for _, p := range Prompts {
		if p.Scope != mcpeffect.ReadOnly {
			out = append(out, "prompt "+p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Check reports how r differs from the table: each tool, resource,
// template and prompt r declares must be the table's, with the table's
// effect or scope, and the table's must all be there. transient says
// whether the transient tool and prompt are there too (once the triggers
// ran) or not.
func Check(r *mcpeffect.Registry, transient bool) error {
	tools := maps.Clone(Tools)
	prompts := maps.Clone(Prompts)
	if transient {
		tools[TransientTool.Name] = TransientTool
		prompts[TransientPrompt.Name] = TransientPrompt
	}
	var errs []string
	seen := map[string]bool{}
	for name, e := range r.All() {
		seen[name] = true
		if t, ok := tools[name]; !ok {
			errs = append(errs, fmt.Sprintf("tool %s is not in the table", name))
		} else if t.Effect != e {
			errs = append(errs, fmt.Sprintf("tool %s: effect %v, the table says %v", name, e, t.Effect))
		}
	}
	for name := range tools {
		if !seen[name] {
			errs = append(errs, fmt.Sprintf("tool %s is not classified", name))
		}
	}
	declared := map[string]mcpeffect.Scope{}
	for uri, s := range r.Resources() {
		declared[uri] = s
	}
	for tmpl, s := range r.ResourceTemplates() {
		declared[tmpl] = s
	}
	for uri, res := range Resources {
		if s, ok := declared[uri]; !ok || s != res.Scope {
			errs = append(errs, fmt.Sprintf("resource %s: declared %v (%t), the table says %v", uri, s, ok, res.Scope))
		}
		delete(declared, uri)
	}
	for uri := range declared {
		errs = append(errs, fmt.Sprintf("resource %s is not in the table", uri))
	}
	seen = map[string]bool{}
	for name, s := range r.Prompts() {
		seen[name] = true
		if p, ok := prompts[name]; !ok {
			errs = append(errs, fmt.Sprintf("prompt %s is not in the table", name))
		} else if p.Scope != s {
			errs = append(errs, fmt.Sprintf("prompt %s: scope %v, the table says %v", name, s, p.Scope))
		}
	}
	for name := range prompts {
		if !seen[name] {
			errs = append(errs, fmt.Sprintf("prompt %s is not declared", name))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("the registry is not the table: %q", errs)
	}
	return nil
}

// PNG is a one-pixel red PNG, and WAV two samples of silence in a WAV
// file: the smallest content of each kind.
var PNG, WAV = onePixel(), silence()

func onePixel() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func silence() []byte {
	const rate, samples = 8000, 2
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*samples))
	b.WriteString("WAVEfmt ")
	// PCM, one channel, 16 bits a sample.
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(rate))
	le(uint32(2 * rate))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(2 * samples))
	b.Write(make([]byte, 2*samples))
	return b.Bytes()
}
