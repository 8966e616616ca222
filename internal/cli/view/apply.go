package view

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	fabapply "github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/iostreams"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// ApplyView renders fabctl apply: the plan and the question (human only),
// progress on stderr, and the result.
type ApplyView interface {
	// Plan shows the plan about to be applied (not for saved plans).
	Plan(p *plan.Plan, wp fabapply.WavePlan) error
	// Confirm asks whether to apply; only "yes" approves. An interrupt
	// (ctx done) is a no.
	Confirm(ctx context.Context, p *plan.Plan) (bool, error)
	// Progress reports each device step; ProgressDone ends the display.
	Progress(ev fabapply.ProgressEvent)
	ProgressDone()
	// Interrupted says a first Ctrl-C was received.
	Interrupted()
	// Warn reports a problem that does not stop the run, as it is found.
	Warn(msg string)
	// Result renders the outcome.
	Result(o *ApplyOutcome) error
}

var (
	_ ApplyView = (*ApplyHuman)(nil)
	_ ApplyView = (*ApplyJSON)(nil)
)

// ApplyHuman writes the plan, the question and the result table to
// stdout, progress and errors to stderr.
type ApplyHuman struct {
	IO  *iostreams.IOStreams
	Now func() time.Time

	mu       sync.Mutex
	inFlight map[string]*flight
	drawn    int // lines of the live region on screen
	last     time.Time
	done     int
	total    int
	failed   int
	ticker   *time.Ticker
	stopTick chan struct{}
	// planShown: Plan wrote the plan (its "Not planned" block lists each
	// device that could not be read, with the error).
	planShown bool
}

type flight struct {
	phase string
	start time.Time
}

// NewApplyHuman returns the human view of an apply.
func NewApplyHuman(io *iostreams.IOStreams, now func() time.Time) *ApplyHuman {
	return &ApplyHuman{IO: io, Now: now, inFlight: map[string]*flight{}}
}

// Plan writes the plan as fabctl plan does (compact view), then the
// wave order.
func (v *ApplyHuman) Plan(p *plan.Plan, wp fabapply.WavePlan) error {
	if err := WritePlan(v.IO, p, FormatHuman, PlanViewOptions(v.IO, false, false)); err != nil {
		return err
	}
	v.planShown = true
	if !p.HasChanges() {
		return nil
	}
	out := v.IO.Out
	st := iostreams.NewStyles(out, v.IO.ColorEnabled())
	fmt.Fprintf(out, "\nOrder: %s: %s.\n", orderText(wp.Order), wp.Reason)
	if wp.Conflict {
		fmt.Fprintf(out, "%s no wave order is hitless for this plan (see docs/apply.md#waves).\n", st.Warn.Render("Warning:"))
	}
	return nil
}

func orderText(o fabapply.Order) string {
	if o == fabapply.HostsFirst {
		return "hosts first, then switches"
	}
	return "switches first, then hosts"
}

func (v *ApplyHuman) Confirm(ctx context.Context, p *plan.Plan) (bool, error) {
	out := v.IO.Out
	st := iostreams.NewStyles(out, v.IO.ColorEnabled())
	fmt.Fprintf(out, "\n%s\n", st.Bold.Render("Do you want to apply these changes?"))
	fmt.Fprintf(out, "  fabctl will apply the changes shown above to %s.\n", plural(p.Counts().Changed, "device", "devices"))
	fmt.Fprintf(out, "  Only 'yes' will be accepted to approve.\n\n")
	fmt.Fprintf(out, "  %s ", st.Bold.Render("Enter a value:"))
	ans, err := readAnswer(ctx, v.IO.In)
	fmt.Fprintln(out)
	if err != nil {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	return ans == "yes", nil
}

func (v *ApplyHuman) Warn(msg string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearRegion()
	st := iostreams.NewStyles(v.IO.ErrOut, v.IO.ErrColorEnabled())
	fmt.Fprintf(v.IO.ErrOut, "%s %s\n", st.Warn.Render("Warning:"), msg)
	v.drawRegion()
}

func (v *ApplyHuman) Interrupted() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearRegion()
	fmt.Fprintln(v.IO.ErrOut, "Interrupt received: no new device is started; devices in flight finish their transaction. Interrupt again to stop at once (devices in flight may be left mid-transaction).")
	v.drawRegion()
}

