package sonic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// hooks are SONiC's facts for clicore.Core: the CONFIG_DB read and saved
// compare, steps, the save check, the GCU patch transaction and the
// `config replace` rollback. GCU has no per-line CLI transaction: the
// patch file is the transaction's whole content (Open writes it, Commit
// applies it), so the core's line loop has nothing to send.
type hooks struct{ d *Driver }

var _ clicore.Platform = hooks{}

func (hooks) Facts() clicore.Facts {
	return clicore.Facts{Name: Name, SaveCommand: saveCmd, SaveStep: "config save", Refused: refused, PriorKind: "config"}
}

func (h hooks) Options() sshtransport.Options {
	o := h.d.SSH
	o.Platform = sshtransport.SONiC
	return o
}

// Read parses `show runningconfiguration all`; raw is the DB.
func (hooks) Read(s *clicore.Session, sw *intent.Switch) (intent.State, any, error) {
	out, _, err := running(s.Conn())
	if err != nil {
		return nil, nil, err
	}
	db, err := ParseConfigDB(out)
	if err != nil {
		return nil, nil, err
	}
	return db.State(sw), db, nil
}

// Saved compares the saved CONFIG_DB with the running one on
// SavedTables, and records the buffer model Read saw (modelOf).
func (h hooks) Saved(s *clicore.Session, raw any) (bool, error) {
	db := raw.(DB)
	saved, err := readSaved(s.Conn())
	if err != nil {
		return false, err
	}
	h.d.mu.Lock()
	if h.d.model == nil {
		h.d.model = map[string]string{}
	}
	h.d.model[s.Device()] = db.BufferModel()
	h.d.mu.Unlock()
	return savedMatches(db, saved), nil
}

func (h hooks) Steps(t drivers.Target, sw *intent.Switch, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	return changes(sw, diff, h.d.Fields(), h.d.modelOf(t))
}

// CheckSave checks that the saved CONFIG_DB now holds the running one.
func (hooks) CheckSave(s *clicore.Session, out string) error {
	run, _, err := running(s.Conn())
	if err != nil {
		return &stepError{Device: s.Device(), Step: "read running config after config save", Err: err}
	}
	rdb, err := ParseConfigDB(run)
	if err != nil {
		return err
	}
	saved, err := readSaved(s.Conn())
	if err != nil {
		return &stepError{Device: s.Device(), Step: "read " + StartupFile + " after config save", Err: err}
	}
	if !savedMatches(rdb, saved) {
		return &stepError{Device: s.Device(), Step: "config save", Err: fmt.Errorf("%s does not hold the running configuration: %s", StartupFile, strings.TrimSpace(out))}
	}
	return nil
}

// Transaction: whether there is anything to apply is known only once
// the running CONFIG_DB is read (Begin).
func (hooks) Transaction(_ drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (clicore.Transaction, error) {
	return &patch{steps: steps}, nil
}

// Rollback writes the prior CONFIG_DB and runs `config replace`.
func (hooks) Rollback(s *clicore.Session, r drivers.Result, prior any, _ bool) error {
	pre := prior.([]byte)
	c := s.Conn()
	var preDoc map[string]any
	if err := json.Unmarshal(pre, &preDoc); err != nil {
		return err
	}
	body, _ := json.MarshalIndent(configDB(preDoc), "", "    ")
	file := "/tmp/" + r.Token + "-prior.json"
	if err := c.WriteFile(file, string(body)+"\n"); err != nil {
		return &stepError{Device: s.Device(), Step: "write " + file, Err: err}
	}
	if _, err := send(c, "sudo config replace "+file); err != nil {
		return &stepError{Device: s.Device(), Step: "config replace", Err: err}
	}
	_, _ = c.Send("rm -f " + file)
	now, _, err := running(c)
	if err != nil {
		return &stepError{Device: s.Device(), Step: "read-back after rollback", Err: err}
	}
	if string(now) != string(pre) {
		return fmt.Errorf("%s: after config replace the running config differs from before the apply", s.Device())
	}
	return nil
}

// patch is one apply as one GCU patch inside a checkpoint.
type patch struct {
	steps       []drivers.Change
	preBytes    []byte
	ops         []Op
	target      map[string]any
	token, file string
	content     string
}

func (x *patch) Begin(s *clicore.Session) (bool, error) {
	preBytes, pre, err := running(s.Conn())
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "read running config before apply", Err: err}
	}
	ops, target, err := effectivePatch(pre, x.steps)
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "build patch", Err: err}
	}
	if len(ops) == 0 {
		return true, nil
	}
	x.preBytes, x.ops, x.target = preBytes, ops, target
	x.token = newToken()
	x.file = "/tmp/" + x.token + ".json"
	if _, err := s.Send("sudo config checkpoint " + x.token); err != nil {
		return false, &stepError{Device: s.Device(), Step: "config checkpoint", Err: err}
	}
	lines := make([]string, len(ops))
	for i, op := range ops {
		lines[i] = op.line()
		if i < len(ops)-1 {
			lines[i] += ","
		}
	}
	x.content = "[\n" + strings.Join(lines, "\n") + "\n]\n"
	return false, nil
}

func (x *patch) Open(s *clicore.Session) error {
	if err := s.Conn().WriteFile(x.file, x.content); err != nil {
		return clicore.Failed("write patch file "+x.file, err)
	}
	return nil
}

func (x *patch) Lines() []string                      { return nil }
func (x *patch) Where(int, int, string) string        { return "" }
func (x *patch) Check(*clicore.Session) (bool, error) { return false, nil }

func (x *patch) Commit(s *clicore.Session, _ drivers.ApplyOptions) (bool, error) {
	if _, err := s.Send("sudo config apply-patch " + x.file); err != nil {
		return false, clicore.Failed("config apply-patch", err)
	}
	return false, nil
}

// Verify compares the patched paths with the running CONFIG_DB, then
// deletes the checkpoint and the patch file.
func (x *patch) Verify(s *clicore.Session) error {
	_, after, err := running(s.Conn())
	if err != nil {
		return clicore.Failed("read-back after apply-patch", err)
	}
	if p := firstMismatch(x.ops, after, x.target); p != "" {
		return clicore.Failed("verify", fmt.Errorf("the running config differs from the patched config at %s", p))
	}
	x.cleanup(s)
	return nil
}

func (x *patch) cleanup(s *clicore.Session) {
	_, _ = s.Send("sudo config delete-checkpoint " + x.token)
	_, _ = s.Conn().Send("rm -f " + x.file)
}

func (x *patch) Token() string { return x.token }
func (x *patch) Prior() any    { return x.preBytes }

func (x *patch) Stranded(se *clicore.StepError, err error) error {
	return fmt.Errorf("%v; reconnecting to roll back failed: %v; checkpoint %s on the switch holds the prior config", se, err, x.token)
}

// Recover restores the prior config and says so, or reports a partial
// apply when it cannot.
func (x *patch) Recover(s *clicore.Session, se *clicore.StepError, lost bool) error {
	name, token := s.Device(), x.token
	if lost {
		if now, _, err := running(s.Conn()); err == nil && string(now) == string(x.preBytes) {
			x.cleanup(s)
			return fmt.Errorf("%v; the patch did not take effect, the switch is at its prior config", se)
		}
	}
	if _, err := s.Send("sudo config rollback " + token); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; config rollback %s failed: %v", se, token, err)}
	}
	now, _, err := running(s.Conn())
	if err != nil || string(now) != string(x.preBytes) {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; rolled back to %s but the running config differs from before the apply", se, token)}
	}
	x.cleanup(s)
	return fmt.Errorf("%v; rolled back to checkpoint %s", se, token)
}
