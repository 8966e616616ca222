// Command fabctl configures and validates RDMA fabrics from one declarative
// HCL spec. Everything lives in internal/cli; see docs/cli.md.
package main

import (
	"os"

	"github.com/fabctl/fabctl/internal/cli"
)

func main() {
	os.Exit(int(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)))
}
