// Package agent is the engine of `fabctl agent`: the same fabctl binary,
// on a host, running the requests of the agent protocol
// (drivers/host/agentproto) there. It reads, plans and applies the host's
// desired state locally with the host driver (Server.Serve), runs the
// traffic steps of fabctl validate (validate/traffic), re-applies a saved
// desired state at boot (Server.Reapply, ReapplyAll: --reapply) and
// watches its NICs for DCB drift (Watch: --watch). docs/agent.md
// describes it.
//
// agent is above the drivers: it may import the engine (apply, plan,
// validate/traffic), drivers and drivers/host, and the protocol package;
// no driver imports it. The command (internal/cli, agent_cmd.go) keeps
// only flags, views and exit codes.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/traffic"
)

// unsupportedReporter is the host driver's view of what Read found a
// host cannot do (drivers/host.Driver.Unsupported); the controller needs
// it to plan "not expressible" settings exactly as a local read would.
type unsupportedReporter interface {
	Unsupported(host string) map[string]string
}

// factsReporter is the host driver's view of what Read learned of the
// NICs' kernel drivers (drivers/host.Driver.Facts), which the
// controller's change list depends on.
type factsReporter interface {
	Facts(host string) map[string]string
}

// Server runs agent requests on this machine.
type Server struct {
	// NewDriver builds the host driver the agent works with.
	NewDriver drivers.Factory
	// Handshake identifies this agent in every response
	// (agentproto.Self).
	Handshake agentproto.Handshake
	// Progress receives a traffic step's progress lines as they happen
	// (a server side's ready line, traffic.ReadyLine); nil discards them.
	Progress io.Writer
}

// Handle decodes one request from in and serves it; a request that
// cannot be decoded is answered with a "request" error.
func (s *Server) Handle(ctx context.Context, in io.Reader) *agentproto.Response {
	req, err := agentproto.DecodeRequest(in)
	if err != nil {
		return &agentproto.Response{Protocol: agentproto.Protocol, Agent: s.Handshake,
			Errors: []agentproto.Error{{Kind: agentproto.KindRequest, Message: err.Error()}}}
	}
	return s.Serve(ctx, req)
}

