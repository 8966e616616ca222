package host

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/sshdtest"
)

// BenchmarkAnsibleVsFabctl: the same change (read a NIC's MTU, set it,
// verify it) on the same N network-namespace hosts behind one loopback
// OpenSSH server, by `fabctl apply` and by Debian's ansible-core
// (ansible-playbook), in alternating rounds within one run. Every round
// flips the MTU (4200 <-> 9000), so each tool finds one change per host.
//
//	make bench-ansible    (root; N=$BENCH_HOSTS, default 64; rounds = -benchtime)
//
// The tools:
//   - fabctl: `fabctl apply --auto-approve --parallelism 64` (plan, then
//     one agent run per host for check + apply + read-back; the agent
//     already on the host, the steady state).
//   - ansible-tuned: Ansible's documented speed settings: forks 64,
//     pipelining, ControlPersist (its ssh_args default), no fact
//     gathering, the Python interpreter named (no discovery).
//   - ansible-default: the same playbook with Ansible's defaults (forks 5,
//     no pipelining, facts gathered, interpreter discovery).
//
// Both log in as their own test user (a clean home) with a key, verify the
// host key against known_hosts and become root with sudo -n. Every
// "host" has its own SSH connection: fabctl pools per host, Ansible gets
// a ControlPath per inventory host (ansible_control_path); otherwise its
// ControlMaster would carry all N hosts, which share one address, over
// one connection, which real hosts never do.
//
// The playbook is what an Ansible user writes for this: Ansible has no
// module for a link's MTU in a network namespace, so `command` runs
// iproute2 (ip-link(8)) as fabctl's agent does through netlink.
//
// Printed per tool and round: wall, controller CPU (the controller process
// and everything it started, ssh clients and ControlPersist masters
// included: a cpuacct cgroup), host CPU (sshd and everything it ran, per
// host), and the ratios to fabctl.
func BenchmarkAnsibleVsFabctl(b *testing.B) {
	sshdtest.Require(b)
	playbook, err := exec.LookPath("ansible-playbook")
	if err != nil {
		b.Skip("ansible-playbook missing: make bench-ansible installs Debian's ansible-core")
	}
	hosts := 64
	if v, err := strconv.Atoi(os.Getenv("BENCH_HOSTS")); err == nil && v > 0 {
		hosts = v
	}
	const par = 64
	const nsPrefix = "fabctl-bans-"
	fx := &sshFixture{srv: sshdtest.Start(b, sshdtest.Options{MaxStartups: 4 * par}), bin: sshdtest.Fabctl(b)}
	const fabUser, ansUser = "fabctl-abench", "fabctl-ansible"
	u := sshdtest.AddUser(b, fabUser, fabUser+" ALL=(root) NOPASSWD: %h/.cache/fabctl/fabctl-*")
	// Ansible's become runs /bin/sh -c '... python3' under sudo: it needs a
	// rule for any command.
	sshdtest.AddUser(b, ansUser, ansUser+" ALL=(root) NOPASSWD: ALL")
	key := sshdtest.NewKey(b)
	fx.srv.Authorize(b, fabUser, key)
	fx.srv.Authorize(b, ansUser, key)
	dir := b.TempDir()
	fx.keyFile = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(fx.keyFile, key.PEM, 0o600); err != nil {
		b.Fatal(err)
	}
	fx.remote, fx.save = filepath.Join(u.Home, ".cache/fabctl"), filepath.Join(dir, "saved")
	namespaces(b, nsPrefix, hosts)

	// Ansible's files: inventory (one line per host), playbook, and the
	// two configurations.
	ctlDir, err := os.MkdirTemp("", "fabans-") // short: ControlPath is a socket path
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(ctlDir) })
	host, port, _ := strings.Cut(fx.srv.Addr, ":")
	var inv strings.Builder
	inv.WriteString("[bench]\n")
	for i := 0; i < hosts; i++ {
		fmt.Fprintf(&inv, "h%d ansible_host=%s ansible_port=%s netns=%s%d ansible_control_path=%s/h%d\n", i, host, port, nsPrefix, i, ctlDir, i)
	}
	fmt.Fprintf(&inv, "[bench:vars]\nansible_user=%s\nansible_ssh_private_key_file=%s\nansible_become=true\n", ansUser, fx.keyFile)
	// Host keys checked against the server's known_hosts (as fabctl does).
	fmt.Fprintf(&inv, "ansible_ssh_common_args='-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes'\n", fx.srv.KnownHosts)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	invFile := write("inventory.ini", inv.String())
	const tasks = `  tasks:
    - name: read the MTU
      command: ip -n {{ netns }} -o link show v0a
      register: before
      changed_when: false
    - name: set the MTU
      command: ip -n {{ netns }} link set v0a mtu {{ mtu }}
      when: "(' mtu ' ~ mtu ~ ' ') not in before.stdout"
    - name: verify the MTU
      command: ip -n {{ netns }} -o link show v0a
      register: after
      changed_when: false
      failed_when: "(' mtu ' ~ mtu ~ ' ') not in after.stdout"
`
	tunedBook := write("tuned.yml", "- hosts: bench\n  gather_facts: false\n"+tasks)
	defaultBook := write("default.yml", "- hosts: bench\n"+tasks)
	// Tuned: https://docs.ansible.com/ansible/latest/reference_appendices/config.html
	// (DEFAULT_FORKS, ANSIBLE_PIPELINING, INTERPRETER_PYTHON); ControlPersist
	// is the ssh connection plugin's default ssh_args (-C -o ControlMaster=auto
	// -o ControlPersist=60s), kept.
	tunedCfg := write("tuned.cfg", "[defaults]\nforks = 64\ninterpreter_python = /usr/bin/python3\nhost_key_checking = True\n[ssh_connection]\npipelining = True\n")
	defaultCfg := write("default.cfg", "[defaults]\nhost_key_checking = True\n")

	type tool struct {
		name                  string
		wall, ctlCPU, hostCPU time.Duration
		ok                    bool
	}
	tools := []*tool{{name: "fabctl", ok: true}, {name: "ansible-tuned", ok: true}, {name: "ansible-default", ok: true}}
	ctl := newCPUGroup(b, "fabctl-bench-ctl")
	specDir := filepath.Join(dir, "spec")
	if err := os.MkdirAll(specDir, 0o755); err != nil {
		b.Fatal(err)
	}
	mtu := 4200
	run := func(t *tool) {
		var cmd *exec.Cmd
		switch t.name {
		case "fabctl":
			writeBenchSpec(b, fx, specDir, fabUser, nsPrefix, hosts, mtu)
			cmd = exec.Command(fx.bin, "apply", "--auto-approve", "--json", "--parallelism", fmt.Sprint(par), "--journal", filepath.Join(dir, "journal.jsonl"), specDir)
			cmd.Env = append(os.Environ(), "FABCTL_AGENT_DIR=~/.cache/fabctl", "FABCTL_AGENT_SAVE_DIR="+fx.save)
		case "ansible-tuned":
			cmd = exec.Command(playbook, "-i", invFile, "-e", fmt.Sprintf("mtu=%d", mtu), tunedBook)
			cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+tunedCfg, "ANSIBLE_NOCOLOR=1", "LC_ALL=C.UTF-8")
		default:
			cmd = exec.Command(playbook, "-i", invFile, "-e", fmt.Sprintf("mtu=%d", mtu), defaultBook)
			cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+defaultCfg, "ANSIBLE_NOCOLOR=1", "LC_ALL=C.UTF-8")
		}
		cmd.Dir = dir
		c0, h0 := ctl.usage(), hostCPU(fx)
		start := time.Now()
		out, err := ctl.run(cmd)
		t.wall += time.Since(start)
		t.ctlCPU += ctl.usage() - c0
		t.hostCPU += hostCPU(fx) - h0
		if err != nil {
			b.Fatalf("%s (mtu %d): %v\n%.3000s", t.name, mtu, err, out)
		}
	}
	// Warm-up (not measured): the agent copied and the addresses set; the
	// Ansible user's home and ControlPersist masters in place.
	writeBenchSpec(b, fx, specDir, fabUser, nsPrefix, hosts, mtu)
	for _, t := range tools[:2] {
		run(t)
		t.wall, t.ctlCPU, t.hostCPU = 0, 0, 0
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range tools {
			mtu = 13200 - mtu // 4200 <-> 9000: one change per host
			run(t)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	fab := tools[0]
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bench-ansible: %d hosts, %d round(s), load average %s\n", hosts, b.N, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("%-16s %10s %14s %16s %16s %12s %12s\n", "tool", "wall-s", "ctl-cpu-ms/host", "host-cpu-ms/host", "total-cpu-ms/host", "wall-ratio", "ctl-cpu-ratio")
	for _, t := range tools {
		perHost := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n / float64(hosts) }
		fmt.Printf("%-16s %10.2f %14.1f %16.1f %16.1f %12.2f %12.2f\n", t.name, t.wall.Seconds()/n, perHost(t.ctlCPU), perHost(t.hostCPU),
			perHost(t.ctlCPU+t.hostCPU), float64(t.wall)/float64(fab.wall), float64(t.ctlCPU)/float64(fab.ctlCPU))
		b.ReportMetric(t.wall.Seconds()/n, t.name+"-s")
		b.ReportMetric(perHost(t.ctlCPU), t.name+"-ctl-cpu-ms/host")
		b.ReportMetric(perHost(t.hostCPU), t.name+"-host-cpu-ms/host")
	}
	b.ReportMetric(float64(tools[1].wall)/float64(fab.wall), "tuned/fabctl")
	b.ReportMetric(float64(tools[2].wall)/float64(fab.wall), "default/fabctl")
	b.ReportMetric(0, "ns/op")
}

