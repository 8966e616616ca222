package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// unsupportedReporter is the host driver's view of what Read found a
// host cannot do (drivers/host.Driver.Unsupported); the controller needs
// it to plan "not expressible" settings exactly as a local read would.
type unsupportedReporter interface {
	Unsupported(host string) map[string]string
}

// Serve runs one request on this machine (or in req.Netns) with the host
// driver newDriver builds. It does not fail: errors are in the response,
// each with its kind.
func Serve(ctx context.Context, newDriver drivers.Factory, req *Request, hs Handshake) *Response {
	resp := &Response{Protocol: Protocol, Agent: hs, Op: req.Op}
	if req.Host != nil {
		resp.Host = req.Host.Name
	}
	fail := func(k ErrKind, format string, args ...any) *Response {
		if ctx.Err() != nil && k != KindPartial {
			k = KindInterrupted
		}
		resp.Errors = append(resp.Errors, Error{Kind: k, Message: fmt.Sprintf(format, args...)})
		return resp
	}
	if e := req.Check(); e != nil {
		resp.Errors = append(resp.Errors, *e)
		return resp
	}
	h := Local(req.Host, req.Netns)
	t := drivers.Target{Device: h.Device, Intent: h}
	drv := newDriver()
	switch req.Op {
	case OpRead:
		st, err := drv.Read(ctx, t)
		if err != nil {
			return fail(KindRead, "%v", err)
		}
		resp.State = st
		if u, ok := drv.(unsupportedReporter); ok {
			resp.Unsupported = u.Unsupported(h.Name)
		}
		if r, ok := drv.(drivers.Reporter); ok {
			resp.Findings = r.Findings(t)
		}
	case OpPlan:
		dp := planHost(ctx, drv, h)
		resp.Plan = dp
		if dp.Error != "" {
			return fail(KindRead, "%s", dp.Error)
		}
	case OpApply:
		if len(req.Steps) > 0 {
			res, err := drv.Apply(ctx, t, req.Steps, drivers.ApplyOptions{})
			var pe *drivers.PartialError
			switch {
			case errors.As(err, &pe):
				return fail(KindPartial, "%v", err)
			case err != nil:
				return fail(KindApply, "%v", err)
			}
			resp.Token = res.Token
		} else if r := converge(ctx, drv, h, t, resp); r != nil {
			return r
		}
		if req.SaveTo != "" {
			if err := Save(req.SaveTo, req); err != nil {
				resp.Warnings = append(resp.Warnings, "desired state not saved for re-apply at boot: "+err.Error())
			}
		}
	case OpRollback:
		if err := drv.Rollback(ctx, t, drivers.Result{Token: req.Token}); err != nil {
			return fail(KindRollback, "%v", err)
		}
	case OpTraffic:
		// fabctl agent's command runs these with validate/traffic, which
		// this package does not depend on.
		return fail(KindRequest, "traffic requests are run by the fabctl agent command, not by agent.Serve")
	}
	resp.OK = true
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
func converge(ctx context.Context, drv drivers.Driver, h *intent.Host, t drivers.Target, resp *Response) *Response {
	dp := planHost(ctx, drv, h)
	resp.Plan = dp
	if dp.Error != "" {
		resp.Errors = append(resp.Errors, Error{Kind: KindRead, Message: dp.Error})
		return resp
	}
	res, err := apply.Run(ctx, []apply.Device{{Plan: dp, Target: t}}, single(drv), apply.Options{Parallelism: 1})
	if res != nil && len(res.Devices) == 1 {
		resp.Result = res.Devices[0]
	}
	dr := resp.Result
	switch {
	case dr == nil && err != nil:
		resp.Errors = append(resp.Errors, Error{Kind: KindApply, Message: err.Error()})
	case dr == nil:
		resp.Errors = append(resp.Errors, Error{Kind: KindApply, Message: "the apply engine returned no result"})
	case dr.Status == apply.StatusApplied || dr.Status == apply.StatusUnchanged:
		return nil
	case dr.NotRestored():
		resp.Errors = append(resp.Errors, Error{Kind: KindPartial, Message: dr.Error})
	case len(dr.Remaining) > 0:
		resp.Errors = append(resp.Errors, Error{Kind: KindVerify, Message: fmt.Sprintf("%s; %d setting(s) still differ after apply", dr.Error, len(dr.Remaining))})
	default:
		resp.Errors = append(resp.Errors, Error{Kind: KindApply, Message: dr.Error})
	}
	return resp
}

// SavedName is the file a host's desired state is saved in.
func SavedName(host string) string { return host + ".json" }

// Save writes the desired state of req (as a stepless apply) to
// dir/<host>.json atomically, and points dir/fabctl at this binary so a
// boot unit has a stable path to run (ExecStart=DIR/fabctl agent
// --reapply DIR).
func Save(dir string, req *Request) error {
	name := req.Host.Name
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("host name %q cannot be a file name", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	saved := Request{Protocol: Protocol, Op: OpApply, Host: req.Host, Netns: req.Netns}
	b, err := json.MarshalIndent(saved, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, SavedName(name)), append(b, '\n'), 0o600); err != nil {
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

func writeAtomic(path string, b []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if err := f.Chmod(mode); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
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
func LoadSaved(file string) (*Request, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	req, err := DecodeRequest(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if e := req.Check(); e != nil {
		return nil, fmt.Errorf("%s: %s", file, e.Message)
	}
	if req.Op != OpApply || len(req.Steps) > 0 || req.SaveTo != "" {
		return nil, fmt.Errorf(`%s: a saved desired state is an "apply" request without steps or save_to`, file)
	}
	return req, nil
}

// Reapply re-applies one saved desired state (file): a stepless apply,
// verified by read-back.
func Reapply(ctx context.Context, newDriver drivers.Factory, file string, hs Handshake) *Response {
	req, err := LoadSaved(file)
	if err != nil {
		return &Response{Protocol: Protocol, Agent: hs, Op: OpApply, Errors: []Error{{Kind: KindRequest, Message: err.Error()}}}
	}
	return Serve(ctx, newDriver, req, hs)
}