// Serve runs one request on this machine (or in req.Netns) with the host
// driver NewDriver builds. It does not fail: errors are in the response,
// each with its kind.
func (s *Server) Serve(ctx context.Context, req *agentproto.Request) *agentproto.Response {
	if req.Build != "" && req.Build != s.Handshake.Build {
		// Another build's request: do nothing (the controller ships its
		// own binary and asks again).
		return &agentproto.Response{Protocol: agentproto.Protocol, Agent: s.Handshake, Op: req.Op,
			Errors: []agentproto.Error{{Kind: agentproto.KindBuild, Message: fmt.Sprintf("the request is from build %s, this agent is build %s", req.Build, s.Handshake.Build)}}}
	}
	if req.Op == agentproto.OpTraffic {
		return s.traffic(ctx, req)
	}
	resp := &agentproto.Response{Protocol: agentproto.Protocol, Agent: s.Handshake, Op: req.Op}
	if req.Host != nil {
		resp.Host = req.Host.Name
	}
	fail := func(k agentproto.ErrKind, format string, args ...any) *agentproto.Response {
		if ctx.Err() != nil && k != agentproto.KindPartial {
			k = agentproto.KindInterrupted
		}
		resp.Errors = append(resp.Errors, agentproto.Error{Kind: k, Message: fmt.Sprintf(format, args...)})
		return resp
	}
	if e := req.Check(); e != nil {
		resp.Errors = append(resp.Errors, *e)
		return resp
	}
	h := Local(req.Host, req.Netns)
	t := drivers.Target{Device: h.Device, Intent: h}
	drv := s.NewDriver()
	switch req.Op {
	case agentproto.OpRead:
		st, err := drv.Read(ctx, t)
		if err != nil {
			return fail(agentproto.KindRead, "%v", err)
		}
		resp.State = st
		if u, ok := drv.(unsupportedReporter); ok {
			resp.Unsupported = u.Unsupported(h.Name)
		}
		if f, ok := drv.(factsReporter); ok {
			resp.Facts = f.Facts(h.Name)
		}
		if r, ok := drv.(drivers.Reporter); ok {
			resp.Findings = r.Findings(t)
		}
	case agentproto.OpPlan:
		dp := planHost(ctx, drv, h)
		if err := setPlan(resp, dp); err != nil {
			return fail(agentproto.KindRead, "%v", err)
		}
		if dp.Error != "" {
			return fail(agentproto.KindRead, "%s", dp.Error)
		}
	case agentproto.OpApply:
		if len(req.Steps) > 0 {
			if req.Fingerprint != "" {
				// The staleness check of the controller's apply, here, just
				// before the transaction: the host's state must still be
				// the one the plan read.
				live, err := drv.Read(ctx, t)
				if err != nil {
					return fail(agentproto.KindRead, "%v", err)
				}
				if fp := live.Fingerprint(); fp != req.Fingerprint {
					resp.Fingerprint = fp
					return fail(agentproto.KindStale, "live state changed since the plan (fingerprint %.12s -> %.12s): nothing applied", req.Fingerprint, fp)
				}
			}
			res, err := drv.Apply(ctx, t, req.Steps, drivers.ApplyOptions{})
			var pe *drivers.PartialError
			switch {
			case errors.As(err, &pe):
				return fail(agentproto.KindPartial, "%v", err)
			case err != nil:
				return fail(agentproto.KindApply, "%v", err)
			}
			resp.Token = res.Token
			if req.ReadBack {
				// The controller's verifying read-back, in the same run; it
				// verifies this state as it would its own Read's. Without
				// it (the read failed) the controller reads back itself.
				if after, err := drv.Read(ctx, t); err != nil {
					resp.Warnings = append(resp.Warnings, "read-back after apply failed (the controller reads again): "+err.Error())
				} else {
					resp.State = after
				}
			}
		} else if r := converge(ctx, drv, h, t, resp); r != nil {
			return r
		}
		if req.SaveTo != "" {
			if err := Save(req.SaveTo, req); err != nil {
				resp.Warnings = append(resp.Warnings, "desired state not saved for re-apply at boot: "+err.Error())
			}
		}
	case agentproto.OpLinks:
		// The host driver's own link read of a local or netns host
		// (drivers/host links.go), here on the host itself.
		lr, ok := drv.(drivers.LinkReader)
		if !ok {
			return fail(agentproto.KindRead, "this agent's host driver does not read links")
		}
		dl, err := lr.ReadLinks(ctx, t)
		if err != nil {
			return fail(agentproto.KindRead, "%v", err)
		}
		b, err := json.Marshal(dl)
		if err != nil {
			return fail(agentproto.KindRead, "encoding the link report: %v", err)
		}
		resp.Links = b
	case agentproto.OpRollback:
		if err := drv.Rollback(ctx, t, drivers.Result{Token: req.Token}); err != nil {
			return fail(agentproto.KindRollback, "%v", err)
		}
	}
	resp.OK = true
	return resp
}

// traffic runs a traffic request of fabctl validate (a side of a test
// pair, or a counter read) on this host: the controller ran
// traffic.Runner, which sent it here because it reaches this host over
// SSH. A server side's ready line goes to Progress as soon as it
// listens.
func (s *Server) traffic(ctx context.Context, req *agentproto.Request) *agentproto.Response {
	resp := &agentproto.Response{Protocol: agentproto.Protocol, Agent: s.Handshake, Op: req.Op}
	if e := req.Check(); e != nil {
		resp.Errors = append(resp.Errors, *e)
		return resp
	}
	resp.Host = req.Host.Name
	sr, err := traffic.DecodeSideRequest(req.Traffic)
	if err != nil {
		resp.Errors = append(resp.Errors, agentproto.Error{Kind: agentproto.KindRequest, Message: err.Error()})
		return resp
	}
	progress := s.Progress
	if progress == nil {
		progress = io.Discard
	}
	res := traffic.ServeSide(ctx, sr, req.Netns, func(addr string) { fmt.Fprintln(progress, traffic.ReadyLine(addr)) })
	b, err := json.Marshal(res)
	if err != nil {
		resp.Errors = append(resp.Errors, agentproto.Error{Kind: agentproto.KindRead, Message: "encoding the traffic result: " + err.Error()})
		return resp
	}
	resp.OK, resp.Traffic = true, b
	return resp
}

