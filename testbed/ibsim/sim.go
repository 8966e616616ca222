// Package ibsim runs a simulated InfiniBand fabric on this machine: the
// real subnet manager and the real diagnostic tools against ibsim, the
// fabric simulator of Debian's ibsim-utils.
//
// How the pieces meet (linux-rdma/ibsim, tag ibsim-0.10 = Debian 0.10-2):
//
//   - ibsim reads a net file (see NetFile) and serves MADs on unix
//     datagram sockets in the abstract namespace, named "<base>:ctl",
//     "<base>:in<pid>", "<base>:out<n>"; the base is $IBSIM_SOCKNAME
//     (default "sim"; ibsim/ibsim.c sim_run, umad2sim/sim_client.c
//     sim_connect). Each Sim picks its own base, so tests never talk to
//     a user's running ibsim or to each other.
//   - a program run with LD_PRELOAD=libumad2sim.so (what ibsim-run
//     does) has its libibumad calls and /sys/class/infiniband reads
//     redirected to ibsim. $SIM_HOST names the node it attaches to (the
//     first node of the net file otherwise), and it keeps a fake sysfs
//     in ./sys-<pid> of its working directory, so clients run in the
//     Sim's clients directory. ibsim serves at most 10 clients at once
//     (IBSIM_MAX_CLIENTS), the subnet manager being one.
//   - opensm runs under the preload on the SM adapter with a config
//     directory of rendered files (opensm.conf, partitions.conf,
//     qos-policy.conf). opensm buffers its log file unless
//     force_log_flush is TRUE, so "SUBNET UP" may sit in the buffer for
//     good on a quiet fabric: the Sim always sets it.
//   - ibsim's console (Link, Unlink, ReLink, Error, Dump, ...; ibsim
//     console "help", ibsim/sim_cmd.c) reads its standard input: the Sim
//     gives it a FIFO it holds open read-write, so commands can be
//     written by this process or a later one, and ibsim never sees EOF
//     (at EOF it would spin on select).
//
// Everything a Sim starts is recorded in <dir>/state.json; Down(dir)
// stops it from another process (fabctl testbed down).
package ibsim

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibmad"
	"github.com/fabctl/fabctl/internal/safefile"
)

// Files in a Sim's directory.
const (
	StateFile   = "state.json"
	NetFileName = "net"
	ConsoleFIFO = "console"
	ConsoleOut  = "ibsim.out"
	IBSimErr    = "ibsim.err"
	OpenSMDir   = "opensm"
	OpenSMLog   = "opensm.log"
	OpenSMOut   = "opensm.out"
	ClientsDir  = "clients"
)

// Binaries the package runs.
var tools = []string{"ibsim", "opensm", "ibnetdiscover", "smpquery", "ibportstate"}

// Preload finds libumad2sim.so (Debian: libumad2sim0,
// /usr/lib/<triplet>/umad2sim/libumad2sim.so).
func Preload() (string, error) {
	var cands []string
	for _, pat := range []string{"/usr/lib/*/umad2sim/libumad2sim.so", "/usr/lib64/umad2sim/libumad2sim.so", "/usr/lib/umad2sim/libumad2sim.so", "/usr/local/lib/umad2sim/libumad2sim.so"} {
		m, _ := filepath.Glob(pat)
		cands = append(cands, m...)
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, nil
		}
	}
	return "", errors.New("libumad2sim.so not found (Debian: apt-get install ibsim-utils libumad2sim0)")
}

// Available says why the simulator cannot run here, or nil.
func Available() error {
	var missing []string
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			// opensm and the diags live in /usr/sbin, which a user's PATH may lack.
			if _, err2 := os.Stat("/usr/sbin/" + t); err2 != nil {
				missing = append(missing, t)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s (Debian: apt-get install ibsim-utils opensm infiniband-diags)", strings.Join(missing, ", "))
	}
	_, err := Preload()
	return err
}

func lookTool(t string) string {
	if p, err := exec.LookPath(t); err == nil {
		return p
	}
	return "/usr/sbin/" + t
}

