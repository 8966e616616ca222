package ibfabric

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Runner runs one infiniband-diags command and returns its standard
// output. testbed/ibsim's runner runs it locally under
// LD_PRELOAD=libumad2sim.so; a subnet manager host's runner runs it over
// SSH. An error should carry the command's stderr.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, name string, args ...string) ([]byte, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return f(ctx, name, args...)
}

// InputRunner is a Runner that can also give a command standard input:
// the MAD client's requests (Restore, SMP).
type InputRunner interface {
	Runner
	RunInput(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error)
}

// MADProgram is the program a Runner runs as fabctl's own MAD client:
// `fabctl ibmad` (drivers/sm/ibfabric/ibmad), on the subnet manager host
// (the opensm driver's runner resolves it to diags_dir/fabctl, or this
// fabctl when the SM is this machine) or under ibsim (testbed/ibsim).
const MADProgram = "fabctl"

// Options choose what Discover reads beyond the topology.
type Options struct {
	// PortInfo reads every cabled port's PortInfo (state, trained width
	// and speed, operational MTU).
	PortInfo bool
	// PKeys reads the P_Key tables of adapter ports and of the switch
	// ports facing adapters (where opensm programs enforcement).
	PKeys bool
	// QoS reads SL2VL and VL arbitration tables of every cabled port.
	QoS bool
	// Parallel bounds the smpquery processes in flight (default
	// DefaultParallel).
	Parallel int
	// Diags reads with infiniband-diags only (ibnetdiscover, then one
	// smpquery per attribute), not with fabctl's MAD client.
	Diags bool
}

// DefaultParallel is Discover's default bound on smpquery processes in
// flight. An smpquery spends most of its time waiting (on ibsim about
// 0.2 s of wall time and a few ms of CPU each), but ibsim answers every
// client from one select loop and serves at most 10 at once
// (ibsim/ibsim.c: sim_run, IBSIM_MAX_CLIENTS; opensm is one). Measured with make bench-ib on
// a shared 2-core machine (load 4 to 12): a 6-switch, 16-adapter fat
// tree read in 4.7 s with 4 in flight and 6.5 s with 8; 16 switches and
// 64 adapters in 21 s and 27 s; 24 and 128 in 51 s and 69 s. So 4 is the
// default and Options.Parallel changes it.
const DefaultParallel = 4

// All reads everything.
var All = Options{PortInfo: true, PKeys: true, QoS: true}

// Discover reads the fabric. It runs fabctl's MAD client (MADProgram
// ibmad read: one process, every SMP by directed route, many in flight)
// and, when that program is not there or fails, infiniband-diags:
// ibnetdiscover for nodes and cables, then smpquery per port as the
// options ask, ports addressed by LID (a subnet manager must have
// assigned them). Fabric.Via says which read it, Fabric.Note why the MAD
// client was not used. A port that could not be read has Port.Err; the
// rest of the fabric is still read.
func Discover(ctx context.Context, r Runner, o Options) (*Fabric, error) {
	note := ""
	if !o.Diags {
		args := []string{"ibmad", "read"}
		if o.PKeys || o.QoS {
			args = append(args, "--tables")
		}
		out, err := r.Run(ctx, MADProgram, args...)
		if err == nil {
			f, perr := ParseDump(out)
			if perr == nil {
				f.Via = "fabctl ibmad"
				f.trim(o)
				return f, nil
			}
			err = perr
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		note = "fabctl's MAD client did not read the fabric (" + clip(err.Error()) + "): read with infiniband-diags, one process per attribute"
	}
	f, err := discoverDiags(ctx, r, o)
	if f != nil {
		f.Via, f.Note = "infiniband-diags", note
	}
	return f, err
}

// trim drops what the options did not ask for (the MAD client reads
// PortInfo while it discovers, and all tables together).
func (f *Fabric) trim(o Options) {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if !o.PortInfo && p.Err == "" {
				p.Info = nil
			}
			if !o.PKeys {
				p.PKeys = nil
			}
			if !o.QoS {
				p.SL2VL, p.VLArb = nil, nil
			}
		}
	}
}

