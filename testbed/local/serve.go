package local

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/portlink"
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
	sv := &serving{dir: dir, yangDir: r.YANGDir, schemas: map[string]*yangval.Schema{}, log: log}
	prepared := map[string]bool{}
	for _, e := range r.Emulators {
		p, _ := builtin.Platform(e.Platform)
		k, ok := emulators[p.Emulator]
		if ok && k.prepare != nil && !prepared[p.Emulator] {
			prepared[p.Emulator] = true
			if err := k.prepare(sv, p); err != nil {
				return err
			}
		}
	}
	gnmi, err := newGNMIServing(dir, r, log)
	if err == nil {
		gnmi.links = sv.links
	}
	if err != nil {
		return err
	}
	defer gnmi.cleanup()
	sv.gnmi = gnmi
	var lines []string
	for _, e := range r.Emulators {
		pw, err := (spec.SecretRef{Kind: e.PasswordKind, Name: e.PasswordName}).Resolve(os.Getenv)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		var s server
		p, _ := builtin.Platform(e.Platform)
		if k, ok := emulators[p.Emulator]; ok {
			s, err = k.start(ctx, sv, p, e, pw)
		} else {
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
	if err := safefile.WriteFile(kh, []byte(strings.Join(lines, "\n")+"\n"), 0o644, safefile.Testbed); err != nil {
		return err
	}
	logf(log, "wrote %s; serving until SIGTERM", kh)
	<-ctx.Done()
	logf(log, "stopping")
	return nil
}

// emulatorKind starts the emulators of one kind.
type emulatorKind struct {
	// prepare, when set, runs once before any emulator starts when the
	// record has an emulator of the kind.
	prepare func(sv *serving, p drivers.Platform) error
	start   func(ctx context.Context, sv *serving, p drivers.Platform, e Emulator, pw string) (server, error)
}

// emulators maps a platform's emulator kind (drivers.Platform.Emulator)
// to what starts it: the one list of the testbed's emulators. A platform
// whose kind is not here has no emulator in this build.
var emulators = map[string]emulatorKind{
	"sonic": {
		// The SONiC YANG models, loaded once and shared by every SONiC
		// emulator.
		prepare: func(sv *serving, p drivers.Platform) error {
			yd := yangSet(sv.yangDir, p.YANG)
			if yd == "" {
				return nil
			}
			schema, err := yangval.Load(yd)
			if err != nil {
				return fmt.Errorf("SONiC YANG models in %s: %w", yd, err)
			}
			sv.schemas[p.YANG.Set] = schema
			logf(sv.log, "SONiC emulators validate patches against the YANG models in %s", yd)
			return nil
		},
		start: func(_ context.Context, sv *serving, p drivers.Platform, e Emulator, pw string) (server, error) {
			return sonicemu.Start(sonicemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, ExtraPorts: e.PortNames, Addr: e.Address, YANG: sv.schemas[p.YANG.Set],
				Profile: &p.YANG.Profile, Links: sv.links(e)})
		},
	},
	"eos": {start: func(_ context.Context, sv *serving, _ drivers.Platform, e Emulator, pw string) (server, error) {
		return eosemu.Start(eosemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, ExtraPorts: e.PortNames, Addr: e.Address, Model: e.Model,
			Links: sv.links(e)})
	}},
	"nxos": {start: func(_ context.Context, sv *serving, _ drivers.Platform, e Emulator, pw string) (server, error) {
		return nxosemu.Start(nxosemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, ExtraPorts: e.PortNames, Addr: e.Address,
			Links: sv.links(e)})
	}},
	"cumulus": {start: func(_ context.Context, sv *serving, _ drivers.Platform, e Emulator, pw string) (server, error) {
		return cumulusemu.Start(cumulusemu.Options{Hostname: e.Name, User: e.Username, Password: pw, Ports: e.Ports, Addr: e.Address,
			Links: sv.links(e)})
	}},
	// gNMI targets (testbed/gnmitarget) in the platform's flavor.
	gnmiEmulator: {start: func(ctx context.Context, sv *serving, p drivers.Platform, e Emulator, pw string) (server, error) {
		return sv.gnmi.start(ctx, p, e, pw)
	}},
}

// gnmiEmulator is the emulator kind of the gNMI platforms.
const gnmiEmulator = "gnmi"

// emulatorFor is the platform's emulator kind, "" when it has none in
// this build.
func emulatorFor(platform string) string {
	p, ok := builtin.Platform(platform)
	if _, has := emulators[p.Emulator]; !ok || !has {
		return ""
	}
	return p.Emulator
}

// serving is what the emulators of one Serve share.
type serving struct {
	dir     string // the testbed directory
	yangDir string
	schemas map[string]*yangval.Schema // by YANG set, for the SSH CLI emulators
	gnmi    *gnmiServing
	log     io.Writer
}

// links is an emulator's cabling: its switch's live LinkSource (the veth
// ends the testbed cabled as its ports, cabling.go).
func (sv *serving) links(e Emulator) portlink.Source {
	return LinkSource{Dir: sv.dir, Switch: e.Name}
}

// yangSet is the directory of a model set under the testbed's
// --yang-dir: the directory itself when it holds that set's top-level
// module (a SONiC-only directory, as before), else DIR/<set> when that
// holds it; "" when the set is not there.
func yangSet(dir string, set drivers.YANGModels) string {
	if dir == "" || set.Set == "" {
		return ""
	}
	for _, d := range []string{dir, filepath.Join(dir, set.Set)} {
		if _, err := os.Stat(filepath.Join(d, set.Marker)); err == nil {
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
	links        func(Emulator) portlink.Source
}

func newGNMIServing(dir string, r *Record, log io.Writer) (*gnmiServing, error) {
	g := &gnmiServing{dir: dir, yangDir: r.YANGDir, schemas: map[string]*yangval.Schema{}, log: log}
	var hosts []string
	for _, e := range r.Emulators {
		if emulatorFor(e.Platform) == gnmiEmulator {
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
	ca, err := safefile.ReadFile(p.CA, safefile.TLS)
	if err != nil {
		return nil, err
	}
	if err := safefile.WriteFile(filepath.Join(dir, GNMICAFile), ca, 0o644, safefile.Testbed); err != nil {
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

// gnmiPorts names an emulated switch's interfaces (SR Linux
// ethernet-1/1.., OpenConfig Ethernet0..; 32 when the record has none).
func gnmiPorts(p drivers.Platform, n int) []string {
	if n <= 0 {
		n = 32
	}
	out := make([]string, n)
	for i := range out {
		out[i] = p.Ports.Name(i)
	}
	return out
}

func (g *gnmiServing) start(ctx context.Context, p drivers.Platform, e Emulator, pw string) (server, error) {
	if g.pki == nil {
		return nil, fmt.Errorf("no gNMI certificates") // newGNMIServing saw no gNMI emulator
	}
	// The target impersonates the model family of the platform's YANG
	// model set (gnmitarget.FlavorOpenConfig "openconfig",
	// FlavorSRLinux "srlinux"), whatever the platform is called.
	cfg := gnmitarget.Config{Addr: e.Address, Name: e.Name, Flavor: p.YANG.Set, TLS: g.pki.TLS(false),
		Username: e.Username, Password: pw, Interfaces: append(gnmiPorts(p, e.Ports), e.PortNames...), CommitConfirm: true, Profile: &p.YANG.Profile}
	if g.links != nil {
		cfg.Links = g.links(e)
	}
	if p.EmulatorInitial != nil {
		cfg.Initial = p.EmulatorInitial()
	}
	if yd := yangSet(g.yangDir, p.YANG); yd != "" {
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