// SMFiles are opensm's configuration files as drivers/sm/opensm renders
// them. A nil file is not written (opensm then runs at its defaults for
// it). The Sim adds its own lines to opensm.conf (log, dump and cache
// places, the two files' paths, force_log_flush) and drops the rendered
// file's lines for those options.
type SMFiles struct {
	OpenSMConf []byte
	Partitions []byte
	QoSPolicy  []byte
}

// Config describes a Sim.
type Config struct {
	// Topology is the fabric to simulate: the intended one, or one
	// derived from it with Miswire, Degrade or Uncable.
	Topology *ibfabric.Topology
	// SMNode is the adapter opensm and the diags attach to (default:
	// the topology's first adapter).
	SMNode string
	Files  SMFiles
	// Dir is the Sim's directory; "" makes a temporary one that Stop
	// removes.
	Dir string
	// UpTimeout bounds the wait for SUBNET UP (default 60s).
	UpTimeout time.Duration
	// Log receives progress lines (nil: discarded).
	Log io.Writer
	// Detach starts ibsim and opensm in sessions of their own, so they
	// outlive this process (for a `testbed up` command); Down stops them.
	Detach bool
}

// State is what state.json records.
type State struct {
	Dir       string    `json:"dir"`
	TempDir   bool      `json:"temp_dir"` // Dir was made by the Sim: Down removes it
	Socket    string    `json:"socket"`   // IBSIM_SOCKNAME
	SMNode    string    `json:"sm_node"`
	Preload   string    `json:"preload"`
	IBSimPID  int       `json:"ibsim_pid"`
	OpenSMPID int       `json:"opensm_pid"`
	Started   time.Time `json:"started"`
}

// Sim is a running simulated fabric.
type Sim struct {
	State
	cfg     Config
	ibsim   *exec.Cmd
	opensm  *exec.Cmd
	fifo    *os.File // held read-write, ibsim's stdin
	conMu   sync.Mutex
	conSeq  int
	waitErr map[int]chan error
}

func (s *Sim) path(name ...string) string { return filepath.Join(append([]string{s.Dir}, name...)...) }

func (s *Sim) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, "ibsim: "+format+"\n", args...)
	}
}