func discoverDiags(ctx context.Context, r Runner, o Options) (*Fabric, error) {
	out, err := r.Run(ctx, "ibnetdiscover")
	if err != nil {
		return nil, fmt.Errorf("ibnetdiscover: %w", err)
	}
	f, err := ParseTopology(string(out))
	if err != nil {
		return nil, err
	}
	if !o.PortInfo && !o.PKeys && !o.QoS {
		return f, nil
	}
	type job struct {
		node *Node
		port *Port
		what string
		args []string
	}
	var jobs []job
	for _, n := range f.sortedNodes() {
		for _, pn := range sortedKeys(n.Ports) {
			p := n.Ports[pn]
			if pn == 0 || p.Peer == nil {
				continue
			}
			lid := p.LID
			if lid == 0 {
				p.Err = "no LID: is a subnet manager running (ibnetdiscover reports lid 0)?"
				continue
			}
			l, ps := strconv.Itoa(lid), strconv.Itoa(pn)
			if o.PortInfo {
				jobs = append(jobs, job{n, p, "portinfo", []string{"portinfo", l, ps}})
			}
			if o.PKeys {
				facesCA := false
				if peer := f.Nodes[p.Peer.Node]; peer != nil && peer.Type != Switch {
					facesCA = true
				}
				if n.Type != Switch || facesCA {
					jobs = append(jobs, job{n, p, "pkeys", []string{"pkeys", l, ps}})
				}
			}
			if o.QoS {
				jobs = append(jobs, job{n, p, "sl2vl", []string{"sl2vl", l, ps}},
					job{n, p, "vlarb", []string{"vlarb", l, ps}})
			}
		}
	}
	par := o.Parallel
	if par <= 0 {
		par = DefaultParallel
	}
	var mu sync.Mutex
	if br, ok := r.(BatchRunner); ok && len(jobs) > 0 {
		argsList := make([][]string, len(jobs))
		for i, j := range jobs {
			argsList[i] = j.args
		}
		res, err := br.RunBatch(ctx, "smpquery", argsList, par)
		if err != nil {
			return nil, fmt.Errorf("smpquery (%d calls in one batch): %w", len(jobs), err)
		}
		for i, j := range jobs {
			err := res[i].Err
			if err == nil {
				err = storeJob(j.node, j.port, j.what, j.args, res[i].Out, &mu)
			}
			if err != nil {
				portFailed(j.port, j.what, err, &mu)
			}
		}
		return f, nil
	}
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, par)
	)
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j job) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := runJob(ctx, r, j.node, j.port, j.what, j.args, &mu); err != nil {
				portFailed(j.port, j.what, err, &mu)
			}
		}(j)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f, nil
}

// portFailed records on the port that a read of it failed (under mu).
func portFailed(p *Port, what string, err error, mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
	msg := what + ": " + clip(err.Error())
	if p.Err == "" {
		p.Err = msg
	} else if !strings.Contains(p.Err, msg) {
		p.Err += "; " + msg
	}
}

// runJob runs one smpquery and stores what it read in the port (under mu).
func runJob(ctx context.Context, r Runner, n *Node, p *Port, what string, args []string, mu *sync.Mutex) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	out, err := r.Run(ctx, "smpquery", args...)
	if err != nil {
		return fmt.Errorf("%s port %d: smpquery %s: %w", n.Name(), p.Num, strings.Join(args, " "), err)
	}
	return storeJob(n, p, what, args, out, mu)
}

// storeJob parses one smpquery's output into the port (under mu).
func storeJob(n *Node, p *Port, what string, args []string, out []byte, mu *sync.Mutex) error {
	cmd := "smpquery " + strings.Join(args, " ")
	name := func(err error) error {
		if pe, ok := err.(*ParseError); ok {
			pe.Cmd, pe.Node, pe.Port = cmd, n.Name(), p.Num
			return pe
		}
		return err
	}
	switch what {
	case "portinfo":
		pi, err := ParsePortInfo(string(out))
		if err != nil {
			return name(err)
		}
		mu.Lock()
		p.Info = pi
		mu.Unlock()
	case "pkeys":
		keys, err := ParsePKeys(string(out))
		if err != nil {
			return name(err)
		}
		mu.Lock()
		p.PKeys = keys
		mu.Unlock()
	case "sl2vl":
		rows, err := ParseSL2VL(string(out))
		if err != nil {
			return name(err)
		}
		m := map[int][16]int{}
		for _, r := range rows {
			if n.Type == Switch && r.Out != p.Num {
				return name(&ParseError{Msg: fmt.Sprintf("a row for output port %d in the table of port %d", r.Out, p.Num)})
			}
			m[r.In] = r.VL
		}
		mu.Lock()
		p.SL2VL = m
		mu.Unlock()
	case "vlarb":
		va, err := ParseVLArb(string(out))
		if err != nil {
			return name(err)
		}
		mu.Lock()
		p.VLArb = va
		mu.Unlock()
	}
	return nil
}

// Describe renders the fabric as text, for logs and test failures.
func (f *Fabric) Describe() string {
	var b strings.Builder
	for _, n := range f.sortedNodes() {
		fmt.Fprintf(&b, "%s %s %q lid %d\n", n.Type, GUID(n.GUID), n.Desc, n.LID)
		ports := sortedKeys(n.Ports)
		for _, pn := range ports {
			p := n.Ports[pn]
			if p.Peer == nil {
				continue
			}
			peer := GUID(p.Peer.Node)
			if pn := f.Nodes[p.Peer.Node]; pn != nil {
				peer = pn.Name()
			}
			fmt.Fprintf(&b, "  [%d] -> %s[%d] %s%s", pn, peer, p.Peer.Port, p.Width, p.Speed)
			if p.Info != nil {
				fmt.Fprintf(&b, " %s/%s mtu %d", p.Info.State, p.Info.PhysState, p.Info.NeighborMTU)
			}
			if p.PKeys != nil {
				var ks []string
				for _, k := range p.PKeys {
					ks = append(ks, fmt.Sprintf("0x%04x", k))
				}
				sort.Strings(ks)
				fmt.Fprintf(&b, " pkeys %s", strings.Join(ks, ","))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
