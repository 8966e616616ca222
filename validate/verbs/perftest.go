package verbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fabctl/fabctl/internal/safefile"
)

// The perftest backend runs linux-rdma/perftest's ib_{write,send,read}_
// {bw,lat} with --out_json, for cross-checking fabctl's own engine on the
// same devices with the reference tool. It needs no cgo: it only builds a
// command line and reads the report.

// PerftestBinary is the perftest program for a test: ib_write_bw, ...
func PerftestBinary(t Test) string { return "ib_" + string(t.Op) + "_" + string(t.Mode) }

// PerftestAvailable reports whether the test's perftest binary is on PATH.
func PerftestAvailable(t Test) error {
	if _, err := exec.LookPath(PerftestBinary(t)); err != nil {
		return fmt.Errorf("%w: %s is not installed (Debian: apt-get install perftest)", ErrUnavailable, PerftestBinary(t))
	}
	return nil
}

// PerftestArgs builds the perftest command line for one side; server is
// the server address for the client ("" for the server side). Both sides
// must get the same test options, as perftest requires.
func PerftestArgs(t Test, l Local, port int, server string, jsonFile string) ([]string, error) {
	if t.Mode == ModeLatency && t.Duration > 0 {
		return nil, errors.New("perftest latency tests report percentiles only with an iteration count (-n), not a duration")
	}
	if t.Duration > 0 && t.Duration%time.Second != 0 {
		return nil, fmt.Errorf("perftest runs for whole seconds (-D); duration %s is not", t.Duration)
	}
	a := []string{"-d", l.Device, "-i", strconv.Itoa(l.Port), "-s", strconv.Itoa(t.Size), "-p", strconv.Itoa(port), "-F"}
	if t.Conn == ConnCM {
		a = append(a, "-R")
		if t.TClass >= 0 {
			a = append(a, "-T", strconv.Itoa(t.TClass))
		}
		if server != "" && l.Addr.IsValid() {
			a = append(a, "--source_ip", l.Addr.Unmap().String())
		}
	} else {
		if l.GIDIndex >= 0 {
			a = append(a, "-x", strconv.Itoa(l.GIDIndex))
		}
		if t.TClass >= 0 {
			a = append(a, "--tclass="+strconv.Itoa(t.TClass))
		}
	}
	if t.Duration > 0 {
		a = append(a, "-D", strconv.Itoa(int(t.Duration/time.Second)))
	} else {
		a = append(a, "-n", strconv.Itoa(t.Iterations))
	}
	if t.Mode == ModeBandwidth {
		// No --report_gbits: perftest prints two decimals, and 0.12 Gb/s
		// hides 4% either way; MiB/s keeps four digits there.
		a = append(a, "-q", strconv.Itoa(t.QPs), "-t", strconv.Itoa(t.TxDepth), "-Q", strconv.Itoa(t.CQMod))
		if t.Op == OpSend {
			a = append(a, "-r", strconv.Itoa(t.RxDepth))
		}
		if t.PostList > 1 {
			a = append(a, "-l", strconv.Itoa(t.PostList))
		}
	}
	if t.Inline > 0 && t.Op != OpRead {
		a = append(a, "-I", strconv.Itoa(t.Inline))
	}
	if t.MTU != 0 {
		a = append(a, "-m", strconv.Itoa(t.MTU))
	}
	if t.SL != 0 {
		a = append(a, "-S", strconv.Itoa(t.SL))
	}
	if t.Timeout != 0 {
		a = append(a, "-u", strconv.Itoa(t.Timeout))
	}
	a = append(a, "--out_json", "--out_json_file="+jsonFile)
	if server != "" {
		a = append(a, server)
	}
	return a, nil
}

// perftestPair matches `key: value` in perftest's --out_json report:
// perftest 4.5 writes unquoted keys (`BW_average: 0.27,`), later versions
// real JSON; both parse.
var perftestPair = regexp.MustCompile(`"?([A-Za-z_][A-Za-z0-9_.]*)"?\s*:\s*"?(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"?\s*[,}\n]`)

