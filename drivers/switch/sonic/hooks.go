package sonic

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
)

// grammar is SONiC's side of clicore.Core: the CONFIG_DB read and saved
// compare, steps, the save check, the GCU patch transaction and the
// `config replace` rollback. GCU has no per-line CLI transaction: the
// patch file is the transaction's whole content (Open writes it, Commit
// applies it), so the core's line loop has nothing to send.
type grammar struct{}

var _ clicore.Platform = grammar{}

// Read parses `show runningconfiguration all`, with the buffer model as
// a device fact, and compares the saved CONFIG_DB with it on
// SavedTables.
func (grammar) Read(s *clicore.Session, sw *intent.Switch) (intent.State, bool, error) {
	out, _, err := running(s)
	if err != nil {
		return nil, false, err
	}
	db, err := ParseConfigDB(out)
	if err != nil {
		return nil, false, err
	}
	saved, err := readSaved(s)
	if err != nil {
		return nil, false, err
	}
	st := db.State(sw)
	st[FactBufferModel] = db.BufferModel()
	st[FactHWSKU] = db["DEVICE_METADATA"]["localhost"]["hwsku"]
	st[FactPFCWD] = pfcwdFact(db)
	if l := listRowsFact(db); l != "" {
		st[FactListRows] = l
	}
	img, err := readImage(s)
	if err != nil {
		return nil, false, err
	}
	st[FactASICType], st[FactBuild] = img.asicType, img.build
	drivers.PutPorts(st, db.PortNames())
	return st, savedMatches(db, saved), nil
}

// Steps renders for the buffer model the planner's Read found.
func (grammar) Steps(t drivers.Target, sw *intent.Switch, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	steps, err := changes(sw, diff, fields, modelOf(t))
	if err != nil {
		return nil, err
	}
	return noteSplits(gcuFilter(steps, t.Live), t.Live), nil
}

