package local

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabctl/fabctl/drivers/switch/srlinux"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
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
	if yd := yangSet(r.YANGDir, "sonic"); yd != "" {
		for _, e := range r.Emulators {
			if e.Platform == "sonic" {
				if schema, err = yangval.Load(yd); err != nil {
					return fmt.Errorf("SONiC YANG models in %s: %w", yd, err)
				}
				logf(log, "SONiC emulators validate patches against the YANG models in %s", yd)
				break
			}
		}
	}
	gnmi, err := newGNMIServing(dir, r, log)
	if err != nil {
		return err
	}
	defer gnmi.cleanup()
	var lines []string
	for _, e := range r.Emulators {
		pw, err := sshtransport.ResolveSecret(&spec.SecretRef{Kind: e.PasswordKind, Name: e.PasswordName}, os.Getenv)
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
		case "openconfig", "srlinux":
			s, err = gnmi.start(ctx, e, pw)
		default:
			err = fmt.Errorf("no %s emulator in this build", e.Platform)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		running = append(running, s)
		if l := s.KnownHostsLine(); l != "" {
			lines = append(lines, l)
		}
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

// yangSet is the directory of a model set ("sonic", "openconfig",
// "srlinux") under the testbed's --yang-dir: the directory itself when it
// holds that set's top-level module (a SONiC-only directory, as before),
// else DIR/<set> when that holds it; "" when the set is not there.
func yangSet(dir, set string) string {
	if dir == "" {
		return ""
	}
	marker := map[string]string{"sonic": "sonic-port.yang", "openconfig": "openconfig-qos.yang", "srlinux": "srl_nokia-qos.yang"}[set]
	for _, d := range []string{dir, filepath.Join(dir, set)} {
		if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
			return d
		}
	}
	return ""
}

// GNMICAFile is the CA certificate of the gNMI targets, in the testbed
// directory (a spec's credentials name it in ca_file). It and the PKI
// directory exist while the testbed serves.
const (
	GNMICAFile = "gnmi-ca.pem"
	gnmiPKIDir = "gnmi-pki"
)

// gnmiServing starts the gNMI targets of a testbed: one PKI for all of
// them (server certificate for every target's address), models loaded
// once per set.
type gnmiServing struct {
	dir, yangDir string
	pki          *gnmitarget.PKI
	schemas      map[string]*yangval.Schema
	log          io.Writer
}

func newGNMIServing(dir string, r *Record, log io.Writer) (*gnmiServing, error) {
	g := &gnmiServing{dir: dir, yangDir: r.YANGDir, schemas: map[string]*yangval.Schema{}, log: log}
	var hosts []string
	for _, e := range r.Emulators {
		if e.Platform == "openconfig" || e.Platform == "srlinux" {
			if h, _, err := net.SplitHostPort(e.Address); err == nil {
				hosts = append(hosts, h)
			}
		}
	}
	if len(hosts) == 0 {
		return g, nil
	}
	p, err := gnmitarget.NewTestPKI(filepath.Join(dir, gnmiPKIDir), append(hosts, "localhost")...)
	if err != nil {
		return nil, fmt.Errorf("gNMI TLS certificates: %w", err)
	}
	ca, err := os.ReadFile(p.CA)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, GNMICAFile), ca, 0o644); err != nil {
		return nil, err
	}
	g.pki = p
	logf(log, "gNMI targets serve TLS with certificates from the CA in %s", filepath.Join(dir, GNMICAFile))
	return g, nil
}

// cleanup removes the PKI: its keys are only for this serving process.
func (g *gnmiServing) cleanup() {
	if g.pki != nil {
		_ = os.RemoveAll(filepath.Join(g.dir, gnmiPKIDir))
		_ = os.Remove(filepath.Join(g.dir, GNMICAFile))
	}
}

// gnmiPorts names an emulated switch's interfaces: SR Linux
// ethernet-1/1.., OpenConfig Ethernet0.. (32 when the record has none).
func gnmiPorts(platform string, n int) []string {
	if n <= 0 {
		n = 32
	}
	out := make([]string, n)
	for i := range out {
		if platform == "srlinux" {
			out[i] = fmt.Sprintf("ethernet-1/%d", i+1)
		} else {
			out[i] = fmt.Sprintf("Ethernet%d", i)
		}
	}
	return out
}

func (g *gnmiServing) start(ctx context.Context, e Emulator, pw string) (server, error) {
	if g.pki == nil {
		return nil, fmt.Errorf("no gNMI certificates") // newGNMIServing saw no gNMI emulator
	}
	cfg := gnmitarget.Config{Addr: e.Address, Name: e.Name, Flavor: e.Platform, TLS: g.pki.TLS(false),
		Username: e.Username, Password: pw, Interfaces: gnmiPorts(e.Platform, e.Ports), CommitConfirm: true}
	if e.Platform == "srlinux" {
		// SR Linux starts with its system-reserved forwarding classes and
		// queues, which the srlinux driver refers to.
		cfg.Initial = srlinux.SystemDefaults()
	}
	if yd := yangSet(g.yangDir, e.Platform); yd != "" {
		if g.schemas[e.Platform] == nil {
			s, err := yangval.Load(yd)
			if err != nil {
				return nil, fmt.Errorf("%s YANG models in %s: %w", e.Platform, yd, err)
			}
			g.schemas[e.Platform] = s
			logf(g.log, "%s gNMI targets validate every Set against the YANG models in %s", e.Platform, yd)
		}
		cfg.Schema = g.schemas[e.Platform]
	}
	t, err := gnmitarget.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return gnmiServer{t}, nil
}

// gnmiServer is a gNMI target as a serve process server: it has no SSH
// host key (TLS is verified against GNMICAFile instead).
type gnmiServer struct{ *gnmitarget.Target }

func (gnmiServer) KnownHostsLine() string { return "" }