// Progress: on a terminal, a live region (one line per device in flight,
// then totals) under the permanent lines of finished devices; otherwise
// plain lines.
func (v *ApplyHuman) Progress(ev fabapply.ProgressEvent) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.done, v.total = ev.Done, ev.Total
	tty := v.IO.IsStderrTTY()
	st := iostreams.NewStyles(v.IO.ErrOut, v.IO.ErrColorEnabled())
	var line string
	switch ev.Phase {
	case fabapply.PhaseCheck:
		return
	case fabapply.PhaseApply:
		v.inFlight[ev.Device] = &flight{phase: ev.Phase, start: v.Now()}
		if !tty {
			line = fmt.Sprintf("%s: applying", ev.Device)
		}
		if tty && v.ticker == nil {
			v.startTicker()
		}
	case fabapply.PhaseRollback:
		if f := v.inFlight[ev.Device]; f != nil {
			f.phase = ev.Phase
		} else {
			v.inFlight[ev.Device] = &flight{phase: ev.Phase, start: v.Now()}
		}
		line = fmt.Sprintf("%s: rolling back", ev.Device)
		if tty {
			line = ""
		}
	case fabapply.PhaseDone:
		delete(v.inFlight, ev.Device)
		if ev.Result != nil && ev.Result.Status == fabapply.StatusFailed {
			v.failed++
		}
		line = fmt.Sprintf("[%d/%d] %s", ev.Done, ev.Total, resultLine(st, ev.Result))
		if ev.Result != nil && (ev.Result.Status == fabapply.StatusRolledBack || ev.Result.RollbackError != "") {
			line = resultLine(st, ev.Result)
		}
	default:
		if f := v.inFlight[ev.Device]; f != nil {
			f.phase = ev.Phase
		}
	}
	if !tty {
		if line != "" {
			fmt.Fprintln(v.IO.ErrOut, line)
		}
		return
	}
	if line == "" && time.Since(v.last) < 100*time.Millisecond {
		return
	}
	v.clearRegion()
	if line != "" {
		fmt.Fprintln(v.IO.ErrOut, line)
	}
	v.drawRegion()
}

func resultLine(st iostreams.Styles, r *fabapply.DeviceResult) string {
	if r == nil {
		return ""
	}
	switch {
	case r.RollbackError != "":
		return fmt.Sprintf("%s: %s: %s", r.Address, st.Fail.Render("rollback FAILED"), r.RollbackError)
	case r.Status == fabapply.StatusApplied:
		s := "applied and verified"
		if r.Confirmed {
			s += ", confirmed"
		}
		if r.Saved {
			s += ", saved"
		}
		return fmt.Sprintf("%s: %s", r.Address, st.OK.Render(s))
	case r.Status == fabapply.StatusRolledBack:
		return fmt.Sprintf("%s: %s", r.Address, st.Warn.Render("rolled back"))
	case r.Status == fabapply.StatusFailed && r.NotSaved:
		return fmt.Sprintf("%s: %s: %s", r.Address, st.Fail.Render("FAILED, APPLIED BUT NOT SAVED"), r.Error)
	case r.Status == fabapply.StatusFailed && r.Restored:
		return fmt.Sprintf("%s: %s: %s", r.Address, st.Fail.Render("failed (restored)"), r.Error)
	case r.Status == fabapply.StatusFailed:
		return fmt.Sprintf("%s: %s: %s", r.Address, st.Fail.Render("FAILED, NOT RESTORED"), r.Error)
	}
	return fmt.Sprintf("%s: %s", r.Address, r.Status)
}