// Local is the host intent as the agent works on it: reached on this
// machine, or inside network namespace netns on it.
func Local(in *intent.Host, netns string) *intent.Host {
	h := *in
	h.Connect = spec.Connect{Kind: "local"}
	if netns != "" {
		h.Connect = spec.Connect{Kind: "netns", Netns: netns}
	}
	h.Device.Driver = h.Connect.Kind
	return &h
}

// single is a registry holding one driver instance, so plan and apply
// on the agent use the driver that Read taught what the host lacks.
func single(drv drivers.Driver) *drivers.Registry {
	reg := drivers.NewRegistry()
	_ = reg.Register(drivers.For(intent.Device{Kind: intent.KindHost}), func() drivers.Driver { return drv })
	return reg
}

// planHost plans one host with the same planner the controller uses.
func planHost(ctx context.Context, drv drivers.Driver, h *intent.Host) *plan.DevicePlan {
	f := &intent.Fabric{Name: "agent", Hosts: []*intent.Host{h}}
	p := plan.Make(ctx, &spec.Spec{}, f, single(drv), plan.Options{Parallelism: 1})
	return p.Devices[0]
}

// converge is re-apply mode: plan, apply through the apply engine (one
// verified transaction), and report the device's outcome. It returns
// nil on success.
func converge(ctx context.Context, drv drivers.Driver, h *intent.Host, t drivers.Target, resp *agentproto.Response) *agentproto.Response {
	fail := func(k agentproto.ErrKind, msg string) *agentproto.Response {
		resp.Errors = append(resp.Errors, agentproto.Error{Kind: k, Message: msg})
		return resp
	}
	dp := planHost(ctx, drv, h)
	if err := setPlan(resp, dp); err != nil {
		return fail(agentproto.KindRead, err.Error())
	}
	if dp.Error != "" {
		return fail(agentproto.KindRead, dp.Error)
	}
	res, err := apply.Run(ctx, []apply.Device{{Plan: dp, Target: t}}, single(drv), apply.Options{Parallelism: 1})
	var dr *apply.DeviceResult
	if res != nil && len(res.Devices) == 1 {
		dr = res.Devices[0]
		if dr != nil {
			b, err := encode(dr)
			if err != nil {
				return fail(agentproto.KindApply, "encoding the apply result: "+err.Error())
			}
			resp.Result = b
		}
	}
	switch {
	case dr == nil && err != nil:
		return fail(agentproto.KindApply, err.Error())
	case dr == nil:
		return fail(agentproto.KindApply, "the apply engine returned no result")
	case dr.Status == apply.StatusApplied || dr.Status == apply.StatusUnchanged:
		return nil
	case dr.NotRestored():
		return fail(agentproto.KindPartial, dr.Error)
	case len(dr.Remaining) > 0:
		return fail(agentproto.KindVerify, fmt.Sprintf("%s; %d setting(s) still differ after apply", dr.Error, len(dr.Remaining)))
	}
	return fail(agentproto.KindApply, dr.Error)
}

// setPlan puts a device plan in a response.
func setPlan(resp *agentproto.Response, dp *plan.DevicePlan) error {
	b, err := encode(dp)
	if err != nil {
		return fmt.Errorf("encoding the plan: %w", err)
	}
	resp.Plan = b
	return nil
}