// Start writes the net file and opensm's files, starts ibsim and opensm
// and waits for SUBNET UP.
func Start(ctx context.Context, cfg Config) (_ *Sim, err error) {
	if err := Available(); err != nil {
		return nil, err
	}
	if cfg.Topology == nil {
		return nil, errors.New("ibsim: no topology")
	}
	net, err := NetFile(cfg.Topology)
	if err != nil {
		return nil, fmt.Errorf("ibsim: %w", err)
	}
	if cfg.SMNode == "" {
		if len(cfg.Topology.HCAs) == 0 {
			return nil, errors.New("ibsim: the topology has no adapter for the subnet manager")
		}
		cfg.SMNode = cfg.Topology.HCAs[0].Name
	}
	smOK := false
	for _, h := range cfg.Topology.HCAs {
		smOK = smOK || h.Name == cfg.SMNode
	}
	if !smOK {
		return nil, fmt.Errorf("ibsim: the subnet manager node %q is not an adapter of the topology", cfg.SMNode)
	}
	if cfg.UpTimeout <= 0 {
		cfg.UpTimeout = 60 * time.Second
	}
	s := &Sim{cfg: cfg, waitErr: map[int]chan error{}}
	s.SMNode = cfg.SMNode
	if s.Preload, err = Preload(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "fabctl-ibsim-")
		if err != nil {
			return nil, err
		}
		s.Dir, s.TempDir = d, true
	} else {
		s.Dir, err = filepath.Abs(cfg.Dir)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(s.Dir, StateFile)); err == nil {
			return nil, fmt.Errorf("ibsim: %s already holds a simulated fabric (%s): stop it first", s.Dir, StateFile)
		}
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	s.Socket = "fabctl-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rnd[:])
	s.Started = time.Now().UTC()
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	for _, d := range []string{s.Dir, s.path(OpenSMDir), s.path(OpenSMDir, "cache"), s.path(ClientsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := safefile.WriteFile(s.path(NetFileName), net, 0o644, safefile.Testbed); err != nil {
		return nil, err
	}
	if err := s.writeFiles(cfg.Files); err != nil {
		return nil, err
	}
	if err := s.startIBSim(); err != nil {
		return nil, err
	}
	if err := s.saveState(); err != nil {
		return nil, err
	}
	if err := s.startOpenSM(); err != nil {
		return nil, err
	}
	if err := s.saveState(); err != nil {
		return nil, err
	}
	if err := s.WaitSubnetUp(ctx, 0); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Sim) saveState() error {
	b, err := json.MarshalIndent(s.State, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(s.path(StateFile), append(b, '\n'), 0o644, safefile.Testbed)
}

func (s *Sim) sysProcAttr() *syscall.SysProcAttr {
	if s.cfg.Detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	// Pdeathsig: a simulator a test started dies with the test process,
	// also when that process is killed (a timeout, ^C twice), so no ibsim
	// or opensm outlives it holding the sockets, the files and whatever
	// descriptors it inherited (a lock a wrapper such as flock(1) holds
	// for the run). The detached testbed above outlives fabctl on purpose.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func (s *Sim) startIBSim() error {
	fifo := s.path(ConsoleFIFO)
	_ = os.Remove(fifo)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return fmt.Errorf("ibsim console fifo: %w", err)
	}
	// Read-write: opening does not block, and the FIFO never reaches EOF
	// while ibsim holds it.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	s.fifo = f
	out, err := safefile.Create(s.path(ConsoleOut), 0o644, safefile.Testbed)
	if err != nil {
		return err
	}
	defer out.Close()
	errf, err := safefile.Create(s.path(IBSimErr), 0o644, safefile.Testbed)
	if err != nil {
		return err
	}
	defer errf.Close()
	// -s starts the network at once; the console stays on (stdin).
	cmd := exec.Command(lookTool("ibsim"), "-s", s.path(NetFileName))
	cmd.Dir = s.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, out, errf
	cmd.Env = s.env(false)
	cmd.SysProcAttr = s.sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start ibsim: %w", err)
	}
	s.ibsim, s.IBSimPID = cmd, cmd.Process.Pid
	s.logf("ibsim pid %d, socket %s, net %s", s.IBSimPID, s.Socket, s.path(NetFileName))
	// Ready once the console prompt is printed (after parsing and linking).
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := safefile.ReadFile(s.path(ConsoleOut), safefile.Testbed)
		if bytes.Contains(b, []byte("sim> ")) {
			return nil
		}
		if !alive(s.IBSimPID) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("ibsim did not come up: %s", s.tail(IBSimErr, ConsoleOut))
}

// env is the environment of ibsim (preload false) and of its clients.
func (s *Sim) env(preload bool) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "LD_PRELOAD", "IBSIM_SOCKNAME", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT", "SIM_HOST", "SIM_SET_ISSM", "OSM_CACHE_DIR", "OSM_TMP_DIR":
			continue
		}
		env = append(env, e)
	}
	env = append(env, "IBSIM_SOCKNAME="+s.Socket)
	if preload {
		env = append(env, "LD_PRELOAD="+s.Preload, "SIM_HOST="+s.SMNode,
			"OSM_CACHE_DIR="+s.path(OpenSMDir, "cache"), "OSM_TMP_DIR="+s.path(OpenSMDir, "cache"))
	}
	return env
}

// owned are the opensm.conf options the Sim sets itself.
var owned = []string{"log_file", "force_log_flush", "dump_files_dir", "partition_config_file", "qos_policy_file", "daemon", "log_max_size"}