// maxFlightLines bounds the live region.
const maxFlightLines = 10

func (v *ApplyHuman) clearRegion() {
	if v.drawn > 0 {
		v.IO.EraseErrLines(v.drawn)
		v.drawn = 0
	}
}

func (v *ApplyHuman) drawRegion() {
	if !v.IO.IsStderrTTY() || v.total == 0 {
		return
	}
	v.last = time.Now()
	w := v.IO.ErrOut
	st := iostreams.NewStyles(w, v.IO.ErrColorEnabled())
	names := make([]string, 0, len(v.inFlight))
	for n := range v.inFlight {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := v.inFlight[names[i]], v.inFlight[names[j]]
		if !a.start.Equal(b.start) {
			return a.start.Before(b.start)
		}
		return names[i] < names[j]
	})
	now := v.Now()
	for i, n := range names {
		if i == maxFlightLines {
			fmt.Fprintf(w, "  %s\n", st.Faint.Render(fmt.Sprintf("... and %d more in flight", len(names)-maxFlightLines)))
			v.drawn++
			break
		}
		f := v.inFlight[n]
		fmt.Fprintf(w, "  %s %-12s %s\n", n, f.phase, st.Faint.Render(now.Sub(f.start).Round(100*time.Millisecond).String()))
		v.drawn++
	}
	failed := ""
	if v.failed > 0 {
		failed = ", " + st.Fail.Render(fmt.Sprintf("%d failed", v.failed))
	}
	fmt.Fprintf(w, "%s %d/%d done, %d in flight%s\n", st.Bold.Render("Applying:"), v.done, v.total, len(v.inFlight), failed)
	v.drawn++
}

func (v *ApplyHuman) startTicker() {
	v.ticker = time.NewTicker(500 * time.Millisecond)
	v.stopTick = make(chan struct{})
	t, stop := v.ticker, v.stopTick
	go func() {
		for {
			select {
			case <-t.C:
				v.mu.Lock()
				v.clearRegion()
				v.drawRegion()
				v.mu.Unlock()
			case <-stop:
				return
			}
		}
	}()
}

func (v *ApplyHuman) ProgressDone() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ticker != nil {
		v.ticker.Stop()
		close(v.stopTick)
		v.ticker = nil
	}
	v.clearRegion()
}

