package clicore

import (
	"errors"
	"fmt"

	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
)

// StepError names the step of a device transaction that failed
// ("checkpoint", "line 12 of 35 in session ...", "commit").
type StepError struct {
	Device, Step string
	Err          error
}

func (e *StepError) Error() string {
	// An SSH transport error already names the device and the command:
	// keep only its kind and cause after the step.
	var se *sshtransport.Error
	if errors.As(e.Err, &se) && se.Device == e.Device {
		s := fmt.Sprintf("%s: %s: %s", e.Device, e.Step, se.Kind)
		switch {
		case se.Kind == sshtransport.KindClosed:
			s += ": the connection dropped before the switch answered"
		case se.Detail != "":
			s += ": " + se.Detail
		}
		return s
	}
	return fmt.Sprintf("%s: %s: %v", e.Device, e.Step, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// IsConnLoss reports whether err means the session is gone (closed or
// timed out), so the transaction's state on the device is unknown until
// a new session looks.
func IsConnLoss(err error) bool {
	var e *sshtransport.Error
	return errors.As(err, &e) && (e.Kind == sshtransport.KindClosed || e.Kind == sshtransport.KindTimeout)
}
