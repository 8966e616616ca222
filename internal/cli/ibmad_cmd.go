package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibmad"
)

// NewCmdIBMAD returns the hidden `fabctl ibmad`: the MAD client the opensm
// driver and validate run on the subnet manager host (and the testbed
// under ibsim) to read the fabric in one process and restore port tables
// (drivers/sm/ibfabric/ibmad). Its flags and JSON are that package's.
func NewCmdIBMAD(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:                "ibmad read|smp|restore [flags]",
		Short:              "Read or repair the InfiniBand fabric with MADs from this host (run by fabctl on the subnet manager host)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			code := ibmad.Main(ctx, args, f.IOStreams.In, f.IOStreams.Out, f.IOStreams.ErrOut)
			// Through the C library's exit: libumad2sim's atexit
			// cleanup must run under ibsim (ibmad.Exit).
			ibmad.Exit(code)
			return nil
		},
	}
}
