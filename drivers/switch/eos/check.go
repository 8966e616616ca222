package eos

import (
	"fmt"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
)

var _ clicore.DeviceChecker = grammar{}

// Check is `plan --check-on-device` on EOS: NAPALM's compare_config
// flow (napalm-automation/napalm @ ee70e634, napalm/eos/eos.py;
// testdata/vendor/eos/napalm-config-session.txt):
//
//	configure session fabctl-<id>              eos.py l.417
//	<the apply's lines, as the apply sends them>
//	end                                        eos.py l.454-455 (the session stays pending)
//	show session-config named fabctl-<id> diffs eos.py l.486
//	configure session fabctl-<id> abort        eos.py l.545 (discard_config)
//
// A line the switch refuses ends the load, and the session is discarded
// with the same abort, as NAPALM's _load_config does on a
// ConfigInvalidException (eos.py l.446-448). The session's lines are
// validated by the same parser as `configure terminal` (Arista EOS User
// Manual, "Configuration sessions": a session is edited with the same
// commands as the running-config and takes effect only at commit), so a
// line refused here is refused by apply. Nothing is committed: the
// running-config is read before and after and must be byte-identical.
func (grammar) Check(s *clicore.Session, steps []drivers.Change) drivers.DeviceCheck {
	lines, _ := clicore.JoinLines(steps)
	script := Script(lines)
	name := newToken()
	v := drivers.DeviceCheck{Method: "configure session " + name + ", the planned lines, end, show session-config named " + name + " diffs, configure session " + name + " abort"}
	fail := func(msg string) drivers.DeviceCheck {
		v.Status, v.Message = drivers.CheckFailed, msg
		return v
	}
	pre, err := running(s)
	if err != nil {
		return fail("read running-config before the check: " + err.Error())
	}
	abort := "configure session " + name + " abort"
	// cleanup ends the check: the session is discarded (on a new
	// connection when the old one dropped) and the running-config read
	// back.
	cleanup := func(lost, inSession bool, cause string) drivers.DeviceCheck {
		if cause == "" {
			cause = "the check"
		}
		if lost {
			if err := s.Reconnect(); err != nil {
				v.Kept = "configuration session " + name
				return fail(fmt.Sprintf("%s; reconnecting failed: %v; session %s may be pending on the switch: discard it with `%s`", cause, err, name, abort))
			}
		}
		if inSession && !lost {
			if _, err := s.Send("end"); err != nil {
				v.Kept = "configuration session " + name
				return fail(fmt.Sprintf("%s; leaving session %s: %v", cause, name, err))
			}
		}
		if out, err := s.Send(abort); err != nil {
			// The corpus shows no text for aborting a session that does
			// not exist; a refusal here after a dropped connection may be
			// that, so the read-back below decides.
			if _, refused := clicore.Refusal(out, err); !refused || !lost {
				v.Kept = "configuration session " + name
				return fail(fmt.Sprintf("%s; `%s` failed: %v", cause, abort, err))
			}
		}
		now, err := running(s)
		if err != nil {
			v.Kept = "configuration session " + name
			return fail(fmt.Sprintf("%s; reading the running-config after the check: %v", cause, err))
		}
		if now != pre {
			return fail(cause + "; the running-config differs from before the check: inspect the switch before applying")
		}
		v.Unchanged = true
		if v.Status == "" {
			// The check did not run to its end: no verdict.
			v.Status, v.Message = drivers.CheckFailed, cause+"; session "+name+" was discarded and the running-config is unchanged"
		}
		return v
	}
	if out, err := s.Send("configure session " + name); err != nil {
		if text, ok := clicore.Refusal(out, err); ok {
			return fail("configure session " + name + ": " + text)
		}
		return cleanup(clicore.IsConnLoss(err), false, "configure session "+name+": "+err.Error())
	}
	for i, l := range script {
		out, err := s.Send(l)
		if err == nil {
			continue
		}
		if text, ok := clicore.Refusal(out, err); ok {
			v.Status, v.Line, v.Message = drivers.CheckRefused, l, text
			return cleanup(false, true, "the switch refused "+l+": "+text)
		}
		return cleanup(clicore.IsConnLoss(err), true, fmt.Sprintf("line %d of %d (%s) in session %s: %v", i+1, len(script), l, name, err))
	}
	if _, err := s.Send("end"); err != nil {
		return cleanup(clicore.IsConnLoss(err), true, "end (session "+name+"): "+err.Error())
	}
	if _, err := s.Send("show session-config named " + name + " diffs"); err != nil {
		return cleanup(clicore.IsConnLoss(err), false, "show session-config named "+name+" diffs: "+err.Error())
	}
	v.Status = drivers.CheckAccepted
	return cleanup(false, false, "")
}
