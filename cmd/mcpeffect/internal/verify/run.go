package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/progress"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options say which server to verify and how.
type Options struct {
	// Target is the server: a command, whose arguments may hold {dir},
	// or a URL with headers. Its Timeout is not used: ctx bounds Run,
	// and each session holds to ctx's deadline.
	Target connect.Target
	// SQLiteReader is the command that prints a SQLite database's rows
	// as records, given the file after its arguments: mcpeffect-sqlite.
	SQLiteReader []string
	// Parallel is how many tools are verified at once, each example on
	// an instance of its own; 0 is 1. A server reached by URL, whose
	// instances are one, is verified one example at a time.
	Parallel int
	// Progress, if not nil, is told how far the proof has gone: the
	// tools done of all, and those running.
	Progress *progress.Meter
}

// Run verifies the server of o with the examples of f. An error says it
// could not run at all: the server could not be started or listed. What
// it found, including examples that could not run, is in the report.
func Run(ctx context.Context, f *File, o Options) (*Report, error) {
	if len(o.Target.Command) == 0 && len(f.Reset) == 0 {
		return nil, errors.New("a server reached by -url cannot be started afresh for each example: give the examples file a reset command")
	}
	if o.Parallel > 1 && len(o.Target.Command) == 0 {
		return nil, errors.New("a server reached by -url is one instance, which its examples cannot share: -parallel must be 1")
	}
	if f.State.SQLite != "" && len(o.SQLiteReader) == 0 {
		return nil, ErrNoSQLiteReader
	}
	// A capture past its bounds stops the run: the state cannot be read,
	// so no example can prove anything.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r := &runner{f: f, o: o, stop: stop}
	o.Progress.Note("listing the tools")
	inst, err := r.newInstance(ctx)
	if err != nil {
		return nil, err
	}
	s, err := inst.session(ctx, "")
	if err != nil {
		inst.close(ctx)
		return nil, err
	}
	server := s.Server()
	tools, err := s.ListTools(ctx)
	inst.close(ctx)
	if err != nil {
		return nil, err
	}

	rep := &Report{Server: server, State: f.State.sources()}
	kinds := f.State.kinds()
	for _, kind := range kinds {
		for _, l := range builtinLeftOut[kind] {
			if len(kinds) > 1 {
				l.Record = kind + ":" + l.Record
			}
			rep.LeftOut = append(rep.LeftOut, l)
		}
	}
	rep.LeftOut = append(rep.LeftOut, f.State.LeaveOut...)
	rep.Flags = f.State.Flags
	r.used = make([]bool, len(f.State.LeaveOut))
	r.flagged = make([]bool, len(f.State.Flags))

	listed := map[string]connect.Listed{}
	for _, t := range tools {
		listed[t.Name] = t
	}
	r.listed = listed
	byTool := map[string][]int{}
	for i, ex := range f.Examples {
		if _, ok := listed[ex.Tool]; !ok {
			rep.Problems = append(rep.Problems, fmt.Sprintf("example %d (%q) calls tool %q, which is not on the server", i, ex.Name, ex.Tool))
			continue
		}
		byTool[ex.Tool] = append(byTool[ex.Tool], i)
	}
	for _, name := range slices.Sorted(maps.Keys(f.Overcautious)) {
		if _, ok := listed[name]; !ok {
			rep.Problems = append(rep.Problems, fmt.Sprintf("overcautious waives tool %q, which is not on the server", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(f.Skip)) {
		if _, ok := listed[name]; !ok {
			rep.Problems = append(rep.Problems, fmt.Sprintf("skip names tool %q, which is not on the server", name))
		}
	}
	names := slices.Sorted(maps.Keys(listed))
	o.Progress.Note("")
	o.Progress.Steps(len(names), "tools")
	rep.Tools = make([]ToolReport, len(names))
	slots := make(chan struct{}, max(o.Parallel, 1))
	var wg sync.WaitGroup
	for i, name := range names {
		slots <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			o.Progress.Start(name)
			rep.Tools[i] = r.tool(ctx, listed[name], byTool[name])
			o.Progress.Done(name)
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); errors.As(err, new(*BoundError)) {
		return nil, err
	}
	if ctx.Err() != nil {
		// An example cut short by the deadline proves nothing either way.
		return nil, fmt.Errorf("ran out of time: %w", ctx.Err())
	}
	for i, used := range r.used {
		if !used {
			l := f.State.LeaveOut[i]
			rep.Notes = append(rep.Notes, fmt.Sprintf("state.leaveOut[%d] (record %q, field %q) left nothing out in any capture", i, l.Record, l.Field))
		}
	}
	for i, used := range r.flagged {
		if !used {
			fl := f.State.Flags[i]
			rep.Notes = append(rep.Notes, fmt.Sprintf("state.flags[%d] (record %q, field %q) matched no record in any capture", i, fl.Record, fl.Field))
		}
	}
	rep.count()
	return rep, nil
}

type runner struct {
	f       *File
	o       Options
	stop    context.CancelCauseFunc   // ends the run, with the reason
	listed  map[string]connect.Listed // the server's tools, by name
	mu      sync.Mutex
	used    []bool // which entries of LeaveOut left something out
	flagged []bool // which entries of Flags matched a record
}

// tool runs the examples of one tool and gives its verdict, as
// mcpeffecttest.Verify does.
func (r *runner) tool(ctx context.Context, t connect.Listed, examples []int) ToolReport {
	hints, err := host.ParseDeclared(t.Annotations)
	tr := ToolReport{Name: t.Name, Hints: hints}
	if err != nil {
		tr.Verdict, tr.Reason = Failed, fmt.Sprintf("its annotations cannot be read: %v", err)
		return tr
	}
	e := hints.Effect()
	tr.Effect = e.String()
	if len(examples) == 0 {
		tr.Verdict = NotExamined
		if reason, ok := r.f.Skip[t.Name]; ok {
			tr.Reason = "skipped: " + reason
		} else {
			tr.Reason = "no example: its hints are not proved"
			tr.missing = true
		}
		return tr
	}
	var schema *jsonschema.Resolved
	if len(t.InputSchema) > 0 {
		if s, err := effectproof.ResolveSchema(t.InputSchema); err == nil {
			schema = s
		}
	}
	rule, err := t.Rule()
	if err != nil {
		tr.Verdict, tr.Reason = Failed, fmt.Sprintf("the outcomes it publishes in its _meta cannot be read: %v", err)
		return tr
	}
	if rule != nil {
		tr.Rule = rule.String()
	}
	byEffect := map[mcpeffect.Effect]*effectproof.Evidence{}
	complete, lied := true, false
	for n, i := range examples {
		ex := r.f.Examples[i]
		name := ex.Name
		if name == "" {
			name = fmt.Sprintf("#%d", n+1)
		}
		er, out, held := r.example(ctx, t, name, e, rule, schema, ex)
		tr.Examples = append(tr.Examples, er)
		if byEffect[held] == nil {
			byEffect[held] = &effectproof.Evidence{}
		}
		byEffect[held].Merge(out)
		lied = lied || len(er.Lies) > 0
		complete = complete && er.Result != ResultFailed && !lied
	}
	switch {
	case lied:
		tr.Verdict, tr.Reason = Lie, lieReason(tr.Examples)
		return tr
	case !complete:
		tr.Verdict, tr.Reason = Failed, "an example could not be run as written"
		return tr
	}
	if rule == nil {
		if all := byEffect[e]; all == nil || !all.Reached {
			tr.Verdict, tr.Reason = Failed, "every example expects an error: none reaches its work"
			return tr
		}
		tr.Claims = effectproof.Unshown(t.Name, e, "", *byEffect[e])
	} else {
		var missing []string
		tr.Claims, missing = effectproof.RuleClaims(t.Name, rule, byEffect, exampleEffect)
		if len(missing) > 0 {
			tr.Verdict, tr.Reason = Failed, strings.Join(missing, "; ")
			return tr
		}
	}
	if e&mcpeffect.Write == 0 {
		tr.Claims = nil // a read claims nothing
	}
	reason, waived := r.f.Overcautious[t.Name]
	switch {
	case len(tr.Claims) > 0 && waived:
		tr.Verdict, tr.Waived = Proven, reason
	case len(tr.Claims) > 0:
		tr.Verdict, tr.Reason = Overcautious, "its hints claim more than any example showed: hosts ask, or warn, for nothing"
	case waived:
		tr.Verdict, tr.Reason = Failed, fmt.Sprintf("waived in overcautious (%q), but its examples show all its hints claim: remove the waiver", reason)
	default:
		tr.Verdict = Proven
	}
	return tr
}

// lieReason says why a tool whose examples lie is a lie: a call did what
// its hints say it does not, its undo did not restore what its call
// changed, or both.
func lieReason(examples []ExampleReport) string {
	hints, undo := false, false
	for _, ex := range examples {
		for _, l := range ex.Lies {
			if l.Rule == undoRule {
				undo = true
			} else {
				hints = true
			}
		}
	}
	switch {
	case hints && undo:
		return "a call did what its hints say it does not, and its undo did not restore what its call changed"
	case undo:
		return "its undo did not restore what its call changed"
	}
	return "a call did what its hints say it does not"
}

// undoRule is the rule of a lie of an undo that did not restore the
// state (effectproof.ProveUndo).
const undoRule = "undo"

// exampleEffect is where an example says the effect of its call, in the
// messages of effectproof.
const exampleEffect = `the example's "effect"`

// example runs one example on a fresh instance, and returns what it
// showed and the effect it was held to: the tool's e, or for a tool with
// a rule, the outcome of its call. An example that asks for it has the
// tool's undo checked too, on another instance (see [Example] Undo).
func (r *runner) example(ctx context.Context, t connect.Listed, name string, e mcpeffect.Effect, rule *mcpeffect.EffectRule, schema *jsonschema.Resolved, ex Example) (er ExampleReport, out effectproof.Evidence, held mcpeffect.Effect) {
	tool := t.Name
	er.Name = name
	at := fmt.Sprintf("tool %q, example %q", tool, name)
	held = e
	failed := func(format string, args ...any) (ExampleReport, effectproof.Evidence, mcpeffect.Effect) {
		er.Result = ResultFailed
		er.Error = fmt.Sprintf(format, args...)
		return er, effectproof.Evidence{}, held
	}
	inst, raw, failure := r.prepare(ctx, at, ex)
	if failure != "" {
		return failed("%s", failure)
	}
	closeInst := sync.OnceFunc(func() { inst.close(ctx) })
	defer closeInst()
	if err := effectproof.ValidateArgs(schema, raw); err != nil {
		return failed("%s: the tool's input schema refuses the example's arguments %s: %s", at, effectproof.Shown(string(raw)), effectproof.Printable(err.Error(), effectproof.MaxShownError))
	}
	held, failure = effectproof.CallEffect(at, e, rule, raw, ex.effect, ex.WantError != "", exampleEffect)
	if failure != "" {
		return failed("%s", failure)
	}
	if rule != nil {
		er.Effect = held.String()
		at = fmt.Sprintf("%s (of effect %s)", at, held)
	}
	s, err := inst.session(ctx, ex.Caller)
	if err != nil {
		return failed("%s: connecting as caller %q: %v", at, ex.Caller, err)
	}
	res := effectproof.Prove(effectproof.Trial{
		At: at, Tool: tool, Example: name, Effect: held, Hints: e, WantError: ex.WantError,
		Capture: r.capturer(ctx, inst, at),
		Call: func() string {
			_, failure := r.call(ctx, s, tool, raw)
			return failure
		},
	})
	if res.Measured > 0 {
		er.First = callReport(res.First)
	}
	if res.Measured > 1 {
		er.Repeat = callReport(res.Repeat)
	}
	er.RepeatError = res.RepeatError
	switch {
	case res.CaptureErr != nil:
		// The state's words may be a hostile server's.
		return failed("%s: capturing the state: %s", at, effectproof.Printable(res.CaptureErr.Error(), effectproof.MaxShownError))
	case res.Failure != "":
		return failed("%s", res.Failure)
	case res.Refused:
		er.Result = ResultRefused
		return er, effectproof.Evidence{}, held
	}
	er.Result = ResultShown
	for _, l := range res.Lies {
		er.Result = ResultLie
		er.Lies = append(er.Lies, lieReport(l))
	}
	if ex.Undo {
		// The undo has an instance of its own: this one is done with,
		// and a server reached by URL is one, which its reset reuses.
		closeInst()
		r.checkUndo(ctx, &er, t, name, at, ex)
	}
	return er, res.Evidence, held
}

func lieReport(l effectproof.Lie) LieReport {
	lr := LieReport{Rule: l.Rule, When: l.When, Message: l.Message}
	for _, c := range l.Changes {
		lr.Changes = append(lr.Changes, changeReport(c))
	}
	return lr
}

// prepare starts a fresh instance for an example, makes its fixtures, and
// returns the instance and the example's arguments, placeholders
// replaced; or why it could not, a message that begins with at, with the
// instance closed.
func (r *runner) prepare(ctx context.Context, at string, ex Example) (*instance, json.RawMessage, string) {
	inst, err := r.newInstance(ctx)
	if err != nil {
		return nil, nil, fmt.Sprintf("%s: starting a fresh instance: %v", at, err)
	}
	fail := func(format string, args ...any) (*instance, json.RawMessage, string) {
		inst.close(ctx)
		return nil, nil, fmt.Sprintf(format, args...)
	}
	for j, fx := range ex.Fixtures {
		if err := inst.fixture(ctx, fx); err != nil {
			return fail("%s: fixture %d (tool %q): %v", at, j+1, fx.Tool, err)
		}
	}
	args, err := inst.vars.expand(map[string]any(ex.Args))
	if err != nil {
		return fail("%s: the arguments: %v", at, err)
	}
	raw, err := effectproof.MarshalArgs(args)
	if err != nil {
		return fail("%s: the arguments: %v", at, err)
	}
	return inst, raw, ""
}

// capturer returns the capture of the state of inst, for the trials of
// the example at: flags shown, bookkeeping left out, in canonical form. A
// capture past its bounds stops the run.
func (r *runner) capturer(ctx context.Context, inst *instance, at string) func() (effectproof.Snapshot, error) {
	return func() (effectproof.Snapshot, error) {
		st, err := capture(ctx, r.f.State, inst.vars, r.o.SQLiteReader)
		if err == nil {
			// Flags first: a flag may show the state of a field that
			// leaveOut then leaves out, such as the time of a deletion.
			r.mu.Lock()
			err = flag(st, r.f.State.Flags, r.flagged)
			leaveOut(st, r.f.State.LeaveOut, r.used)
			r.mu.Unlock()
		}
		if err != nil {
			var be *BoundError
			if errors.As(err, &be) {
				r.stop(fmt.Errorf("%s: capturing the state: %w", at, be))
			}
			return nil, err
		}
		return effectproof.Canonical(st)
	}
}

// call calls tool with args on s, and returns the structured content of
// its result (nil if it has none), and the text of the error it met, a
// tool error, one its result reports (resultErrors) or the session's,
// made printable; "" if it succeeded.
func (r *runner) call(ctx context.Context, s *connect.Session, tool string, args json.RawMessage) (json.RawMessage, string) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	switch {
	case err != nil:
		return nil, effectproof.Printable(err.Error(), effectproof.MaxShownError)
	case res.IsError:
		return nil, effectproof.Printable(resultText(res), effectproof.MaxShownError)
	}
	if text, failed := r.f.resultError(tool, res); failed {
		return nil, effectproof.Printable(text, effectproof.MaxShownError)
	}
	if res.StructuredContent == nil {
		return nil, ""
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		// What go-sdk decoded from JSON marshals: this cannot happen.
		return nil, fmt.Sprintf("its structured content: %v", err)
	}
	return structured, ""
}

// checkUndo checks the undo of t, as the example ex, called name, asks
// (see [Example] Undo), on an instance of its own, and reports it in er:
// an undo that did not restore the state is a lie of the example; one
// that could not be checked fails an example whose calls did what its
// hints allow.
func (r *runner) checkUndo(ctx context.Context, er *ExampleReport, t connect.Listed, name, at string, ex Example) {
	u := &UndoReport{Result: UndoFailed}
	er.Undo = u
	failed := func(format string, args ...any) {
		u.Error = fmt.Sprintf(format, args...)
		if er.Result == ResultShown {
			er.Result, er.Error = ResultFailed, u.Error
		}
	}
	rec, in, err := t.Recovery()
	switch {
	case err != nil:
		failed("%s: the example checks its undo, but the undo it publishes in %s cannot be used: %s", at, in, effectproof.Printable(err.Error(), effectproof.MaxShownError))
		return
	case rec == nil:
		failed("%s: the example checks its undo, but it publishes none (annotations.%s, or _meta %q)", at, mcpeffect.RecoveryAnnotation, mcpeffect.RecoveryMetaKey)
		return
	}
	undo := rec.CompensatingOperation.OperationID
	u.Tool = undo
	if _, ok := r.listed[undo]; !ok {
		failed("%s: its undo, %q, is not a tool the server lists", at, undo)
		return
	}
	checking := at + ", checking its undo"
	inst, raw, failure := r.prepare(ctx, checking, ex)
	if failure != "" {
		failed("%s", failure)
		return
	}
	defer inst.close(ctx)
	s, err := inst.session(ctx, ex.Caller)
	if err != nil {
		failed("%s: connecting as caller %q: %v", checking, ex.Caller, err)
		return
	}
	res := effectproof.ProveUndo(effectproof.UndoTrial{
		At: at, Tool: t.Name, Example: name, Recovery: *rec, Request: raw,
		Capture: r.capturer(ctx, inst, checking),
		Call:    func() (json.RawMessage, string) { return r.call(ctx, s, t.Name, raw) },
		Undo: func(args json.RawMessage) string {
			_, failure := r.call(ctx, s, undo, args)
			return failure
		},
	})
	if res.Changed != nil {
		u.Call = callReport(res.Changed)
	}
	if res.Arguments != nil {
		u.Arguments = effectproof.Printable(string(res.Arguments), effectproof.MaxShownError)
	}
	switch {
	case res.CaptureErr != nil:
		failed("%s: capturing the state: %s", checking, effectproof.Printable(res.CaptureErr.Error(), effectproof.MaxShownError))
	case res.Failure != "":
		failed("%s", res.Failure)
	case res.Restored:
		u.Result = UndoRestored
	default:
		u.Result = UndoNotRestored
		u.Left = callReport(res.Lie.Changes)
		er.Result = ResultLie
		er.Lies = append(er.Lies, lieReport(*res.Lie))
	}
}

func resultText(res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) == 0 {
		return "(a tool error without text)"
	}
	return strings.Join(texts, "; ")
}

// An instance is one fresh copy of the server: its directory, the values
// its fixtures saved, and a session for each caller, opened when first
// needed.
type instance struct {
	r        *runner
	dir      string
	vars     vars
	sessions map[string]*connect.Session
}

func (r *runner) newInstance(ctx context.Context) (*instance, error) {
	dir, err := os.MkdirTemp("", "mcpeffect-verify-")
	if err != nil {
		return nil, err
	}
	inst := &instance{r: r, dir: dir, vars: vars{"dir": dir}, sessions: map[string]*connect.Session{}}
	if len(r.f.Reset) > 0 {
		args, err := inst.vars.texts(r.f.Reset)
		if err == nil {
			var out tailBuffer
			if err = runBounded(ctx, args, "", &out, &out); err != nil {
				err = fmt.Errorf("the reset command: %v: %s", err, effectproof.Printable(out.String(), effectproof.MaxShownError))
			}
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return inst, nil
}

// session returns the session of the caller called name, opening it.
func (inst *instance) session(ctx context.Context, name string) (*connect.Session, error) {
	if name == "default" {
		name = ""
	}
	if s, ok := inst.sessions[name]; ok {
		return s, nil
	}
	caller := inst.r.f.caller(name)
	t := inst.r.o.Target
	t.Confirm = inst.r.f.Confirm
	t.Timeout = 0
	if dl, ok := ctx.Deadline(); ok {
		// The session's own deadline is the run's, so that closing it
		// kills a server that does not stop rather than wait past it.
		t.Timeout = max(time.Until(dl), time.Nanosecond)
	}
	var err error
	if len(t.Command) > 0 {
		if t.Command, err = inst.vars.texts(t.Command); err != nil {
			return nil, err
		}
	}
	env, err := inst.vars.env(inst.r.f.Env)
	if err != nil {
		return nil, fmt.Errorf("env: %v", err)
	}
	cenv, err := inst.vars.env(caller.Env)
	if err != nil {
		return nil, fmt.Errorf("the caller's env: %v", err)
	}
	t.Env = append(append(slices.Clone(t.Env), env...), cenv...)
	if len(caller.Headers) > 0 {
		if len(t.Command) > 0 {
			return nil, fmt.Errorf("caller %q has headers, but the server runs over stdio: give it env", name)
		}
		h := http.Header{}
		for k, v := range t.Header {
			h[k] = slices.Clone(v)
		}
		for k, v := range caller.Headers {
			text, err := inst.vars.text(v)
			if err != nil {
				return nil, fmt.Errorf("header %s: %v", k, err)
			}
			h.Set(k, text)
		}
		t.Header = h
	}
	s, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inst.sessions[name] = s
	return s, nil
}

// fixture makes one fixture and saves what it names.
func (inst *instance) fixture(ctx context.Context, fx Fixture) error {
	s, err := inst.session(ctx, fx.Caller)
	if err != nil {
		return err
	}
	args, err := inst.vars.expand(map[string]any(fx.Args))
	if err != nil {
		return err
	}
	raw, err := effectproof.MarshalArgs(args)
	if err != nil {
		return err
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: fx.Tool, Arguments: raw})
	switch {
	case err != nil:
		return errors.New(effectproof.Printable(err.Error(), effectproof.MaxShownError))
	case res.IsError:
		return fmt.Errorf("it returned a tool error: %s", effectproof.Printable(resultText(res), effectproof.MaxShownError))
	}
	if text, failed := inst.r.f.resultError(fx.Tool, res); failed {
		return fmt.Errorf("its result reports an error (resultErrors): %s", effectproof.Printable(text, effectproof.MaxShownError))
	}
	for _, name := range slices.Sorted(maps.Keys(fx.Save)) {
		ptr := fx.Save[name]
		v, err := saved(res, ptr)
		if err != nil {
			return fmt.Errorf("save %q (%s): %v", name, ptr, err)
		}
		inst.vars[name] = v
	}
	return nil
}

// saved returns the value at ptr in a fixture's result.
func saved(res *mcp.CallToolResult, ptr string) (any, error) {
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = tc.Text
			break
		}
	}
	if rest, ok := strings.CutPrefix(ptr, "#text"); ok {
		if rest != "" {
			return nil, errors.New("#text takes no pointer")
		}
		return text, nil
	}
	var doc any
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, err
		}
		if doc, err = decodeJSON(raw); err != nil {
			return nil, err
		}
	} else {
		var err error
		if doc, err = decodeJSON([]byte(text)); err != nil {
			return nil, fmt.Errorf("the result has no structured content, and its text is not JSON: %v", err)
		}
	}
	return pointer(doc, ptr)
}

func (inst *instance) close(ctx context.Context) {
	for _, s := range inst.sessions {
		s.Close()
	}
	os.RemoveAll(inst.dir)
}