// encode is v as JSON the way a field of the response would be encoded
// (the command writes responses without HTML escaping; an encoder that
// escapes escapes raw JSON too), so a response reads the same as when
// the plan and result were typed fields.
func encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Plan is the device plan of a response (plan; apply in re-apply mode),
// nil when it has none.
func Plan(r *agentproto.Response) (*plan.DevicePlan, error) {
	if len(r.Plan) == 0 {
		return nil, nil
	}
	var dp plan.DevicePlan
	if err := json.Unmarshal(r.Plan, &dp); err != nil {
		return nil, fmt.Errorf("the agent's plan: %w", err)
	}
	return &dp, nil
}

// Result is the verified outcome of a response (apply in re-apply
// mode), nil when it has none.
func Result(r *agentproto.Response) (*apply.DeviceResult, error) {
	if len(r.Result) == 0 {
		return nil, nil
	}
	var dr apply.DeviceResult
	if err := json.Unmarshal(r.Result, &dr); err != nil {
		return nil, fmt.Errorf("the agent's result: %w", err)
	}
	return &dr, nil
}

// Save writes the desired state of req (as a stepless apply) to
// dir/<host>.json atomically, and points dir/fabctl at this binary so a
// boot unit has a stable path to run (ExecStart=DIR/fabctl agent
// --reapply DIR).
func Save(dir string, req *agentproto.Request) error {
	name := req.Host.Name
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("host name %q cannot be a file name", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	saved := agentproto.Request{Protocol: agentproto.Protocol, Op: agentproto.OpApply, Host: req.Host, Netns: req.Netns}
	b, err := json.MarshalIndent(saved, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(filepath.Join(dir, agentproto.SavedName(name)), append(b, '\n'), 0o600, safefile.Agent); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	link := filepath.Join(dir, "fabctl")
	if cur, err := os.Readlink(link); err == nil && cur == exe {
		return nil
	}
	tmp := link + ".tmp-" + fmt.Sprint(os.Getpid())
	_ = os.Remove(tmp)
	if err := os.Symlink(exe, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// SavedFiles lists the saved desired states at path: the file itself, or
// every *.json in a directory, sorted.
func SavedFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no saved desired state (*.json): apply to this host over SSH first", path)
	}
	return files, nil
}

// LoadSaved reads one saved desired state (a stepless "apply" request).
func LoadSaved(file string) (*agentproto.Request, error) {
	f, err := safefile.Open(file, safefile.Agent)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	req, err := agentproto.DecodeRequest(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if e := req.Check(); e != nil {
		return nil, fmt.Errorf("%s: %s", file, e.Message)
	}
	if req.Op != agentproto.OpApply || len(req.Steps) > 0 || req.SaveTo != "" {
		return nil, fmt.Errorf(`%s: a saved desired state is an "apply" request without steps or save_to`, file)
	}
	return req, nil
}

// Reapply re-applies one saved desired state (file): a stepless apply,
// verified by read-back.
func (s *Server) Reapply(ctx context.Context, file string) *agentproto.Response {
	req, err := LoadSaved(file)
	if err != nil {
		return &agentproto.Response{Protocol: agentproto.Protocol, Agent: s.Handshake, Op: agentproto.OpApply,
			Errors: []agentproto.Error{{Kind: agentproto.KindRequest, Message: err.Error()}}}
	}
	return s.Serve(ctx, req)
}

// ReapplyAll re-applies every saved desired state at path (a file, or a
// directory of them; SavedFiles), in order, calling each (when not nil)
// as each one is done. The error says that path holds none; a host that
// failed is a response that is not OK.
func (s *Server) ReapplyAll(ctx context.Context, path string, each func(file string, r *agentproto.Response)) ([]*agentproto.Response, error) {
	files, err := SavedFiles(path)
	if err != nil {
		return nil, err
	}
	out := make([]*agentproto.Response, 0, len(files))
	for _, file := range files {
		r := s.Reapply(ctx, file)
		out = append(out, r)
		if each != nil {
			each(file, r)
		}
	}
	return out, nil
}
