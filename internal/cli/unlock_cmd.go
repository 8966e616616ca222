package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/internal/cli/view"
)

// ForceUnlockOptions are the inputs of fabctl force-unlock.
type ForceUnlockOptions struct {
	IO       *IOStreams
	JSON     bool
	ID       string
	Path     string // spec file or directory: locates the state directory
	StateDir string
	// Force removes the lock even when its holder is alive on this machine.
	Force bool
}

// NewCmdForceUnlock returns `fabctl force-unlock`.
func NewCmdForceUnlock(f *Factory, runF func(*ForceUnlockOptions) error) *cobra.Command {
	opts := &ForceUnlockOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "force-unlock LOCK_ID [SPEC]",
		Short: "Remove a fabric lock left by a run that is gone",
		Long: `Remove the fabric lock with this ID from the state directory (.fabctl beside
the spec, or --state-dir). The ID is the one a locked apply printed; a lock
with another ID is left alone, so you can only remove a lock you have seen.

fabctl never breaks a lock by itself. Remove one only when the run that
holds it is gone (the holder and pid are shown), and check the devices it
was applying first: its journal says which ones it reached. A lock whose
holder is still running on this machine is refused unless --force is
given too. A wrong ID is refused without showing the right one.

The spec is not loaded (force-unlock works on a broken spec).

Exit status: 0 removed, 1 no lock, another ID or a live holder, 64 usage
error.`,
		Example: `  fabctl force-unlock 4f3c9a2e-8d1b-4c6e-9f0a-1b2c3d4e5f60 fabric/
  fabctl force-unlock 4f3c9a2e-8d1b-4c6e-9f0a-1b2c3d4e5f60 --state-dir /var/lib/fabctl`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			opts.Path = "."
			if len(args) == 2 {
				opts.Path = args[1]
			}
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return forceUnlockRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.StateDir, "state-dir", "", "Directory holding the lock (default: .fabctl beside the spec)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Remove the lock even when the run holding it is still alive on this machine")
	return cmd
}

// forceUnlockJSONDoc is format_version 1.0 of force-unlock --json.
type forceUnlockJSONDoc struct {
	FormatVersion string              `json:"format_version"`
	Unlocked      bool                `json:"unlocked"`
	Lock          *view.ApplyJSONLock `json:"lock"`
	Error         string              `json:"error"`
}

func forceUnlockRun(opts *ForceUnlockOptions) error {
	dir := stateDir(opts.Path, opts.StateDir)
	info, err := apply.ForceUnlockID(dir, opts.ID, opts.Force)
	var me *apply.MismatchError
	if errors.As(err, &me) {
		info = me.Held
		info.ID = "" // never shown for a wrong ID
	}
	if opts.JSON {
		doc := forceUnlockJSONDoc{FormatVersion: jsonFormatVersion, Unlocked: err == nil}
		if info.Who != "" {
			doc.Lock = &view.ApplyJSONLock{ID: info.ID, Operation: info.Operation, Who: info.Who, PID: info.PID,
				Version: info.Version, Created: info.Created.UTC(), Path: info.Path}
		}
		if err != nil {
			doc.Error = err.Error()
		}
		if werr := writeJSON(opts.IO.Out, doc); werr != nil {
			return werr
		}
		if err != nil {
			return exitWith(ExitError)
		}
		return nil
	}
	if err != nil {
		return err
	}
	st := newStyles(opts.IO.Out, opts.IO.ColorEnabled())
	fmt.Fprintf(opts.IO.Out, "%s lock %s removed (held by %s, pid %d, for %s since %s).\n",
		st.OK.Render("✔"), info.ID, info.Who, info.PID, info.Operation, info.Created.UTC().Format(time.RFC3339))
	return nil
}
