package cli

// ExitCode is fabctl's process exit status. The values are documented API
// (docs/cli.md): scripts and CI branch on them, so never renumber one.
type ExitCode int

const (
	// ExitOK: the command did what was asked and found no problem.
	ExitOK ExitCode = 0
	// ExitError: the command failed, or found errors (a spec that does not
	// validate, a file that is not formatted under fmt --check).
	ExitError ExitCode = 1
	// ExitChanges: plan succeeded and the fabric differs from the spec
	// (plan --detailed-exitcode style).
	ExitChanges ExitCode = 2
	// ExitStalePlan: a saved plan no longer matches the spec or the live
	// state it was computed against; plan again.
	ExitStalePlan ExitCode = 3
	// ExitLocked: another fabctl holds the fabric lock.
	ExitLocked ExitCode = 4
	// ExitNothingTested: validation ran but no check applied (for example
	// no host or link matched), so it proves nothing.
	ExitNothingTested ExitCode = 5
	// ExitMismatch: the fabric does not match the spec and no change fixes
	// it: plan and drift found a finding of the kind apply cannot repair
	// (an InfiniBand or Ethernet cable down or miswired, an Ethernet link
	// end taking errors, a link trained narrower or slower, an undeclared
	// node, a port that could not be read). Takes
	// precedence over ExitChanges: the plan's changes, if any, are shown
	// too, but applying them leaves the fabric broken.
	ExitMismatch ExitCode = 6
	// ExitRefusedByDevice: plan --check-on-device sent a device's planned
	// change through its own non-committing check and the device refused
	// it (nothing was applied; every device was left as it was). Takes
	// precedence over ExitMismatch and ExitChanges.
	ExitRefusedByDevice ExitCode = 7
	// ExitUsage: the command line is wrong: unknown command or flag, bad
	// flag value, wrong number of arguments (BSD sysexits EX_USAGE).
	ExitUsage ExitCode = 64
	// ExitInternal: an internal error, a bug in fabctl: a panic, or the
	// memory guard stopping a run that outgrew every bound (BSD
	// sysexits EX_SOFTWARE). The message asks for a report.
	ExitInternal ExitCode = 70
)

// exitCodes lists every code with its name, for docs and tests.
var exitCodes = []struct {
	Code ExitCode
	Name string
}{
	{ExitOK, "ok"},
	{ExitError, "error"},
	{ExitChanges, "changes"},
	{ExitStalePlan, "stale-plan"},
	{ExitLocked, "locked"},
	{ExitNothingTested, "nothing-tested"},
	{ExitMismatch, "mismatch"},
	{ExitRefusedByDevice, "refused-by-device"},
	{ExitUsage, "usage"},
	{ExitInternal, "internal"},
}
