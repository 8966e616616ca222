package cumulus

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// hooks are NVUE's facts for clicore.Core: the applied-revision read and
// startup diff, steps, the save check, the revision transaction and the
// re-apply of the recorded revision.
type hooks struct{ d *Driver }

var _ clicore.Platform = hooks{}

// Facts: a failure while the context is cancelled also reconnects (with
// a context that is not) to detach or re-apply.
func (hooks) Facts() clicore.Facts {
	return clicore.Facts{Name: Name, SaveCommand: "nv config save", SaveStep: "nv config save", PriorKind: "revision", RedialOnCancel: true}
}

func (h hooks) Options() sshtransport.Options {
	o := h.d.SSH
	o.Platform = Platform
	return o
}

// Read parses `nv config show -o json`; raw is the tree.
func (hooks) Read(s *clicore.Session, sw *intent.Switch) (intent.State, any, error) {
	tree, _, err := applied(s.Conn())
	if err != nil {
		return nil, nil, err
	}
	return readTree(tree, sw), tree, nil
}

// Saved runs `nv config diff applied startup` and records the auto-save
// state the tree shows (Findings).
func (h hooks) Saved(s *clicore.Session, raw any) (bool, error) {
	ok, err := saved(s.Conn())
	if err != nil {
		return false, err
	}
	h.d.mu.Lock()
	if h.d.autoSave == nil {
		h.d.autoSave = map[string]string{}
	}
	h.d.autoSave[s.Device()] = autoSaveState(raw.(map[string]any))
	if h.d.roceOn == nil {
		h.d.roceOn = map[string]bool{}
	}
	h.d.roceOn[s.Device()] = roceEnabled(raw.(map[string]any))
	h.d.mu.Unlock()
	return ok, nil
}

func (h hooks) Steps(t drivers.Target, sw *intent.Switch, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	return changes(sw, diff, h.d.Fields(), h.d.roceWasOn(t.Device.Name))
}

// CheckSave checks that startup now equals applied.
func (hooks) CheckSave(s *clicore.Session, out string) error {
	ok, err := saved(s.Conn())
	if err != nil {
		return &stepError{Device: s.Device(), Step: "check the save (" + diffStartup + ")", Err: err}
	}
	if !ok {
		return &stepError{Device: s.Device(), Step: "nv config save",
			Err: fmt.Errorf("the startup configuration still differs from the applied one; NVUE printed %q", strings.TrimSpace(out))}
	}
	return nil
}

func (h hooks) Transaction(t drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (clicore.Transaction, error) {
	lines, paths := clicore.JoinLines(steps)
	if len(lines) == 0 {
		return nil, nil
	}
	return &revision{d: h.d, t: t, lines: lines, paths: paths}, nil
}

// Rollback detaches any pending revision and re-applies the recorded one.
func (hooks) Rollback(s *clicore.Session, r drivers.Result, pre any, _ bool) error {
	if _, err := s.Send("nv config detach"); err != nil {
		return &stepError{Device: s.Device(), Step: "nv config detach (rollback)", Err: err}
	}
	if err := restore(s.Conn(), r.Token, pre.(string)); err != nil {
		return &stepError{Device: s.Device(), Step: "nv config apply " + r.Token + " --assume-yes (rollback)", Err: err}
	}
	return nil
}

// revision is one apply as one NVUE revision; its token is the revision
// applied before it, the rollback point.
type revision struct {
	d            *Driver
	t            drivers.Target
	lines, paths []string
	rev, pre     string
	applyRan     bool
}

func (x *revision) Begin(s *clicore.Session) (bool, error) {
	rev, err := currentRevision(s.Conn())
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: historyJSON + " (record the rollback revision)", Err: err}
	}
	pre, err := appliedJSON(s.Conn())
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "read the applied config before apply", Err: err}
	}
	x.rev, x.pre = rev, pre
	return false, nil
}

func (x *revision) Open(s *clicore.Session) error {
	if _, err := s.Send("nv config detach"); err != nil {
		return clicore.Failed("nv config detach", err)
	}
	return nil
}

func (x *revision) Lines() []string { return x.lines }

func (x *revision) Where(i, n int, l string) string {
	return fmt.Sprintf("%s (line %d of %d)", l, i+1, n)
}

func (x *revision) Check(s *clicore.Session) (bool, error) {
	diff, err := s.Send("nv config diff")
	if err != nil {
		return false, clicore.Failed("nv config diff", err)
	}
	if strings.TrimSpace(diff) == "" {
		if _, err := s.Send("nv config detach"); err != nil {
			return false, clicore.Failed("nv config detach (nothing to apply)", err)
		}
		return true, nil
	}
	return false, nil
}

func (x *revision) Commit(s *clicore.Session, _ drivers.ApplyOptions) (bool, error) {
	x.applyRan = true
	if _, err := s.Send(applyCmd); err != nil {
		return false, clicore.Failed(applyCmd, err)
	}
	return false, nil
}

// Verify reads the settled paths back from the applied revision.
func (x *revision) Verify(s *clicore.Session) error {
	sw, ok := x.t.Intent.(*intent.Switch)
	if !ok {
		return nil
	}
	tree, _, err := applied(s.Conn())
	if err != nil {
		return clicore.Failed("verify (nv config show -o json)", err)
	}
	live := readTree(tree, sw)
	desired := sw.Flatten()
	for _, p := range x.paths {
		want, wok := desired[p]
		have, hok := live[p]
		f, _ := intent.FieldFor(x.d.Fields(), p)
		if wok != hok || (wok && !f.Equal(want, have)) {
			return clicore.Failed("verify", fmt.Errorf("after nv config apply %s reads %q, want %q", p, have, want))
		}
	}
	return nil
}

func (x *revision) Token() string { return x.rev }
func (x *revision) Prior() any    { return x.pre }

func (x *revision) Stranded(se *clicore.StepError, err error) error {
	return fmt.Errorf("%v; reconnecting failed: %v; a pending revision may be left, or applied on top of revision %s", se, err, x.rev)
}

// Recover drops the pending revision (or re-applies the recorded one
// when the apply went through) and says which state the switch is in.
func (x *revision) Recover(s *clicore.Session, se *clicore.StepError, _ bool) error {
	name, rev := s.Device(), x.rev
	if _, err := s.Send("nv config detach"); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; nv config detach failed: %v", se, err)}
	}
	now, err := appliedJSON(s.Conn())
	if err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; reading the applied config after the failure: %v", se, err)}
	}
	if now == x.pre {
		return fmt.Errorf("%v; pending revision detached, nothing applied (the applied config is still revision %s)", se, rev)
	}
	if err := restore(s.Conn(), rev, x.pre); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; the apply had gone through and re-applying revision %s failed: %v", se, rev, err)}
	}
	what := "the apply had gone through"
	if !x.applyRan {
		what = "the applied config had changed"
	}
	return fmt.Errorf("%v; %s, rolled back to revision %s", se, what, rev)
}