func hostCPU(fx *sshFixture) time.Duration {
	d, _ := fx.srv.CPU()
	return d
}

// cpuGroup is a cgroup v1 cpuacct group the controller runs in, so its CPU
// includes everything it starts, whether it waits for it or not (Ansible's
// ControlPersist masters outlive ansible-playbook).
type cpuGroup struct {
	dir string
}

func newCPUGroup(b *testing.B, name string) *cpuGroup {
	root := "/sys/fs/cgroup/cpuacct"
	if _, err := os.Stat(filepath.Join(root, "cpuacct.usage")); err != nil {
		b.Skip("no cgroup v1 cpuacct hierarchy to measure the controllers' CPU in")
	}
	g := &cpuGroup{dir: filepath.Join(root, fmt.Sprintf("%s-%d", name, os.Getpid()))}
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// Ansible's ControlPersist masters: end them, then the group.
		if pids, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(pids)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGTERM)
				}
			}
		}
		for i := 0; i < 50 && os.Remove(g.dir) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	return g
}

func (g *cpuGroup) usage() time.Duration {
	b, err := os.ReadFile(filepath.Join(g.dir, "cpuacct.usage"))
	if err != nil {
		return 0
	}
	ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(ns)
}

// run starts cmd inside the group: a shell joins it first, then execs the
// command, so nothing the command starts runs outside.
func (g *cpuGroup) run(cmd *exec.Cmd) ([]byte, error) {
	args := append([]string{"-c", `echo $$ > "$0"/cgroup.procs && exec "$@"`, g.dir}, cmd.Args...)
	args[len(args)-len(cmd.Args)] = cmd.Path
	w := exec.Command("/bin/sh", args...)
	w.Env, w.Dir = cmd.Env, cmd.Dir
	return w.CombinedOutput()
}