// CheckSave checks that the saved CONFIG_DB now holds the running one.
func (grammar) CheckSave(s *clicore.Session, out string) error {
	run, _, err := running(s)
	if err != nil {
		return &stepError{Device: s.Device(), Step: "read running config after config save", Err: err}
	}
	rdb, err := ParseConfigDB(run)
	if err != nil {
		return err
	}
	saved, err := readSaved(s)
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
func (grammar) Transaction(t drivers.Target, steps []drivers.Change, _ drivers.ApplyOptions) (clicore.Transaction, error) {
	return &patch{steps: steps, img: imageOf(t.Live)}, nil
}

// Rollback writes the prior CONFIG_DB and runs `config replace`.
func (grammar) Rollback(s *clicore.Session, r drivers.Result, prior any, _ bool) error {
	pre := prior.([]byte)
	c := s
	var preDoc map[string]any
	if err := json.Unmarshal(pre, &preDoc); err != nil {
		return err
	}
	target := configDB(preDoc)
	// GCU refuses a replace whose diff removes PFC_WD|GLOBAL (or its
	// POLL_INTERVAL) or creates PFC_WD rows it cannot create (gcu.go):
	// keep the running PFC_WD then, restore the rest, and say so.
	_, nowDoc, err := running(c)
	if err != nil {
		return &stepError{Device: s.Device(), Step: "read running config before rollback", Err: err}
	}
	img, err := readImage(c)
	if err != nil {
		return &stepError{Device: s.Device(), Step: "read show version before rollback", Err: err}
	}
	kept := gcuRefusal(img, nowDoc, target)
	if kept != "" {
		if wd, ok := nowDoc["PFC_WD"]; ok {
			target["PFC_WD"] = wd
		} else {
			delete(target, "PFC_WD")
		}
	}
	// GCU validates the replace's target against the SONiC YANG, which
	// refuses rows keyed by a list of ports (portlists.go): the prior
	// CONFIG_DB's list rows go back as one row per listed port, each
	// with the list row's values, and the rollback says so.
	split := splitAllListRows(target)
	body, _ := json.MarshalIndent(target, "", "    ")
	file := "/tmp/" + r.Token + "-prior.json"
	if err := c.WriteFile(file, string(body)+"\n"); err != nil {
		return &stepError{Device: s.Device(), Step: "write " + file, Err: err}
	}
	if _, err := c.Send("sudo config replace " + file); err != nil {
		return &stepError{Device: s.Device(), Step: "config replace", Err: err}
	}
	_, _ = c.Send("rm -f " + file)
	now, _, err := running(c)
	if err != nil {
		return &stepError{Device: s.Device(), Step: "read-back after rollback", Err: err}
	}
	if kept != "" {
		return fmt.Errorf("%s: rolled back except PFC_WD, which keeps its running rows: restoring it %s", s.Device(), kept)
	}
	if len(split) > 0 {
		var nowDoc map[string]any
		if json.Unmarshal(now, &nowDoc) != nil || !reflect.DeepEqual(configDB(nowDoc), target) {
			return fmt.Errorf("%s: after config replace the running config differs from before the apply", s.Device())
		}
		return &splitRestored{device: s.Device(), rows: listKeys(split)}
	}
	if string(now) != string(pre) {
		return fmt.Errorf("%s: after config replace the running config differs from before the apply", s.Device())
	}
	return nil
}

// splitRestored is a rollback that restored everything, the prior list
// rows as one row per listed port (portlists.go).
type splitRestored struct{ device, rows string }

func (e *splitRestored) Error() string {
	return fmt.Sprintf("%s: rolled back, but the rows keyed by a list of ports (%s) are restored as one row per listed port with the list row's values: SONiC GCU validates a config replace against the SONiC YANG, which keys them by one port", e.device, e.rows)
}

// patch is one apply as one GCU patch inside a checkpoint (its ID; Pre
// is the running CONFIG_DB before it, as `show runningconfiguration all`
// printed it).
type patch struct {
	clicore.Tx[[]byte]
	steps []drivers.Change
	// img is the image the planner's Read found: GCU's validator is
	// checked against it before the checkpoint (an image changed since
	// is met as the switch's own refusal).
	img     image
	ops     []Op
	target  map[string]any
	file    string
	content string
}

func (x *patch) Begin(s *clicore.Session) (bool, error) {
	preBytes, pre, err := running(s)
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "read running config before apply", Err: err}
	}
	ops, target, err := effectivePatch(pre, x.steps)
	if err != nil {
		return false, &stepError{Device: s.Device(), Step: "build patch", Err: err}
	}
	// GCU checks the move from the running CONFIG_DB to the target, and a
	// rollback checks the move back (gcu.go): refuse before the checkpoint
	// what the switch would refuse, or could not undo.
	if r := gcuRefusal(x.img, pre, target); r != "" {
		return false, &stepError{Device: s.Device(), Step: "build patch", Err: fmt.Errorf("the switch would refuse the patch: %s; the running CONFIG_DB changed since the plan was made: plan again", r)}
	}
	if r := gcuRefusal(x.img, target, pre); r != "" {
		return false, &stepError{Device: s.Device(), Step: "build patch", Err: fmt.Errorf("the patch could not be rolled back: %s; nothing was sent", r)}
	}
	if len(ops) == 0 {
		return true, nil
	}
	x.Pre, x.ops, x.target = preBytes, ops, target
	x.ID = newToken()
	x.file = "/tmp/" + x.ID + ".json"
	if _, err := s.Send("sudo config checkpoint " + x.ID); err != nil {
		return false, &stepError{Device: s.Device(), Step: "config checkpoint", Err: err}
	}
	x.content = patchFile(ops)
	return false, nil
}