func (v *ApplyHuman) Result(o *ApplyOutcome) error {
	out, errw := v.IO.Out, v.IO.ErrOut
	st := iostreams.NewStyles(out, v.IO.ColorEnabled())
	est := iostreams.NewStyles(errw, v.IO.ErrColorEnabled())
	errorf := func(format string, args ...any) {
		fmt.Fprintf(errw, "%s %s\n", est.Fail.Render("Error:"), fmt.Sprintf(format, args...))
	}
	defer func() {
		for _, w := range o.Warnings {
			fmt.Fprintf(errw, "%s %s\n", est.Warn.Render("Warning:"), w)
		}
	}()
	switch o.Status {
	case ApplyStatusInvalid:
		if o.Loaded != nil {
			return o.Loaded.WriteDiagnostics(errw, v.IO.TerminalWidth(), v.IO.ErrColorEnabled())
		}
		errorf("%v", o.Err)
		return nil
	case fabapply.RunLocked:
		l := o.Lock
		errorf("the fabric is locked by another fabctl run; nothing was applied")
		fmt.Fprintf(errw, "  Lock ID:   %s\n  Holder:    %s (pid %d)\n  Operation: %s\n  Since:     %s\n  Lock file: %s\n",
			l.ID, l.Who, l.PID, l.Operation, l.Created.UTC().Format(time.RFC3339), l.Path)
		fmt.Fprintf(errw, "Wait for that run to end (--lock-timeout waits for it). If it is gone for good, check the devices\nit was applying (its journal says which) and remove the lock with:\n  fabctl force-unlock %s --state-dir %s\n", l.ID, filepath.Dir(l.Path))
		if o.Lock.ID == "" {
			fmt.Fprintf(errw, "(%v)\n", o.Err)
		}
		return nil
	case fabapply.RunCancelled:
		fmt.Fprintln(errw, "Apply cancelled: nothing was applied.")
		return nil
	case fabapply.RunStale:
		errorf("%v", o.Err)
		for _, s := range o.Result.Stale {
			fmt.Fprintf(errw, "  %s: state fingerprint %s at plan time, %s now\n", s.Address, short(s.Planned), short(s.Live))
		}
		v.journalLine(errw, o)
		return nil
	case fabapply.RunRefused, fabapply.RunError:
		var pe *fabapply.PlanError
		switch {
		case v.planShown && errors.As(o.Err, &pe):
			errorf("%s", pe.Listed()) // the plan above lists each device's error
		case o.Err != nil:
			errorf("%v", o.Err)
		}
		v.journalLine(errw, o)
		return nil
	case fabapply.RunNoChanges:
		fmt.Fprintf(out, "\n%s nothing to apply.\n", st.OK.Render("Apply complete:"))
		return nil
	}
	// applied, failed, interrupted: the table.
	r := o.Result
	if r == nil { // interrupted before the run started
		if o.Err != nil {
			errorf("%v", o.Err)
		}
		return nil
	}
	c := r.Counts
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tRESULT\tWAVE\tCHANGES\tDETAIL")
	for _, d := range r.Devices {
		if d.Status == fabapply.StatusUnchanged {
			continue
		}
		res, detail := tableCells(st, d)
		wave := "-"
		if d.Wave > 0 {
			wave = fmt.Sprint(d.Wave)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", d.Address, res, wave, d.Changes, detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	summary := fmt.Sprintf("%d applied, %d failed, %d rolled back, %d not attempted, %d unchanged.", c.Applied, c.Failed, c.RolledBack, c.NotAttempted, c.Unchanged)
	switch o.Status {
	case fabapply.RunApplied:
		fmt.Fprintf(out, "%s %s\n", st.OK.Render("Apply complete:"), summary)
	case fabapply.RunInterrupted:
		fmt.Fprintf(out, "%s %s\n", st.Fail.Render("Apply interrupted:"), summary)
	default:
		fmt.Fprintf(out, "%s %s\n", st.Fail.Render("Apply failed:"), summary)
	}
	if c.NotRestored > 0 {
		fmt.Fprintf(out, "%s %s in neither the old nor the new state: inspect %s before planning again.\n",
			st.Fail.Render("Attention:"), plural(c.NotRestored, "device is", "devices are"), pronoun(c.NotRestored))
	}
	if o.Status != fabapply.RunApplied {
		fmt.Fprintln(out, "Devices not applied keep their previous configuration; run fabctl plan to see what remains.")
	}
	v.journalLine(out, o)
	if o.Err != nil && o.Status != fabapply.RunApplied {
		var fe *fabapply.FailedError
		if errors.As(o.Err, &fe) {
			errorf("%v", o.Err)
		}
	}
	return nil
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func (v *ApplyHuman) journalLine(w io.Writer, o *ApplyOutcome) {
	if o.Journal != "" {
		fmt.Fprintf(w, "Journal: %s\n", o.Journal)
	}
}

func tableCells(st iostreams.Styles, d *fabapply.DeviceResult) (string, string) {
	switch {
	case d.RollbackError != "":
		return st.Fail.Render("applied, rollback FAILED"), d.RollbackError
	case d.Status == fabapply.StatusApplied:
		how := "verified"
		if d.Confirmed {
			how += ", confirmed"
		}
		if d.Saved {
			how += ", saved"
		}
		return st.OK.Render("applied"), how
	case d.Status == fabapply.StatusRolledBack:
		return st.Warn.Render("rolled back"), "restored to its state before the run"
	case d.Status == fabapply.StatusFailed && d.NotSaved:
		return st.Fail.Render("FAILED, NOT SAVED"), d.Error
	case d.Status == fabapply.StatusFailed && d.Restored:
		return st.Fail.Render("failed (restored)"), d.Error
	case d.Status == fabapply.StatusFailed:
		return st.Fail.Render("FAILED, NOT RESTORED"), d.Error
	case d.Status == fabapply.StatusNotAttempted:
		return st.Faint.Render("not attempted"), d.Reason
	}
	return string(d.Status), ""
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	if fp == "" {
		return "(none)"
	}
	return fp
}

// NewApplyJSON returns the JSON view of an apply: one document on
// stdout, progress on stderr as the human view writes it.
func NewApplyJSON(io *iostreams.IOStreams, now func() time.Time) *ApplyJSON {
	return &ApplyJSON{IO: io, progress: NewApplyHuman(io, now)}
}

// ApplyJSON writes one JSON document (docs/json-output.md#apply); progress
// still goes to stderr as plain lines.
type ApplyJSON struct {
	IO       *iostreams.IOStreams
	progress *ApplyHuman
	warnings []string
}

func (v *ApplyJSON) Warn(msg string) { v.warnings = append(v.warnings, msg) }

func (v *ApplyJSON) Plan(*plan.Plan, fabapply.WavePlan) error { return nil }
func (v *ApplyJSON) Confirm(context.Context, *plan.Plan) (bool, error) {
	return false, errors.New("cannot ask for confirmation with --json")
}
func (v *ApplyJSON) Progress(ev fabapply.ProgressEvent) { v.progress.Progress(ev) }
func (v *ApplyJSON) ProgressDone()                      { v.progress.ProgressDone() }
func (v *ApplyJSON) Interrupted()                       { v.progress.Interrupted() }

// ApplyJSONDoc is format_version 1.0 of apply --json.
type ApplyJSONDoc struct {
	FormatVersion string                 `json:"format_version"`
	Status        string                 `json:"status"`
	Fabric        string                 `json:"fabric"`
	RunID         string                 `json:"run_id"`
	PlanFile      string                 `json:"plan_file"`
	Journal       string                 `json:"journal"`
	Order         string                 `json:"order"`
	OrderReason   string                 `json:"order_reason"`
	OrderConflict bool                   `json:"order_conflict"`
	Counts        fabapply.Counts        `json:"counts"`
	Devices       []applyJSONDevice      `json:"devices"`
	Stale         []fabapply.StaleDevice `json:"stale"`
	Unreachable   []fabapply.StaleDevice `json:"unreachable"`
	Lock          *ApplyJSONLock         `json:"lock"`
	Error         string                 `json:"error"`
	Warnings      []string               `json:"warnings"`
	Diagnostics   []spec.JSONDiagnostic  `json:"diagnostics"`
}

type applyJSONDevice struct {
	Address       string              `json:"address"`
	Kind          string              `json:"kind"`
	Name          string              `json:"name"`
	Status        fabapply.Status     `json:"status"`
	Wave          int                 `json:"wave"`
	Changes       int                 `json:"changes"`
	Restored      bool                `json:"restored"`
	Partial       bool                `json:"partial"`
	Confirmed     bool                `json:"confirmed"`
	Saved         bool                `json:"saved"`
	NotSaved      bool                `json:"not_saved"`
	Token         string              `json:"token"`
	Error         string              `json:"error"`
	Reason        string              `json:"reason"`
	RollbackError string              `json:"rollback_error"`
	Remaining     []intent.AttrChange `json:"remaining"`
	DurationMS    int64               `json:"duration_ms"`
}

type ApplyJSONLock struct {
	ID        string    `json:"id"`
	Operation string    `json:"operation"`
	Who       string    `json:"who"`
	PID       int       `json:"pid"`
	Version   string    `json:"version"`
	Created   time.Time `json:"created"`
	Path      string    `json:"path"`
}

func (v *ApplyJSON) Result(o *ApplyOutcome) error {
	doc := ApplyJSONDoc{FormatVersion: JSONFormatVersion, Status: string(o.Status), Fabric: o.Fabric, PlanFile: o.PlanFile,
		Journal: o.Journal, Order: string(o.Waves.Order), OrderReason: o.Waves.Reason, OrderConflict: o.Waves.Conflict,
		Devices: []applyJSONDevice{}, Stale: []fabapply.StaleDevice{}, Unreachable: []fabapply.StaleDevice{},
		Warnings: append(append([]string{}, v.warnings...), o.Warnings...), Diagnostics: []spec.JSONDiagnostic{}}
	if o.Err != nil {
		doc.Error = o.Err.Error()
	}
	if o.Loaded != nil && o.Loaded.DiagnosticCount() > 0 {
		doc.Diagnostics = o.Loaded.JSONDiagnostics()
	}
	if l := o.Lock; l != nil {
		doc.Lock = &ApplyJSONLock{ID: l.ID, Operation: l.Operation, Who: l.Who, PID: l.PID, Version: l.Version, Created: l.Created.UTC(), Path: l.Path}
	}
	if r := o.Result; r != nil {
		doc.RunID, doc.Counts = r.RunID, r.Counts
		doc.Order, doc.OrderReason, doc.OrderConflict = string(r.Order), r.OrderReason, r.Conflict
		doc.Stale = append(doc.Stale, r.Stale...)
		doc.Unreachable = append(doc.Unreachable, r.Unreachable...)
		for _, d := range r.Devices {
			jd := applyJSONDevice{Address: d.Address, Kind: d.Kind, Name: d.Name, Status: d.Status, Wave: d.Wave,
				Changes: d.Changes, Restored: d.Restored, Partial: d.Partial, Confirmed: d.Confirmed, Saved: d.Saved, NotSaved: d.NotSaved, Token: d.Token,
				Error: d.Error, Reason: d.Reason, RollbackError: d.RollbackError, Remaining: d.Remaining,
				DurationMS: d.Duration.Milliseconds()}
			if jd.Remaining == nil {
				jd.Remaining = []intent.AttrChange{}
			}
			doc.Devices = append(doc.Devices, jd)
		}
	}
	return WriteJSON(v.IO.Out, doc)
}

// ApplyStatusInvalid is the status of an apply whose spec has errors
// (beside the run's own, fabapply.RunStatus).
const ApplyStatusInvalid = fabapply.RunStatus("invalid")

// ApplyOutcome is what an apply run did; the views render it.
type ApplyOutcome struct {
	Fabric   string
	PlanFile string // the saved plan applied, or ""
	Status   fabapply.RunStatus
	Plan     *plan.Plan
	Result   *fabapply.Result
	Journal  string
	Lock     *fabapply.LockInfo // set when the lock was held by another run
	Err      error
	// Loaded is the spec's diagnostics (nil when no spec was loaded).
	Loaded SpecDiagnostics
	Waves  fabapply.WavePlan
	// Warnings are problems that did not fail the run (journal or record
	// write errors, a lock released by someone else).
	Warnings []string
}

// SpecDiagnostics are a loaded spec's diagnostics, as views show them.
type SpecDiagnostics interface {
	DiagnosticCount() int
	ErrorCount() int
	WarningCount() int
	JSONDiagnostics() []spec.JSONDiagnostic
	// WriteDiagnostics writes them with source snippets and a count line.
	WriteDiagnostics(w io.Writer, width int, color bool) error
}

// readAnswer reads one line from r; an interrupt while waiting gives "".
func readAnswer(ctx context.Context, r io.Reader) (string, error) {
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if errors.Is(err, io.EOF) {
			err = nil // end of input: whatever was typed, usually nothing
		}
		ch <- answer{strings.TrimSpace(line), err}
	}()
	select {
	case a := <-ch:
		return a.line, a.err
	case <-ctx.Done():
		return "", nil
	}
}
