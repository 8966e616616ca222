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
func NewCmdIBMAD(f *Factory, runF func(*IBMADOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:                "ibmad read|smp|restore [flags]",
		Short:              "Read or repair the InfiniBand fabric with MADs from this host (run by fabctl on the subnet manager host)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &IBMADOptions{IO: f.IOStreams, Args: args, Ctx: cmd.Context()}
			if opts.Ctx == nil {
				opts.Ctx = context.Background()
			}
			if runF != nil {
				return runF(opts)
			}
			return ibmadRun(opts)
		},
	}
}

// IBMADOptions are the inputs of the hidden fabctl ibmad: its arguments
// as given (ibmad parses them).
type IBMADOptions struct {
	IO   *IOStreams
	Ctx  context.Context
	Args []string
}

func ibmadRun(opts *IBMADOptions) error {
	code := ibmad.Main(opts.Ctx, opts.Args, opts.IO.In, opts.IO.Out, opts.IO.ErrOut)
	// Through the C library's exit: libumad2sim's atexit cleanup must
	// run under ibsim (ibmad.Exit).
	ibmad.Exit(code)
	return nil
}
