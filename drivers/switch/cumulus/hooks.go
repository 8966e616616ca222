package cumulus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
)

// grammar is NVUE's side of clicore.Core: the applied-revision read and
// startup diff, steps, the save check, the revision transaction and the
// re-apply of the recorded revision.
type grammar struct{}

var _ clicore.Platform = grammar{}

// Read parses `nv config show -o json`, with the auto-save state and
// RoCE mode as device facts, and runs `nv config diff applied startup`.
func (grammar) Read(s *clicore.Session, sw *intent.Switch) (intent.State, bool, error) {
	tree, _, err := applied(s)
	if err != nil {
		return nil, false, err
	}
	ok, err := saved(s)
	if err != nil {
		return nil, false, err
	}
	st := readTree(tree, sw)
	st[factAutoSave] = autoSaveState(tree)
	st[factRoCE] = strconv.FormatBool(roceEnabled(tree))
	return st, ok, nil
}

// Steps renders for RoCE mode as the planner's Read found it (off when
// the device was not read).
func (grammar) Steps(t drivers.Target, sw *intent.Switch, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	return changes(sw, diff, fields, t.Live[factRoCE] == "true")
}

// CheckSave checks that startup now equals applied.
func (grammar) CheckSave(s *clicore.Session, out string) error {
	ok, err := saved(s)
	if err != nil {
		return &stepError{Device: s.Device(), Step: "check the save (" + diffStartup + ")", Err: err}
	}
	if !ok {
		return &stepError{Device: s.Device(), Step: "nv config save",
			Err: fmt.Errorf("the startup configuration still differs from the applied one; NVUE printed %q", strings.TrimSpace(out))}
	}
	return nil
}

func (grammar) Transaction(t drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (clicore.Transaction, error) {
	lines, paths := clicore.JoinLines(steps)
	if len(lines) == 0 {
		return nil, nil
	}
	return &revision{Tx: clicore.Tx[string]{Script: lines}, t: t, paths: paths}, nil
}

// Rollback detaches any pending revision and re-applies the recorded one.
func (grammar) Rollback(s *clicore.Session, r drivers.Result, pre any, _ bool) error {
	if _, err := s.Send("nv config detach"); err != nil {
		return &stepError{Device: s.Device(), Step: "nv config detach (rollback)", Err: err}
	}
	if err := restore(s, r.Token, pre.(string)); err != nil {
		return &stepError{Device: s.Device(), Step: "nv config apply " + r.Token + " --assume-yes (rollback)", Err: err}
	}
	return nil
}

// revision is one apply as one NVUE revision; its ID is the revision
// applied before it, the rollback point, and Pre the applied
// configuration then.
type revision struct {
	clicore.Tx[string]
	t        drivers.Target
	paths    []string
	applyRan bool
}

func (x *revision) Begin(s *clicore.Session) (bool, error) {
	rev, err := currentRevision(s)
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: revisionTable + " (record the rollback revision)", Err: err}
	}
	pre, err := appliedJSON(s)
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "read the applied config before apply", Err: err}
	}
	x.ID, x.Pre = rev, pre
	return false, nil
}

func (x *revision) Open(s *clicore.Session) error {
	if _, err := s.Send("nv config detach"); err != nil {
		return clicore.Failed("nv config detach", err)
	}
	return nil
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
	tree, _, err := applied(s)
	if err != nil {
		return clicore.Failed("verify (nv config show -o json)", err)
	}
	live := readTree(tree, sw)
	desired := sw.Flatten()
	for _, p := range x.paths {
		want, wok := desired[p]
		have, hok := live[p]
		f, _ := intent.FieldFor(fields, p)
		if wok != hok || (wok && !f.Equal(want, have)) {
			return clicore.Failed("verify", fmt.Errorf("after nv config apply %s reads %q, want %q", p, have, want))
		}
	}
	return nil
}

func (x *revision) Stranded(se *clicore.StepError, err error) error {
	return fmt.Errorf("%v; reconnecting failed: %v; a pending revision may be left, or applied on top of revision %s", se, err, x.ID)
}

// Recover drops the pending revision (or re-applies the recorded one
// when the apply went through) and says which state the switch is in.
func (x *revision) Recover(s *clicore.Session, se *clicore.StepError, _ bool) error {
	name, rev := s.Device(), x.ID
	if _, err := s.Send("nv config detach"); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; nv config detach failed: %v", se, err)}
	}
	now, err := appliedJSON(s)
	if err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; reading the applied config after the failure: %v", se, err)}
	}
	if now == x.Pre {
		return fmt.Errorf("%v; pending revision detached, nothing applied (the applied config is still revision %s)", se, rev)
	}
	if err := restore(s, rev, x.Pre); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; the apply had gone through and re-applying revision %s failed: %v", se, rev, err)}
	}
	what := "the apply had gone through"
	if !x.applyRan {
		what = "the applied config had changed"
	}
	return fmt.Errorf("%v; %s, rolled back to revision %s", se, what, rev)
}