// composeConf returns the rendered opensm.conf without the Sim's options,
// followed by the Sim's lines.
func (s *Sim) composeConf(rendered []byte) []byte {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(rendered), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && contains(owned, f[0]) {
			continue
		}
		b.WriteString(l)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n# testbed/ibsim: where this simulated subnet manager keeps its files\n")
	fmt.Fprintf(&b, "log_file %s\nforce_log_flush TRUE\ndump_files_dir %s\n", s.path(OpenSMLog), s.path(OpenSMDir, "cache"))
	fmt.Fprintf(&b, "partition_config_file %s\nqos_policy_file %s\n", s.path(OpenSMDir, "partitions.conf"), s.path(OpenSMDir, "qos-policy.conf"))
	return []byte(b.String())
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Sim) writeFiles(files SMFiles) error {
	w := func(name string, data []byte) error {
		return safefile.WriteFile(s.path(OpenSMDir, name), data, 0o644, safefile.Testbed)
	}
	if err := w("opensm.conf", s.composeConf(files.OpenSMConf)); err != nil {
		return err
	}
	if files.Partitions != nil {
		if err := w("partitions.conf", files.Partitions); err != nil {
			return err
		}
	}
	if files.QoSPolicy != nil {
		if err := w("qos-policy.conf", files.QoSPolicy); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) startOpenSM() error {
	out, err := safefile.Create(s.path(OpenSMOut), 0o644, safefile.Testbed)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(lookTool("opensm"), "-F", s.path(OpenSMDir, "opensm.conf"))
	cmd.Dir = s.path(ClientsDir)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = s.env(true)
	cmd.SysProcAttr = s.sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start opensm: %w", err)
	}
	s.opensm, s.OpenSMPID = cmd, cmd.Process.Pid
	ch := make(chan error, 1)
	s.waitErr[cmd.Process.Pid] = ch
	go func() { ch <- cmd.Wait() }()
	s.logf("opensm pid %d on %s, config %s", s.OpenSMPID, s.SMNode, s.path(OpenSMDir))
	return nil
}

var reSubnetUp = regexp.MustCompile(`(?m)-> SUBNET UP$`)

// SubnetUps counts the SUBNET UP lines in opensm's log: one per
// completed heavy sweep.
func (s *Sim) SubnetUps() int {
	b, _ := safefile.ReadFile(s.path(OpenSMLog), safefile.Testbed)
	return len(reSubnetUp.FindAllIndex(b, -1))
}

// initErrors counts opensm's "Errors during initialization" lines: one
// per heavy sweep that did not bring the subnet up (a link changing state
// mid-sweep, as a miswire or a flap makes, is one); opensm sweeps again.
func (s *Sim) initErrors() int {
	b, _ := safefile.ReadFile(s.path(OpenSMLog), safefile.Testbed)
	return bytes.Count(b, []byte("Errors during initialization"))
}

// WaitSubnetUp waits until opensm's log holds more than after SUBNET UP
// lines. Two failed sweeps in a row during the wait end it early: one is
// a sweep that met a changing subnet, and the next sweep usually brings
// it up.
func (s *Sim) WaitSubnetUp(ctx context.Context, after int) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.UpTimeout)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	errsBefore := s.initErrors()
	for {
		if s.SubnetUps() > after {
			return nil
		}
		if s.initErrors()-errsBefore >= 2 && s.SubnetUps() <= after {
			return fmt.Errorf("opensm: errors during initialization in two sweeps: %s", s.tail(OpenSMLog, OpenSMOut))
		}
		if s.OpenSMPID != 0 && !alive(s.OpenSMPID) {
			return fmt.Errorf("opensm exited: %s", s.tail(OpenSMOut, OpenSMLog))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("opensm: no SUBNET UP within %s: %s", s.cfg.UpTimeout, s.tail(OpenSMLog, OpenSMOut))
		case <-t.C:
		}
	}
}

// Reload writes new opensm files and sends opensm SIGHUP, as fabctl's
// opensm driver does on a real subnet manager, then waits for the heavy
// sweep that applies them.
func (s *Sim) Reload(ctx context.Context, files SMFiles) error {
	if err := s.writeFiles(files); err != nil {
		return err
	}
	n := s.SubnetUps()
	if err := syscall.Kill(s.OpenSMPID, syscall.SIGHUP); err != nil {
		return fmt.Errorf("SIGHUP opensm %d: %w", s.OpenSMPID, err)
	}
	return s.WaitSubnetUp(ctx, n)
}

