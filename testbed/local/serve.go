package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabctl/fabctl/drivers/switch/sshcli"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/sonicemu"
	"github.com/fabctl/fabctl/yangval"
)

type server interface {
	KnownHostsLine() string
	Close() error
}

// Serve runs the emulators recorded in <dir>/testbed.json until ctx is
// done: each on its address with a freshly generated host key, the keys
// written to <dir>/known_hosts once all of them listen. It is the body of
// the hidden `fabctl testbed serve`; log gets one line per emulator.
func Serve(ctx context.Context, dir string, log io.Writer) error {
	r, err := ReadRecord(dir)
	if err != nil {
		return err
	}
	var running []server
	defer func() {
		for _, s := range running {
			_ = s.Close()
		}
	}()
	// The SONiC YANG models, loaded once and shared by every SONiC emulator.
	var schema *yangval.Schema
	if r.YANGDir != "" {
		for _, e := range r.Emulators {
			if e.Platform == "sonic" {
				if schema, err = yangval.Load(r.YANGDir); err != nil {
					return fmt.Errorf("SONiC YANG models in %s: %w", r.YANGDir, err)
				}
				logf(log, "SONiC emulators validate patches against the YANG models in %s", r.YANGDir)
				break
			}
		}
	}
	var lines []string
	for _, e := range r.Emulators {
		pw, err := sshcli.ResolveSecret(&spec.SecretRef{Kind: e.PasswordKind, Name: e.PasswordName}, os.Getenv)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		var s server
		switch e.Platform {
		case "sonic":
			s, err = sonicemu.Start(sonicemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, Addr: e.Address, YANG: schema})
		case "eos":
			s, err = eosemu.Start(eosemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, Addr: e.Address})
		case "nxos":
			s, err = nxosemu.Start(nxosemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, Addr: e.Address})
		case "cumulus":
			s, err = cumulusemu.Start(cumulusemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, Addr: e.Address})
		default:
			err = fmt.Errorf("no %s emulator in this build", e.Platform)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		running = append(running, s)
		lines = append(lines, s.KnownHostsLine())
		logf(log, "%s: %s emulator listening on %s", e.Name, e.Platform, e.Address)
	}
	kh := filepath.Join(dir, KnownHostsFile)
	if err := os.WriteFile(kh+".tmp", []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(kh+".tmp", kh); err != nil {
		return err
	}
	logf(log, "wrote %s; serving until SIGTERM", kh)
	<-ctx.Done()
	logf(log, "stopping")
	return nil
}
