package eos

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
)

// grammar is EOS's side of clicore.Core: read and startup compare,
// steps, the save check, the configuration session and the restore
// session.
type grammar struct{}

var (
	_ clicore.Platform  = grammar{}
	_ clicore.Confirmer = grammar{}
)

// Read parses `show running-config` (the DSCP map from `show
// running-config all`, which prints defaults: ReadConfig), reads the
// model from `show version` and compares `show startup-config` with the
// running-config.
func (grammar) Read(s *clicore.Session, sw *intent.Switch) (intent.State, bool, error) {
	out, err := running(s)
	if err != nil {
		return nil, false, err
	}
	all, err := s.Send(showRunningAll)
	if err != nil {
		return nil, false, err
	}
	st, err := ReadConfig(out, all, sw)
	if err != nil {
		return nil, false, err
	}
	drivers.PutPorts(st, Interfaces(out))
	ver, err := s.Send(showVersion)
	if err != nil {
		return nil, false, err
	}
	st[FactModel] = ParseModel(ver)
	start, err := s.Send(showStartup)
	if err != nil {
		return nil, false, err
	}
	return st, SameConfig(start, out), nil
}

func (grammar) Steps(t drivers.Target, sw *intent.Switch, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	return changes(sw, diff, t.Live)
}

// CheckSave: EOS reports a failed copy with a "% " line (scrapligo's
// arista_eos platform fails on "% Error"); the corpus shows no output of
// a successful copy, so the save is then checked the way Read reports
// config/saved (startup compared with running), and a save that did not
// take fails with what the NOS printed.
func (grammar) CheckSave(s *clicore.Session, out string) error {
	fail := func(err error) error { return &stepError{Device: s.Device(), Step: saveCommand, Err: err} }
	out = strings.TrimSpace(strings.ReplaceAll(out, "\r", ""))
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "%") {
			return fail(errors.New(out))
		}
	}
	run, err := running(s)
	if err != nil {
		return fail(err)
	}
	start, err := s.Send(showStartup)
	if err != nil {
		return fail(err)
	}
	if !SameConfig(start, run) {
		if out == "" {
			out = "no output"
		}
		return fail(fmt.Errorf("the startup-config still differs from the running-config after the save (the switch said: %s)", out))
	}
	return nil
}

func (grammar) Transaction(_ drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (clicore.Transaction, error) {
	lines, _ := clicore.JoinLines(steps)
	script := Script(lines)
	if len(script) == 0 {
		return nil, nil
	}
	return &session{Tx: clicore.Tx[prior]{Script: script}}, nil
}

// Confirm commits the pending session.
func (grammar) Confirm(s *clicore.Session, r drivers.Result) error {
	if _, err := s.Send("configure session " + r.Token + " commit"); err != nil {
		return &stepError{Device: s.Device(), Step: "confirm session " + r.Token, Err: err}
	}
	return nil
}

// Rollback aborts a pending session or restores the prior config.
func (grammar) Rollback(s *clicore.Session, r drivers.Result, saved any, _ bool) error {
	pre := saved.(prior)
	c := s
	if r.Pending {
		// A commit-timer session still pending is rolled back as NAPALM
		// does: `configure session <S> abort` (napalm-config-session.txt:23-24).
		if _, err := c.Send("configure session " + r.Token + " abort"); err != nil {
			return &stepError{Device: s.Device(), Step: "abort session " + r.Token, Err: err}
		}
		now, err := running(c)
		if err != nil {
			return err
		}
		if now == pre.run {
			return nil
		}
		// The timer had already been confirmed or expired: restore below.
	}
	if err := restore(c, pre, r.Token+"-rb"); err != nil {
		return &stepError{Device: s.Device(), Step: "rollback session " + r.Token + "-rb", Err: err}
	}
	return nil
}

// session is one apply in a named configuration session (its ID; Pre
// is the running-config before it).
type session struct {
	clicore.Tx[prior]
	committed bool
}

func (x *session) Begin(s *clicore.Session) (bool, error) {
	pre, err := readPrior(s)
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "read running-config before apply", Err: err}
	}
	x.Pre, x.ID = pre, newToken()
	return false, nil
}

func (x *session) Open(s *clicore.Session) error {
	if _, err := s.Send("configure session " + x.ID); err != nil {
		return clicore.Failed("configure session "+x.ID, err)
	}
	return nil
}

func (x *session) Where(i, n int, l string) string {
	return fmt.Sprintf("%s (line %d of %d in session %s)", l, i+1, n, x.ID)
}

func (x *session) Check(s *clicore.Session) (bool, error) {
	diffs, err := s.Send("show session-config diffs")
	if err != nil {
		return false, clicore.Failed("show session-config diffs", err)
	}
	if noDiffs(diffs) {
		// Nothing differs (the plan was stale in our favour): leave no session.
		if _, err := s.Send("abort"); err != nil {
			return false, clicore.Failed("abort (empty session)", err)
		}
		return true, nil
	}
	return false, nil
}

// Commit commits inside the session (pyeapi-session-config-diffs.txt:6);
// with a confirm timeout, NAPALM's form: leave the session pending with
// `end` (napalm-config-session.txt:29) and commit it from exec with a
// timer (napalm-config-session.txt:19).
func (x *session) Commit(s *clicore.Session, opts drivers.ApplyOptions) (bool, error) {
	commit := "commit"
	pending := opts.ConfirmTimeout > 0
	if pending {
		if _, err := s.Send("end"); err != nil {
			return false, clicore.Failed("end (session "+x.ID+")", err)
		}
		commit = "configure session " + x.ID + " commit timer " + timer(opts.ConfirmTimeout)
	}
	if _, err := s.Send(commit); err != nil {
		if pending && !isConnLoss(err) {
			// Outside the session now: discard it from exec (napalm-config-session.txt:22).
			_, _ = s.Send("configure session " + x.ID + " abort")
			x.committed = true // nothing left for Recover's in-session abort
		}
		return false, clicore.Failed(commit+" (session "+x.ID+")", err)
	}
	x.committed = true
	return pending, nil
}

func (x *session) Stranded(se *clicore.StepError, err error) error {
	return fmt.Errorf("%v; reconnecting failed: %v; session %s may be pending or committed on the switch", se, err, x.ID)
}

// Recover aborts the session (or, when the commit went through before
// the connection dropped, restores the prior configuration) and says
// which state the switch is in.
func (x *session) Recover(s *clicore.Session, se *clicore.StepError, lost bool) error {
	name, token := s.Device(), x.ID
	conn := s
	if lost {
		// A session left pending by the dropped connection: abort it.
		_, _ = conn.Send("configure session " + token + " abort")
	} else if !x.committed {
		if _, err := conn.Send("abort"); err != nil {
			return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; abort of session %s failed: %v", se, token, err)}
		}
	}
	now, err := running(conn)
	if err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; reading the running-config after the failure: %v", se, err)}
	}
	if now == x.Pre.run {
		return fmt.Errorf("%v; session %s aborted, the running-config is unchanged", se, token)
	}
	// The session was committed (the drop came after `commit` ran).
	if err := restore(conn, x.Pre, token+"-rb"); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; session %s was committed and restoring the prior config failed: %v", se, token, err)}
	}
	return fmt.Errorf("%v; session %s had been committed, the prior config was restored with session %s-rb", se, token, token)
}