// ParsePerftestJSON reads the numbers of a perftest --out_json report.
func ParsePerftestJSON(b []byte) (map[string]float64, error) {
	out := map[string]float64{}
	for _, m := range perftestPair.FindAllSubmatch(append(bytes.TrimSpace(b), '\n'), -1) {
		v, err := strconv.ParseFloat(string(m[2]), 64)
		if err != nil {
			continue
		}
		out[string(m[1])] = v
	}
	if len(out) == 0 {
		return nil, errors.New("no results in the perftest report")
	}
	return out, nil
}

// PerftestResult turns a report into a Result.
func PerftestResult(t Test, kv map[string]float64) (*Result, error) {
	r := &Result{Backend: "perftest", Test: t}
	get := func(k string) (float64, error) {
		v, ok := kv[k]
		if !ok {
			return 0, fmt.Errorf("the perftest report has no %s", k)
		}
		return v, nil
	}
	if t.Mode == ModeLatency {
		us := func(k string) (time.Duration, error) {
			v, err := get(k)
			return time.Duration(v * 1e3), err
		}
		l := &LatencyStats{}
		var err error
		for _, f := range []struct {
			k string
			d *time.Duration
		}{{"t_min", &l.Min}, {"t_max", &l.Max}, {"t_typical", &l.Median}, {"t_avg", &l.Avg}, {"t_stdev", &l.Stdev},
			{"percentile_99", &l.P99}, {"percentile_99.9", &l.P999}} {
			if *f.d, err = us(f.k); err != nil {
				return nil, err
			}
		}
		n, _ := kv["n_iterations"]
		l.Samples = int(n)
		r.Messages = uint64(n)
		r.Latency = l
		return r, nil
	}
	bw, err := get("BW_average")
	if err != nil {
		return nil, err
	}
	r.Gbps = bw * (1 << 20) * 8 / 1e9 // MiB/s (perftest's MB/sec) to 10^9 bit/s
	r.MsgRate = kv["MsgRate"] * 1e6
	r.Messages = uint64(kv["n_iterations"])
	r.Bytes = r.Messages * uint64(t.Size)
	return r, nil
}

// RunPerftest runs one side of a test with perftest and reads its report.
// Its output goes to log. l.Device must be set (and l.GIDIndex for RoCE
// without rdma_cm, or perftest picks its own).
func RunPerftest(ctx context.Context, t Test, l Local, port int, server string, log io.Writer) (*Result, error) {
	t.Fill()
	if err := t.Check(); err != nil {
		return nil, err
	}
	if err := PerftestAvailable(t); err != nil {
		return nil, err
	}
	l.Fill()
	dir, err := os.MkdirTemp("", "fabctl-perftest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	jf := filepath.Join(dir, "report.json")
	args, err := PerftestArgs(t, l, port, server, jf)
	if err != nil {
		return nil, err
	}
	// perftest's client gives up at once when the server is not
	// listening yet (it has no readiness signal): retry that for a while.
	deadline := time.Now().Add(30 * time.Second)
	var out bytes.Buffer
	for {
		cmd := exec.CommandContext(ctx, PerftestBinary(t), args...)
		out.Reset()
		w := io.Writer(&out)
		if log != nil {
			w = io.MultiWriter(&out, log)
			fmt.Fprintf(log, "$ %s %s\n", PerftestBinary(t), strings.Join(args, " "))
		}
		cmd.Stdout, cmd.Stderr = w, w
		cmd.Dir = dir
		err := cmd.Run()
		if err == nil {
			break
		}
		if server != "" && strings.Contains(out.String(), "Couldn't connect to") && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(time.Second)
			continue
		}
		return nil, fmt.Errorf("%s: %v: %s", PerftestBinary(t), err, lastLines(out.String(), 4))
	}
	b, err := safefile.ReadFile(jf, safefile.Report)
	if err != nil {
		return nil, fmt.Errorf("%s wrote no --out_json report: %v: %s", PerftestBinary(t), err, lastLines(out.String(), 4))
	}
	kv, err := ParsePerftestJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", PerftestBinary(t), err)
	}
	r, err := PerftestResult(t, kv)
	if err != nil {
		return nil, err
	}
	r.Role = "client"
	if server == "" {
		r.Role = "server"
	}
	return r, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
