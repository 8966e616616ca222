package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/sshdtest"
)

// BenchmarkSSHApply: `fabctl apply --parallelism 64` (the real binary as
// controller) to 256 hosts over SSH, each a network namespace with a veth
// behind one loopback OpenSSH server (connect = "ssh+netns:NAME"), against
// the same apply to one host. Every iteration flips the MTU (4200 <-> 9000)
// so each host has one change: the plan's read, then one agent run that
// checks the plan's fingerprint, applies and reads back (two agent runs
// over one pooled SSH connection per host; before that it was five: a
// version check, the plan read, a staleness re-read, the transaction and
// the read-back). "warm" has the agent already on the host (the steady state);
// "cold" removes it first, so the first connection to every host copies
// the 25 MB binary over SFTP (all 256 hosts share this machine's disk).
// The controller logs in as a test user with a clean home (no shell
// start-up files of the developer's root account in the timing) and runs
// the agent with sudo -n through the NOPASSWD rule docs/agent.md shows.
//
//	make bench-ssh    (or: go test -run '^$' -bench SSHApply -benchtime 3x ./drivers/host/)
//
// Metrics: s/apply (wall of one fabctl apply), ms/host (wall / hosts),
// ssh-logins/host and agent-runs/host (SSH connections and command
// sessions per host, from sshd's verbose log: every command session is
// one agent start, version checks included, or a uname before a copy),
// ctl-cpu-ms/host (CPU time of the controller process per host: its share
// when the hosts are real machines), host-cpu-ms/host (CPU time of sshd
// and everything it ran, per host: what each real host would spend; from
// a cpuacct cgroup, when the machine has one), p50-ms and max-ms (per-host
// transaction time from the journal), and a summary line with the
// speed-up over applying the hosts one at a time. Controller and all
// "hosts" (sshd, sudo, agents) share this machine's CPUs, so the wall
// figures are an upper bound for a real fabric.
func BenchmarkSSHApply(b *testing.B) {
	sshdtest.Require(b)
	const hosts, par = 256, 64
	fx := &sshFixture{srv: sshdtest.Start(b, sshdtest.Options{MaxStartups: 2 * par, Verbose: true}), bin: sshdtest.Fabctl(b)}
	const user = "fabctl-bench"
	u := sshdtest.AddUser(b, user, user+" ALL=(root) NOPASSWD: %h/.cache/fabctl/fabctl-*")
	key := sshdtest.NewKey(b)
	fx.srv.Authorize(b, user, key)
	dir := b.TempDir()
	fx.keyFile = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(fx.keyFile, key.PEM, 0o600); err != nil {
		b.Fatal(err)
	}
	fx.remote, fx.save = filepath.Join(u.Home, ".cache/fabctl"), filepath.Join(dir, "saved")
	namespaces(b, "fabctl-bssh-", hosts)

	walls := map[string]time.Duration{}
	// The MTU every host has after the last apply: each apply flips it
	// (4200 <-> 9000), across sub-benchmarks and their repeated runs.
	mtu := 4200
	for _, bc := range []struct {
		name  string
		hosts int
		cold  bool
	}{{"hosts=1/warm", 1, false}, {"hosts=256/warm", hosts, false}, {"hosts=256/cold", hosts, true}} {
		b.Run(bc.name, func(b *testing.B) {
			specDir := filepath.Join(dir, bc.name)
			if err := os.MkdirAll(specDir, 0o755); err != nil {
				b.Fatal(err)
			}
			var ctlCPU time.Duration  // the controller's own CPU time (user + system)
			var hostCPU time.Duration // sshd and all it ran: the hosts' side
			var logins, commands int  // SSH logins and command sessions (agent runs)
			hostOK := true
			applyOnce := func() (time.Duration, []int64) {
				mtu = 13200 - mtu // 4200 <-> 9000
				writeBenchSpec(b, fx, specDir, user, "fabctl-bssh-", bc.hosts, mtu)
				if bc.cold {
					os.RemoveAll(fx.remote)
				}
				journal := filepath.Join(specDir, "journal.jsonl")
				os.Remove(journal)
				cmd := exec.Command(fx.bin, "apply", "--auto-approve", "--json", "--parallelism", fmt.Sprint(par), "--journal", journal, specDir)
				cmd.Env = append(os.Environ(), "FABCTL_AGENT_DIR=~/.cache/fabctl", "FABCTL_AGENT_SAVE_DIR="+fx.save)
				h0, ok0 := fx.srv.CPU()
				l0, c0 := fx.srv.Sessions()
				start := time.Now()
				out, err := cmd.Output()
				wall := time.Since(start)
				if cmd.ProcessState != nil {
					ctlCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
				h1, ok1 := fx.srv.CPU()
				hostCPU += h1 - h0
				l1, c1 := fx.srv.Sessions()
				logins, commands = logins+l1-l0, commands+c1-c0
				hostOK = hostOK && ok0 && ok1
				var doc struct {
					Status string `json:"status"`
				}
				if jerr := json.Unmarshal(out, &doc); err != nil || jerr != nil || doc.Status != "applied" {
					b.Fatalf("fabctl apply: %v %v\n%.2000s", err, jerr, out)
				}
				return wall, journalDurations(b, journal)
			}
			if !bc.cold {
				applyOnce() // the agent in place and the addresses set: the steady state
			}
			b.ResetTimer()
			ctlCPU, hostCPU, logins, commands = 0, 0, 0, 0
			var total time.Duration
			var durs []int64
			for i := 0; i < b.N; i++ {
				w, d := applyOnce()
				total += w
				durs = append(durs, d...)
			}
			b.StopTimer()
			per := total / time.Duration(b.N)
			walls[bc.name] = per
			sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
			b.ReportMetric(per.Seconds(), "s/apply")
			b.ReportMetric(float64(per.Milliseconds())/float64(bc.hosts), "ms/host")
			b.ReportMetric(float64(ctlCPU.Milliseconds())/float64(b.N*bc.hosts), "ctl-cpu-ms/host")
			if hostOK {
				b.ReportMetric(float64(hostCPU.Milliseconds())/float64(b.N*bc.hosts), "host-cpu-ms/host")
			}
			b.ReportMetric(float64(logins)/float64(b.N*bc.hosts), "ssh-logins/host")
			b.ReportMetric(float64(commands)/float64(b.N*bc.hosts), "agent-runs/host")
			if len(durs) > 0 {
				b.ReportMetric(float64(durs[len(durs)/2]), "p50-ms")
				b.ReportMetric(float64(durs[len(durs)-1]), "max-ms")
			}
			b.ReportMetric(0, "ns/op") // the wall figures above are the result
		})
	}
	if one, all := walls["hosts=1/warm"], walls["hosts=256/warm"]; one > 0 && all > 0 {
		fmt.Printf("ssh apply: 1 host %.2fs, %d hosts %.2fs at parallelism %d (%.1f ms/host; %.1fx faster than %d one-host applies in a row); cold (agent copied) %.2fs\n",
			one.Seconds(), hosts, all.Seconds(), par, float64(all.Milliseconds())/hosts, float64(hosts)*one.Seconds()/all.Seconds(), hosts, walls["hosts=256/cold"].Seconds())
	}
}

// namespaces creates n namespaces prefix<i> with a veth pair v0a/v0b in
// each, in two ip -batch runs, removed at cleanup.
func namespaces(b testing.TB, prefix string, n int) {
	var add, del strings.Builder
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("%s%d", prefix, i)
		_ = exec.Command("ip", "netns", "del", ns).Run()
		fmt.Fprintf(&add, "netns add %s\nlink add v0a netns %s type veth peer name v0b netns %s\n", ns, ns, ns)
		fmt.Fprintf(&del, "netns del %s\n", ns)
	}
	batch := func(script string) error {
		cmd := exec.Command("ip", "-batch", "-")
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip -batch: %v\n%s", err, out)
		}
		return nil
	}
	b.Cleanup(func() { _ = batch(del.String()) })
	if err := batch(add.String()); err != nil {
		b.Fatal(err)
	}
}

