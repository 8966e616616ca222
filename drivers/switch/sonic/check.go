package sonic

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
)

var _ clicore.DeviceChecker = grammar{}

// Check is `plan --check-on-device` on SONiC: the patch apply would
// send, through GCU's dry run (sonic-net/sonic-utilities @ 691b1bbc,
// config/main.py l.1957-1963: `config apply-patch` with `-d,
// --dry-run`, "test out the command without affecting config state"):
//
//	cat > /tmp/fabctl-<id>-check.json       the apply's patch, built the same way
//	sudo config apply-patch --dry-run /tmp/fabctl-<id>-check.json
//	rm -f /tmp/fabctl-<id>-check.json
//
// A dry run builds the same PatchApplier as a real one, with the same
// patch sorter and validators (field operations, empty tables, YANG:
// generic_config_updater/generic_updater.py l.503-533), and only swaps
// the change applier for DryRunChangeApplier, which applies each change
// to an imitated CONFIG_DB (change_applier.py l.63-70; gu_common.py
// DryRunConfigWrapper l.385-405), so what GCU refuses at apply it
// refuses here, and CONFIG_DB is not written. The running CONFIG_DB is
// read before and after and must be byte-identical.
func (grammar) Check(s *clicore.Session, steps []drivers.Change) drivers.DeviceCheck {
	v := drivers.DeviceCheck{}
	fail := func(msg string) drivers.DeviceCheck {
		v.Status, v.Message = drivers.CheckFailed, msg
		return v
	}
	preBytes, pre, err := running(s)
	if err != nil {
		return fail("read running config before the check: " + err.Error())
	}
	ops, _, err := effectivePatch(pre, steps)
	if err != nil {
		return fail("build patch: " + err.Error())
	}
	if len(ops) == 0 {
		v.Status, v.Unchanged, v.Message = drivers.CheckAccepted, true, "the running CONFIG_DB already holds the patch"
		return v
	}
	file := "/tmp/" + newToken() + "-check.json"
	cmd := "sudo config apply-patch --dry-run " + file
	v.Method = "write " + file + ", " + cmd + ", rm -f " + file
	// end reads the CONFIG_DB back (on a new connection after a drop)
	// and removes the patch file.
	end := func(lost bool, cause string) drivers.DeviceCheck {
		if lost {
			if err := s.Reconnect(); err != nil {
				v.Kept = "patch file " + file
				return fail(fmt.Sprintf("%s; reconnecting failed: %v (a dry run writes no CONFIG_DB; %s may be left on the switch)", cause, err, file))
			}
		}
		_, _ = s.Send("rm -f " + file)
		now, _, err := running(s)
		if err != nil {
			return fail(fmt.Sprintf("%s; reading the running config after the check: %v", cause, err))
		}
		if string(now) != string(preBytes) {
			return fail(strings.TrimPrefix(cause+"; ", "; ") + "the running CONFIG_DB differs from before the check: inspect the switch before applying")
		}
		v.Unchanged = true
		if v.Status == "" {
			v.Status, v.Message = drivers.CheckFailed, cause+"; the running CONFIG_DB is unchanged"
		}
		return v
	}
	if err := s.WriteFile(file, patchFile(ops)); err != nil {
		return end(clicore.IsConnLoss(err), "write "+file+": "+err.Error())
	}
	out, err := s.Send(cmd)
	if err != nil {
		text, ok := clicore.Refusal(out, err)
		if !ok {
			return end(clicore.IsConnLoss(err), cmd+": "+err.Error())
		}
		v.Status, v.Line, v.Message = drivers.CheckRefused, cmd, gcuReason(text)
		v.Step, v.Summary = refusedStep(v.Message, steps)
		return end(false, "")
	}
	v.Status = drivers.CheckAccepted
	return end(false, "")
}

// gcuReason is GCU's reason in a failed apply-patch's output: the text
// after "Failed to apply patch due to: " (config/main.py, apply_patch's
// except: "Failed to apply patch due to: {ex}"), else click's "Error:"
// line.
func gcuReason(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "Failed to apply patch due to: "); ok {
			return r
		}
	}
	if r := refused(out); r != "" {
		return strings.TrimPrefix(r, "Error: ")
	}
	return strings.TrimSpace(out)
}

var tableRe = regexp.MustCompile(`\b[A-Z][A-Z0-9_]*[A-Z0-9]\b`)

// refusedStep is the step a GCU refusal answers: GCU checks the patch as
// a whole and names the CONFIG_DB table it refuses ("Modification of
// PFC_WD table is illegal", "... Table: PORT"); the first step patching
// a table the reason names. 0: the reason names none of the steps'
// tables.
func refusedStep(reason string, steps []drivers.Change) (int, string) {
	named := map[string]bool{}
	for _, t := range tableRe.FindAllString(reason, -1) {
		named[t] = true
	}
	for i, st := range steps {
		for _, l := range st.Payload {
			if _, rest, ok := strings.Cut(l, `"path":"/`); ok {
				if t, _, _ := strings.Cut(rest, "/"); named[t] {
					return i + 1, st.Summary
				}
			}
		}
	}
	return 0, ""
}
