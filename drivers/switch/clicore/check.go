package clicore

import (
	"context"
	"errors"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
)

// DeviceChecker is a Platform with a non-committing check
// (drivers.Checker): Check sends steps through the platform's own
// non-committing path on s, leaves the device as it was, reads it back
// and returns the verdict. Core fills the refused step's position and
// summary from its Line (drivers.DeviceCheck.RefusedAt).
type DeviceChecker interface {
	Check(s *Session, steps []drivers.Change) drivers.DeviceCheck
}

// CheckOnDevice runs the platform's check (DeviceChecker), or says why
// the platform has none (Facts.NoCheck).
func (k *Core) CheckOnDevice(ctx context.Context, t drivers.Target, steps []drivers.Change) drivers.DeviceCheck {
	dc, ok := k.P.(DeviceChecker)
	if !ok {
		why := k.Facts.NoCheck
		if why == "" {
			why = "the " + k.Facts.Name + " driver has no vendor-sourced non-committing check"
		}
		return drivers.NotChecked(why)
	}
	s, err := k.Dial(ctx, t)
	if err != nil {
		return drivers.DeviceCheck{Status: drivers.CheckFailed, Message: err.Error(), Unchanged: true}
	}
	defer func() { s.Close() }()
	v := dc.Check(s, steps)
	if v.Status == drivers.CheckRefused {
		v.RefusedAt(steps)
	}
	return v
}

// Refusal returns the device's own text when err is the device refusing
// a command (the platform's failed-when-contains or Refused texts), with
// secret words masked; ok false for any other error (a dropped
// connection, a timeout, a line fabctl's own check stopped).
func Refusal(out string, err error) (text string, ok bool) {
	var e *sshtransport.Error
	if !errors.As(err, &e) || e.Kind != sshtransport.KindCommand {
		return "", false
	}
	text = strings.TrimSpace(strings.ReplaceAll(drivers.RedactSecretWords(out, "<redacted>"), "\r", ""))
	if text == "" {
		text = e.Detail
	}
	return text, true
}

// Reconnect replaces the session's connection (after a lost one), with
// a context that is not cancelled, so a check or a transaction can clear
// what it left on the device.
func (s *Session) Reconnect() error { return s.redial(context.WithoutCancel(s.Ctx)) }