func writeBenchSpec(b testing.TB, fx *sshFixture, dir, user, nsPrefix string, hosts, mtu int) {
	var s strings.Builder
	fmt.Fprintf(&s, `
fabric "bench" {
  transport = "rocev2"
  mtu       = %d
}
credentials "ssh" {
  username    = %q
  known_hosts = %q
  private_key = file(%q)
}
`, mtu, user, fx.srv.KnownHosts, fx.keyFile)
	for i := 0; i < hosts; i++ {
		fmt.Fprintf(&s, `
host "h%d" {
  address     = %q
  connect     = "ssh+netns:%s%d"
  credentials = "ssh"
  sudo        = true
  nic "v0a" {
    device    = "rxe0"
    model     = "rxe"
    addresses = ["198.18.%d.%d/31"]
  }
}
`, i, fx.srv.Addr, nsPrefix, i, i/128, 2*(i%128))
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.fab.hcl"), []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// journalDurations returns the per-device transaction times of a run.
func journalDurations(b testing.TB, path string) []int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Event      string `json:"event"`
			DurationMS *int64 `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Event == "device_verified" && e.DurationMS != nil {
			out = append(out, *e.DurationMS)
		}
	}
	return out
}

// BenchmarkSSHTrafficStep: one traffic step of fabctl validate on a host
// reached over SSH (a counter read of a namespace's veth through the
// agent, on the pooled connection with the agent in place): the
// controller's overhead per step. A pair over SSH takes six steps (two
// counter reads per side, the server, the client), so 6 x ms/step is
// what running a pair through the agents adds to the test itself.
//
//	go test -run '^$' -bench SSHTrafficStep ./drivers/host/
func BenchmarkSSHTrafficStep(b *testing.B) {
	fx := newSSHFixture(b)
	newNS(b, "fabctl-bssh-tr", 1)
	s, f := fx.spec(b, "root", fx.keyCreds(), map[string]string{"h1": "fabctl-bssh-tr"})
	d, target := fx.driver(), fx.target(s, f, 0)
	body := []byte(`{"role":"counters","local":{"Netdev":"v0a","Port":1,"GIDIndex":-1}}`)
	if _, err := d.Traffic(context.Background(), target, body, nil); err != nil { // copies the agent
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Traffic(context.Background(), target, body, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
}