// patchFile is the JSON patch file GCU reads: the ops, one per line.
func patchFile(ops []Op) string {
	lines := make([]string, len(ops))
	for i, op := range ops {
		lines[i] = op.line()
		if i < len(ops)-1 {
			lines[i] += ","
		}
	}
	return "[\n" + strings.Join(lines, "\n") + "\n]\n"
}

func (x *patch) Open(s *clicore.Session) error {
	if err := s.WriteFile(x.file, x.content); err != nil {
		return clicore.Failed("write patch file "+x.file, err)
	}
	return nil
}

func (x *patch) Commit(s *clicore.Session, _ drivers.ApplyOptions) (bool, error) {
	if _, err := s.Send("sudo config apply-patch " + x.file); err != nil {
		return false, clicore.Failed("config apply-patch", err)
	}
	return false, nil
}

// Verify compares the patched paths with the running CONFIG_DB, then
// deletes the checkpoint and the patch file.
func (x *patch) Verify(s *clicore.Session) error {
	_, after, err := running(s)
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
	_, _ = s.Send("sudo config delete-checkpoint " + x.ID)
	_, _ = s.Send("rm -f " + x.file)
}

func (x *patch) Stranded(se *clicore.StepError, err error) error {
	return fmt.Errorf("%v; reconnecting to roll back failed: %v; checkpoint %s on the switch holds the prior config", se, err, x.ID)
}

// Recover restores the prior config and says so, or reports a partial
// apply when it cannot.
func (x *patch) Recover(s *clicore.Session, se *clicore.StepError, lost bool) error {
	name, token := s.Device(), x.ID
	if lost {
		if now, _, err := running(s); err == nil && string(now) == string(x.Pre) {
			x.cleanup(s)
			return fmt.Errorf("%v; the patch did not take effect, the switch is at its prior config", se)
		}
	}
	if hasListRows(x.Pre) {
		// `config rollback` would replace with the checkpoint, list rows
		// and all, which GCU's YANG validation refuses: restore it with
		// the list rows split, as Rollback does.
		err := grammar{}.Rollback(s, drivers.Result{Token: token}, x.Pre, false)
		var sr *splitRestored
		if err != nil && !errors.As(err, &sr) {
			return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; restoring the prior config failed: %v; checkpoint %s on the switch holds it", se, err, token)}
		}
		x.cleanup(s)
		if err == nil {
			return fmt.Errorf("%v; rolled back", se)
		}
		return fmt.Errorf("%v; %v", se, err)
	}
	if _, err := s.Send("sudo config rollback " + token); err != nil {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; config rollback %s failed: %v", se, token, err)}
	}
	now, _, err := running(s)
	if err != nil || string(now) != string(x.Pre) {
		return &drivers.PartialError{Device: name, Err: fmt.Errorf("%v; rolled back to %s but the running config differs from before the apply", se, token)}
	}
	x.cleanup(s)
	return fmt.Errorf("%v; rolled back to checkpoint %s", se, token)
}

// showVersion prints the image's build_version and asic_type
// (sonic-utilities show/main.py version, l.1739 "SONiC Software
// Version: SONiC.{build_version}", l.1748 "ASIC: {asic_type}";
// testdata/vendor/sonic/show-version.txt).
const showVersion = "show version"

// readImage reads what GCU's validator knows of the image. A
// build_version of "N/A" (the key missing) reads as "".
func readImage(s *clicore.Session) (image, error) {
	out, err := s.Send(showVersion)
	if err != nil {
		return image{}, err
	}
	var img image
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "SONiC Software Version: SONiC."):
			img.build = strings.TrimPrefix(l, "SONiC Software Version: SONiC.")
		case strings.HasPrefix(l, "ASIC: "):
			img.asicType = strings.TrimPrefix(l, "ASIC: ")
		}
	}
	if img.build == "N/A" {
		img.build = ""
	}
	if img.asicType == "" {
		return image{}, fmt.Errorf("%s printed no \"ASIC: \" line", showVersion)
	}
	return img, nil
}