// Console runs an ibsim console command and returns what ibsim printed
// for it. A marker comment after the command tells where its output ends.
func (s *Sim) Console(ctx context.Context, command string) (string, error) {
	if strings.ContainsAny(command, "\n\r") || len(command) > 120 {
		return "", fmt.Errorf("ibsim console: one line of at most 120 bytes (ibsim reads 128)")
	}
	s.conMu.Lock()
	defer s.conMu.Unlock()
	s.conSeq++
	marker := fmt.Sprintf("# fabctl-%d-%d", os.Getpid(), s.conSeq)
	start := fileSize(s.path(ConsoleOut))
	w, err := os.OpenFile(s.path(ConsoleFIFO), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("ibsim console: %w", err)
	}
	_, err = w.WriteString(command + "\n" + marker + "\n")
	w.Close()
	if err != nil {
		return "", fmt.Errorf("ibsim console: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		b := readFrom(s.path(ConsoleOut), start)
		if i := strings.Index(b, marker); i >= 0 {
			out := strings.TrimSpace(strings.ReplaceAll(b[:i], "sim> ", ""))
			return out, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("ibsim console: no answer to %q", command)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// consoleErr turns ibsim's console complaints ("# nodeid ... not found",
// "# can't ...", "# bad ...") into errors.
func consoleErr(command, out string) error {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || strings.Contains(l, "unknown") {
			return fmt.Errorf("ibsim %s: %s", command, strings.TrimSpace(strings.TrimPrefix(l, "#")))
		}
	}
	return nil
}

// LinkDown takes the cable at a port down (ibsim console Unlink): both
// ends go to Down/Polling and ibsim sends the switch's trap 128 to the SM.
func (s *Sim) LinkDown(ctx context.Context, p ibfabric.PortRef) error {
	cmd := fmt.Sprintf("Unlink %q[%d]", p.Node, p.Port)
	out, err := s.Console(ctx, cmd)
	if err != nil {
		return err
	}
	return consoleErr(cmd, out)
}

// LinkUp restores a cable LinkDown took down (ibsim console ReLink).
func (s *Sim) LinkUp(ctx context.Context, p ibfabric.PortRef) error {
	cmd := fmt.Sprintf("ReLink %q[%d]", p.Node, p.Port)
	out, err := s.Console(ctx, cmd)
	if err != nil {
		return err
	}
	return consoleErr(cmd, out)
}

// SetWidth makes a running link retrain at width w: ibportstate sets the
// port's LinkWidthEnabled (an SMP Set(PortInfo)), and ibsim moves both
// ends to that width at once (sim_mad.c do_portinfo). opensm leaves the
// enabled width alone on later sweeps, so it sticks.
func (s *Sim) SetWidth(ctx context.Context, p ibfabric.PortRef, guid uint64, w ibfabric.Width) error {
	m, err := widthMask(w)
	if err != nil {
		return err
	}
	_, err = s.Run(ctx, "ibportstate", "-G", fmt.Sprintf("0x%x", guid), strconv.Itoa(p.Port), "width", strconv.Itoa(m))
	if err != nil {
		return fmt.Errorf("set %s width %s: %w", p, w, err)
	}
	return nil
}

// MADProgram is the program name under which Run and the diag wrappers
// run fabctl's own MAD client (`fabctl ibmad`, drivers/sm/ibfabric/ibmad).
const MADProgram = "fabctl"

// helperExe is the fabctl that serves `fabctl ibmad` for the Sim: this
// process's executable (fabctl itself, or a test binary whose TestMain
// calls ibmad.RunIfHelper).
func helperExe() string {
	exe, err := os.Executable()
	if err != nil {
		return "fabctl"
	}
	return exe
}

// Run runs a libibumad program (infiniband-diags, ibportstate, or
// MADProgram: fabctl's own MAD client) against the simulated fabric,
// attached at the SM adapter, and returns its standard output.
func (s *Sim) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return s.RunInput(ctx, nil, name, args...)
}

// RunInput is Run with standard input.
func (s *Sim) RunInput(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	prog := lookTool(name)
	env := s.env(true)
	if name == MADProgram {
		prog = helperExe()
		env = append(env, ibmad.Helper+"=1")
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = s.path(ClientsDir)
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// Runner is the Sim as an ibfabric.Runner (and ibfabric.InputRunner).
func (s *Sim) Runner() ibfabric.Runner { return simRunner{s} }

type simRunner struct{ s *Sim }

func (r simRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return r.s.Run(ctx, name, args...)
}

func (r simRunner) RunInput(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	return r.s.RunInput(ctx, stdin, name, args...)
}

// Stop ends opensm and ibsim and removes the Sim's directory when the
// Sim made it (else it keeps the logs and removes state.json).
func (s *Sim) Stop() error {
	var errs []error
	if s.OpenSMPID != 0 {
		errs = append(errs, s.kill(s.OpenSMPID, "opensm"))
	}
	if s.IBSimPID != 0 {
		if s.ibsim != nil {
			_ = s.ibsim.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = s.ibsim.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = s.ibsim.Process.Kill()
				<-done
			}
		} else {
			errs = append(errs, s.kill(s.IBSimPID, "ibsim"))
		}
	}
	if s.fifo != nil {
		s.fifo.Close()
	}
	s.OpenSMPID, s.IBSimPID = 0, 0
	if s.Dir != "" {
		if s.TempDir {
			errs = append(errs, os.RemoveAll(s.Dir))
		} else {
			_ = os.Remove(s.path(StateFile))
			_ = os.RemoveAll(s.path(ClientsDir))
			_ = os.Remove(s.path(ConsoleFIFO))
		}
	}
	return errors.Join(errs...)
}

// kill stops a process: SIGTERM, then SIGKILL after 5 s.
func (s *Sim) kill(pid int, name string) error {
	if ch, ok := s.waitErr[pid]; ok {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-ch
		}
		return nil
	}
	return killPID(pid, name)
}

// killPID stops a process that is not this process's child, after
// checking it still runs the program the state names (pids get reused).
func killPID(pid int, name string) error {
	if !alive(pid) || !isProgram(pid, name) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 250 && alive(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return nil
}

func isProgram(pid int, name string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(argv0) == name
}

// alive reports whether pid is a live process (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// Down stops the Sim recorded in dir's state.json: from another process
// than the one that started it (fabctl testbed down).
func Down(dir string) error {
	b, err := safefile.ReadFile(filepath.Join(dir, StateFile), safefile.Testbed)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	st.Dir = dir
	s := &Sim{State: st, waitErr: map[int]chan error{}}
	return s.Stop()
}

// Attach returns the Sim recorded in dir, to run commands against a
// fabric another process started.
func Attach(dir string) (*Sim, error) {
	b, err := safefile.ReadFile(filepath.Join(dir, StateFile), safefile.Testbed)
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	if !alive(st.IBSimPID) {
		return nil, fmt.Errorf("%s: ibsim (pid %d) is not running", dir, st.IBSimPID)
	}
	return &Sim{State: st, cfg: Config{UpTimeout: 60 * time.Second}, waitErr: map[int]chan error{}}, nil
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func readFrom(p string, off int64) string {
	f, err := safefile.Open(p, safefile.Testbed)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// tail returns the last lines of the Sim's files, for error messages.
func (s *Sim) tail(names ...string) string {
	var parts []string
	for _, n := range names {
		b, err := safefile.ReadFile(s.path(n), safefile.Testbed)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		var keep []string
		for _, l := range lines {
			if strings.Contains(l, "parse_port_connection_data") {
				continue // ibsim's noise about lines without ibnetdiscover comments
			}
			keep = append(keep, l)
		}
		if len(keep) > 8 {
			keep = keep[len(keep)-8:]
		}
		parts = append(parts, n+": "+strings.Join(keep, " | "))
	}
	return strings.Join(parts, "; ")
}

// DiagsDirName is the directory, under a Sim's, of the wrappers
// WriteDiagWrappers writes.
const DiagsDirName = "bin"

// diagWrapped are the programs WriteDiagWrappers wraps: the
// infiniband-diags fabctl's read-back runs, and ibportstate.
var diagWrapped = []string{"ibnetdiscover", "smpquery", "saquery", "ibportstate", MADProgram}

// WriteDiagWrappers writes, in <dir>/bin, one sh script per diagnostic
// program that runs the real program on this simulated subnet: it sets
// the environment Run sets (LD_PRELOAD=libumad2sim.so as Debian's
// ibsim-run does, IBSIM_SOCKNAME, SIM_HOST) and works in the clients
// directory, where umad2sim keeps each process's fake sysfs. A subnet
// manager host whose spec sets infiniband diags_dir to that directory
// has its fabric read back by the opensm driver on the simulation, over
// "local" or SSH alike. It returns the directory.
func (s *Sim) WriteDiagWrappers() (string, error) {
	dir := s.path(DiagsDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// The clients directory is written by whoever runs a wrapper (the
	// login of an SSH test may not be root).
	if err := os.Chmod(s.path(ClientsDir), 0o1777); err != nil {
		return "", err
	}
	for _, t := range diagWrapped {
		prog, extra := lookTool(t), ""
		if t == MADProgram {
			prog, extra = helperExe(), ibmad.Helper+"=1\nexport "+ibmad.Helper+"\n"
		}
		body := fmt.Sprintf("#!/bin/sh\n# Written by fabctl (testbed/ibsim): %s on the simulated subnet %s.\ncd %s || exit 1\nLD_PRELOAD=%s IBSIM_SOCKNAME=%s SIM_HOST=%s\nexport LD_PRELOAD IBSIM_SOCKNAME SIM_HOST\n%sexec %s \"$@\"\n",
			t, s.Dir, shellQuote(s.path(ClientsDir)), shellQuote(s.Preload), shellQuote(s.Socket), shellQuote(s.SMNode), extra, shellQuote(prog))
		// The directory is world-writable (sticky): never through a link
		// another user planted there.
		if err := safefile.WriteFile(filepath.Join(dir, t), []byte(body), 0o755, safefile.Testbed); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// BatchRunner returns the Sim as an ibfabric.BatchRunner: single calls as
// Run makes them, Discover's smpquery calls as one batch (ibfabric.
// ShellBatch: one shell running them with xargs -P) through the wrappers
// of WriteDiagWrappers, which it writes when they are missing.
func (s *Sim) BatchRunner() (ibfabric.Runner, error) {
	dir := s.path(DiagsDirName)
	if _, err := os.Stat(filepath.Join(dir, "smpquery")); err != nil {
		if dir, err = s.WriteDiagWrappers(); err != nil {
			return nil, err
		}
	}
	return simBatch{s: s, dir: dir}, nil
}

type simBatch struct {
	s   *Sim
	dir string
}

func (b simBatch) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return b.s.Run(ctx, name, args...)
}

func (b simBatch) RunBatch(ctx context.Context, name string, argsList [][]string, parallel int) ([]ibfabric.BatchResult, error) {
	return ibfabric.ShellBatch(ctx, shellExec, "", filepath.Join(b.dir, name), argsList, parallel)
}

// shellExec runs a command line with /bin/sh on this machine.
func shellExec(ctx context.Context, cmdline string, stdin []byte) ([]byte, []byte, int, error) {
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmdline)
	var so, se bytes.Buffer
	c.Stdout, c.Stderr, c.Stdin = &so, &se, bytes.NewReader(stdin)
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return so.Bytes(), se.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return so.Bytes(), se.Bytes(), -1, err
	}
	return so.Bytes(), se.Bytes(), 0, nil
}
