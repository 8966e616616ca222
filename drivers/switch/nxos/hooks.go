package nxos

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
)

// grammar is NX-OS's side of clicore.Core: read and startup compare,
// steps, the save check, the checkpoint transaction and its rollback.
type grammar struct{}

var _ clicore.Platform = grammar{}

// Read parses the normalised running-config and compares the
// startup-config's body with its.
func (grammar) Read(s *clicore.Session, sw *intent.Switch) (intent.State, bool, error) {
	out, err := runningConfig(s)
	if err != nil {
		return nil, false, err
	}
	st, err := ReadRunningConfig(out, sw)
	if err != nil {
		return nil, false, err
	}
	if err := readSwitchport(s, out, sw, st); err != nil {
		return nil, false, err
	}
	drivers.PutPorts(st, Interfaces(out))
	// The chassis decides whether the Cloud Scale QoS forms apply
	// (siliconone.go).
	ver, err := s.Send(showVersion)
	if err != nil {
		return nil, false, err
	}
	model, err := ParseChassis(ver)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", s.Device(), err)
	}
	st[FactModel] = model
	start, err := s.Send(showStartup)
	if err != nil {
		return nil, false, err
	}
	if !strings.Contains(start, "!Command: "+showStartup) {
		return nil, false, fmt.Errorf("%s: %s: output lacks the command header (truncated?)", s.Device(), showStartup)
	}
	return st, ConfigBody(start) == ConfigBody(out), nil
}

func (grammar) Steps(t drivers.Target, sw *intent.Switch, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	return changes(sw, diff, desired, t.Live)
}

// CheckSave: NX-OS reports success with "Copy complete" (napalm nxos_ssh
// _copy_run_start, the save; cisco.nxos cliconf's file-transfer path uses
// the same words: save.txt (3)); anything else,
// such as "Configuration update aborted: ...", is the switch refusing,
// returned as the error.
func (grammar) CheckSave(s *clicore.Session, out string) error {
	if !strings.Contains(out, "Copy complete") {
		return &stepError{Device: s.Device(), Step: saveCmd, Err: fmt.Errorf("the switch did not save: %s", strings.TrimSpace(out))}
	}
	return nil
}

func (grammar) Transaction(t drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (clicore.Transaction, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return nil, err
	}
	lines, paths := clicore.JoinLines(steps)
	script := Script(lines)
	if len(script) == 0 {
		return nil, nil
	}
	return &checkpoint{Tx: clicore.Tx[string]{Script: script}, sw: sw, paths: paths}, nil
}

// Rollback restores the checkpoint, checks the running-config against
// the recorded one (when this run recorded it) and deletes the
// checkpoint.
func (grammar) Rollback(s *clicore.Session, r drivers.Result, pre any, ok bool) error {
	if _, err := s.Send("rollback running-config checkpoint " + r.Token); err != nil {
		return &stepError{Device: s.Device(), Step: "rollback running-config checkpoint " + r.Token, Err: err}
	}
	if ok {
		now, err := runningConfig(s)
		if err != nil {
			return &stepError{Device: s.Device(), Step: "read running-config after rollback", Err: err}
		}
		if now != pre.(string) {
			return fmt.Errorf("%s: after rollback to checkpoint %s the running-config differs from before the apply", s.Device(), r.Token)
		}
	}
	if _, err := s.Send("no checkpoint " + r.Token); err != nil {
		return &stepError{Device: s.Device(), Step: "no checkpoint " + r.Token, Err: err}
	}
	s.Forget(r.Token)
	return nil
}

// checkpoint is one apply inside a checkpoint (its ID; Pre is the
// normalised running-config before it), verified by reading back.
type checkpoint struct {
	clicore.Tx[string]
	sw       *intent.Switch
	paths    []string
	inConfig bool
}

func (x *checkpoint) Begin(s *clicore.Session) (bool, error) {
	pre, err := runningConfig(s)
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "read running-config before apply", Err: err}
	}
	x.Pre, x.ID = pre, newToken()
	if _, err := s.Send("checkpoint " + x.ID); err != nil {
		se := &stepError{Device: s.Device(), Step: "checkpoint " + x.ID, Err: err}
		if isConnLoss(err) {
			// The checkpoint may exist; nothing else was sent.
			if nc, derr := s.Dial(); derr == nil {
				_, _ = nc.Send("no checkpoint " + x.ID)
				nc.Close()
			}
		}
		return false, fmt.Errorf("%v; no configuration was sent, the running-config is unchanged", se)
	}
	return false, nil
}

func (x *checkpoint) Open(s *clicore.Session) error {
	if _, err := s.Send("configure terminal"); err != nil {
		return clicore.Failed("configure terminal (checkpoint "+x.ID+")", err)
	}
	x.inConfig = true
	return nil
}

func (x *checkpoint) Where(i, n int, l string) string {
	return fmt.Sprintf("%s (line %d of %d, checkpoint %s)", l, i+1, n, x.ID)
}

func (x *checkpoint) Check(s *clicore.Session) (bool, error) {
	if _, err := s.Send("end"); err != nil {
		return false, clicore.Failed("end", err)
	}
	x.inConfig = false
	return false, nil
}

// Verify: every path the steps settle reads back as desired.
func (x *checkpoint) Verify(s *clicore.Session) error {
	post, err := runningConfig(s)
	if err != nil {
		return clicore.Failed("read running-config after apply", err)
	}
	live, err := ReadRunningConfig(post, x.sw)
	if err != nil {
		return clicore.Failed("verify", err)
	}
	if b := clicore.VerifyPaths(x.paths, expressible(x.sw), live, fields); len(b) > 0 {
		return clicore.Failed("verify", fmt.Errorf("the switch accepted the lines but reads back differently: %s", strings.Join(b, "; ")))
	}
	return nil
}

func (x *checkpoint) Stranded(se *clicore.StepError, err error) error {
	return fmt.Errorf("%v; reconnecting failed: %v; checkpoint %s is on the switch: restore it with `rollback running-config checkpoint %s`", se, err, x.ID, x.ID)
}

// Recover rolls the switch back to the checkpoint and says which state
// it is in.
func (x *checkpoint) Recover(s *clicore.Session, se *clicore.StepError, lost bool) error {
	name, token := s.Device(), x.ID
	if !lost && x.inConfig {
		_, _ = s.Send("end")
	}
	if _, err := s.Send("rollback running-config checkpoint " + token); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; rollback to checkpoint %s failed: %v", se, token, err)}
	}
	now, err := runningConfig(s)
	if err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; rolled back to checkpoint %s but reading the running-config failed: %v", se, token, err)}
	}
	if now != x.Pre {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; after the rollback to checkpoint %s the running-config still differs from before the apply", se, token)}
	}
	note := ""
	if _, err := s.Send("no checkpoint " + token); err != nil {
		note = fmt.Sprintf(" (deleting checkpoint %s failed: %v)", token, err)
	}
	return fmt.Errorf("%v; rolled back to checkpoint %s, the running-config is as before%s", se, token, note)
}
